/**
 * The scan's findings: what is wrong with what the server accepts, each with the RFCs and
 * guidelines it rests on, most severe first. The catalogue (code, severity, meaning, references)
 * is docs/tls-scan.md's "Findings"; grade.ts reads these codes, so the grade follows from them.
 */
import type { ScannedSuite, TlsScanFinding } from '../features/tls-scan/tls-scan.schema.js';
import {
  classRank,
  hasForwardSecrecy,
  isAnonymous,
  isCbc,
  listNames,
  offeredProtocols,
  protocolLabel,
  type ScanFacts,
  suitesIn,
} from './facts.js';
import { NCSC_VERSION } from './ncsc.js';

type Severity = TlsScanFinding['severity'];
const NCSC = `NCSC-NL TLS guidelines ${NCSC_VERSION}`;

/** Every code the scan can report, its usual severity and references (dhe_weak's severity varies). */
export const FINDING_CATALOGUE = {
  sslv2_offered: { severity: 'critical', references: ['RFC 6176', 'CVE-2016-0800', `${NCSC} §3.3.1`] },
  export_suites: {
    severity: 'critical',
    references: ['RFC 4346 §A.5', 'CVE-2015-0204', 'CVE-2015-4000', `${NCSC} §3.3.4`],
  },
  null_suites: { severity: 'critical', references: ['RFC 5246 §A.5', `${NCSC} §3.3.4`] },
  anonymous_suites: { severity: 'critical', references: ['RFC 5246 §A.5', `${NCSC} §3.3.2`] },
  ocsp_revoked: { severity: 'critical', references: ['RFC 6960 §2.2', 'RFC 6066 §8'] },
  certificate_expired: { severity: 'critical', references: ['RFC 5280 §4.1.2.5'] },
  certificate_untrusted: { severity: 'critical', references: ['RFC 5280 §6', 'RFC 6125'] },
  sslv3_offered: { severity: 'high', references: ['RFC 7568', 'CVE-2014-3566', `${NCSC} §3.3.1`] },
  rc4_suites: { severity: 'high', references: ['RFC 7465', `${NCSC} §3.3.4`] },
  weak_encryption_suites: { severity: 'high', references: ['RFC 5469', 'RFC 9325 §4.1', `${NCSC} §3.3.4`] },
  dhe_weak: { severity: 'medium', references: ['RFC 7919', 'CVE-2015-4000', `${NCSC} §3.3.3`] },
  compression: { severity: 'high', references: ['CVE-2012-4929', 'RFC 7457 §2.6', `${NCSC} §3.4.1`] },
  no_secure_renegotiation: { severity: 'high', references: ['RFC 5746', 'CVE-2009-3555', `${NCSC} §3.4.2`] },
  ocsp_invalid: { severity: 'high', references: ['RFC 6960 §3.2', 'RFC 6066 §8', `${NCSC} §3.4.5`] },
  tls10_offered: { severity: 'medium', references: ['RFC 8996', `${NCSC} §3.3.1`] },
  tls11_offered: { severity: 'medium', references: ['RFC 8996', `${NCSC} §3.3.1`] },
  '3des_suites': { severity: 'medium', references: ['CVE-2016-2183', 'RFC 9325 §4.1', `${NCSC} §3.3.4`] },
  no_forward_secrecy_suites: { severity: 'medium', references: ['RFC 9325 §4.1', `${NCSC} §3.3.3`] },
  ocsp_unknown: { severity: 'low', references: ['RFC 6960 §2.2'] },
  no_server_preference: { severity: 'low', references: ['RFC 9325 §4.2', `${NCSC} §3`] },
  cbc_in_tls12: { severity: 'low', references: ['CVE-2013-0169', 'RFC 7366', `${NCSC} appendix B`] },
  no_fallback_scsv: { severity: 'low', references: ['RFC 7507'] },
  no_extended_master_secret: { severity: 'low', references: ['RFC 7627', `${NCSC} §4.1`] },
  no_tls13: { severity: 'low', references: ['RFC 8446', 'RFC 9325 §3.1.1', `${NCSC} §3.3.1`] },
  heartbeat: { severity: 'info', references: ['RFC 6520', 'CVE-2014-0160'] },
  scan_incomplete: { severity: 'info', references: [] },
} as const satisfies Record<string, { severity: Severity; references: readonly string[] }>;

export type FindingCode = keyof typeof FINDING_CATALOGUE;

const SEVERITY_RANK: Record<Severity, number> = { critical: 0, high: 1, medium: 2, low: 3, info: 4 };
const CODE_ORDER = Object.keys(FINDING_CATALOGUE) as FindingCode[];

/** Suites matching `pick`, named once each however many protocols accept them. */
function suiteNames(suites: readonly ScannedSuite[], pick: (s: ScannedSuite) => boolean): string[] {
  return [...new Set(suites.filter(pick).map((s) => s.name))];
}

function suiteFindings(
  facts: ScanFacts,
  add: (code: FindingCode, message: string, severity?: Severity) => void,
) {
  const all = facts.cipher_suites;
  const check = (code: FindingCode, pick: (s: ScannedSuite) => boolean, say: (names: string) => string) => {
    const names = suiteNames(all, pick);
    if (names.length > 0) add(code, say(listNames(names)));
  };
  check(
    'export_suites',
    (s) => s.export,
    (n) => `Export-grade suites are accepted (${n}): keys an attacker can break (FREAK, Logjam).`,
  );
  check(
    'null_suites',
    (s) => s.encryption === 'NULL',
    (n) => `Suites without encryption are accepted (${n}).`,
  );
  check(
    'anonymous_suites',
    (s) => isAnonymous(s) && s.encryption !== 'NULL',
    (n) =>
      `Anonymous suites are accepted (${n}): no certificate, so anyone in the path can impersonate the server.`,
  );
  check(
    'rc4_suites',
    (s) => s.encryption === 'RC4' && !s.export,
    (n) => `RC4 suites are accepted (${n}); RFC 7465 forbids them.`,
  );
  check(
    'weak_encryption_suites',
    (s) => s.bits > 0 && s.bits < 112 && !s.export && s.encryption !== 'RC4',
    (n) => `Suites with less than 112-bit encryption are accepted (${n}).`,
  );
  check(
    '3des_suites',
    (s) => s.encryption === '3DES',
    (n) => `3DES suites are accepted (${n}): a 64-bit block cipher open to SWEET32.`,
  );
  check(
    'no_forward_secrecy_suites',
    (s) => !hasForwardSecrecy(s.key_exchange) && s.encryption !== 'NULL',
    (n) => `Suites without forward secrecy are accepted (${n}): a stolen key decrypts recorded traffic.`,
  );
  const cbc12 = suiteNames(suitesIn(facts, 'TLSv1.2'), (s) => isCbc(s));
  if (cbc12.length > 0) {
    add(
      'cbc_in_tls12',
      `TLS 1.2 accepts CBC suites (${listNames(cbc12)}); AEAD suites avoid padding-oracle attacks.`,
    );
  }
}

function protocolFindings(facts: ScanFacts, add: (code: FindingCode, message: string) => void) {
  const offered = offeredProtocols(facts);
  if (offered.includes('SSLv2'))
    add('sslv2_offered', 'SSLv2 is offered: broken, and lets DROWN attack the same key elsewhere.');
  if (offered.includes('SSLv3'))
    add('sslv3_offered', 'SSLv3 is offered: broken (POODLE) and prohibited by RFC 7568.');
  if (offered.includes('TLSv1')) add('tls10_offered', 'TLS 1.0 is offered; RFC 8996 deprecates it.');
  if (offered.includes('TLSv1.1')) add('tls11_offered', 'TLS 1.1 is offered; RFC 8996 deprecates it.');
  if (offered.length > 0 && !offered.includes('TLSv1.3')) add('no_tls13', 'TLS 1.3 is not offered.');

  // Order matters only where a client could be steered to a phase-out or insufficient suite
  // while the server has better (internet.nl: not applicable among good and sufficient ones).
  // false means the client's order won; PrioritizeChaCha is chacha20_preference, never this.
  const loose = offered.filter((p) => {
    if (facts.server_preference[p] !== false) return false;
    const ranks = suitesIn(facts, p).map((s) => classRank(s.ncsc));
    return Math.max(...ranks) >= classRank('phase_out') && Math.min(...ranks) < Math.max(...ranks);
  });
  if (loose.length > 0) {
    add(
      'no_server_preference',
      `The server lets the client choose among suites of different strength in ${listNames(loose.map(protocolLabel))}.`,
    );
  }
}

function featureFindings(
  facts: ScanFacts,
  add: (code: FindingCode, message: string, severity?: Severity) => void,
) {
  const f = facts.features;
  if (facts.dhe && facts.dhe.bits < 2048) {
    const severe = facts.dhe.bits < 1024;
    add(
      'dhe_weak',
      `DHE suites get a ${facts.dhe.bits}-bit group${severe ? ', breakable today (Logjam)' : ''}; use 2048 bits or more, or ECDHE.`,
      severe ? 'high' : 'medium',
    );
  }
  if (f.compression === true) add('compression', 'TLS compression is accepted: CRIME can recover cookies.');
  if (f.secure_renegotiation === false) {
    add(
      'no_secure_renegotiation',
      'Secure renegotiation (RFC 5746) is not supported: renegotiation can splice in an attacker.',
    );
  }
  if (f.fallback_scsv === false) {
    add('no_fallback_scsv', 'TLS_FALLBACK_SCSV is not honoured: a downgraded retry is accepted.');
  }
  if (f.extended_master_secret === false) {
    add('no_extended_master_secret', 'The extended master secret (RFC 7627) is not supported in TLS 1.2.');
  }
  if (f.heartbeat === true) {
    add('heartbeat', 'The heartbeat extension is advertised (not tested for Heartbleed; rarely needed).');
  }
}

function certificateFindings(facts: ScanFacts, add: (code: FindingCode, message: string) => void) {
  const o = facts.ocsp_stapling;
  if (o.status === 'revoked') {
    add(
      'ocsp_revoked',
      `The stapled OCSP response says the certificate is revoked${o.reason ? ` (${o.reason})` : ''}.`,
    );
  } else if (o.status === 'invalid') {
    add('ocsp_invalid', `The stapled OCSP response cannot be trusted${o.reason ? `: ${o.reason}` : ''}.`);
  } else if (o.status === 'unknown') {
    add('ocsp_unknown', 'The stapled OCSP response says the responder does not know the certificate.');
  }
  for (const c of facts.certificates.filter((x) => x.verdict.status === 'rejected')) {
    const expired = c.leaf.expired || c.findings.some((f) => f.code === 'expired');
    add(
      expired ? 'certificate_expired' : 'certificate_untrusted',
      `The ${c.key_type} certificate (${c.leaf.subject}) is ${expired ? 'expired' : 'not trusted'}: ${c.verdict.summary}`,
    );
  }
}

/** Everything the scan found wrong, most severe first (ties in catalogue order). */
export function scanFindings(facts: ScanFacts): TlsScanFinding[] {
  const found: TlsScanFinding[] = [];
  const add = (code: FindingCode, message: string, severity?: Severity) => {
    const rule = FINDING_CATALOGUE[code];
    found.push({ code, severity: severity ?? rule.severity, message, references: [...rule.references] });
  };
  protocolFindings(facts, add);
  suiteFindings(facts, add);
  featureFindings(facts, add);
  certificateFindings(facts, add);
  if (!facts.complete) {
    add(
      'scan_incomplete',
      `The scan ended early; what it could not tell: ${facts.notes.join(' ') || 'see notes'}.`,
    );
  }
  const rank = (f: TlsScanFinding) =>
    SEVERITY_RANK[f.severity] * 100 + CODE_ORDER.indexOf(f.code as FindingCode);
  return found.sort((a, b) => rank(a) - rank(b));
}
