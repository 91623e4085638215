/**
 * The NCSC-NL TLS guidelines ("ICT-beveiligingsrichtlijnen voor TLS", version 2025-05) as
 * internet.nl applies them: good, sufficient, phase out or insufficient per protocol, suite,
 * key-exchange group and DHE group (docs/tls-scan.md, "NCSC-NL classification").
 *
 * The suite rules are stated by property (key exchange, authentication, bulk cipher and mode,
 * MAC hash) rather than as name lists so that every one of the ~400 suites the scan can meet
 * gets a class; test/unit/tls-scan/ncsc.test.ts checks them against internet.nl's own lists
 * (checks/tasks/tls/tls_constants.py), which mark whatever they do not list insufficient.
 */

import type { NcscClass, Ratings, ScannedSuite, ScanProtocol } from '../features/tls-scan/tls-scan.schema.js';
import type { CipherSuite } from './cipher-suites.js';
import { cipherSuite } from './cipher-suites.js';
import {
  listNames,
  offeredProtocols,
  protocolLabel,
  type ScanFacts,
  suiteHash,
  suitesIn,
  worstClass,
} from './facts.js';

export const NCSC_VERSION = '2025-05';
const G = `NCSC-NL TLS guidelines ${NCSC_VERSION}`;

/** §3.3.1: TLS 1.3 good, TLS 1.2 sufficient, everything older insufficient (2.1 had 1.0/1.1 as phase out). */
export function ncscProtocolClass(name: string): NcscClass {
  if (name === 'TLSv1.3') return 'good';
  if (name === 'TLSv1.2') return 'sufficient';
  return 'insufficient';
}

/** §3.3.3: hybrid ML-KEM groups good, the named curves sufficient, RFC 7919 groups of 3072+ bits phase out. */
const GROUP_CLASS: Record<string, NcscClass> = {
  X25519MLKEM768: 'good',
  SecP256r1MLKEM768: 'good',
  SecP384r1MLKEM1024: 'good',
  x25519: 'sufficient',
  x448: 'sufficient',
  secp256r1: 'sufficient',
  secp384r1: 'sufficient',
  secp521r1: 'sufficient',
  ffdhe3072: 'phase_out',
  ffdhe4096: 'phase_out',
  ffdhe6144: 'phase_out',
  ffdhe8192: 'phase_out',
  ffdhe2048: 'insufficient',
};

/** Any group the guideline does not name (secp224r1 aside, which no scan offers) is insufficient. */
export function ncscGroupClass(groupName: string): NcscClass {
  return GROUP_CLASS[groupName] ?? 'insufficient';
}

/**
 * §3.3.3: a DHE group is phase out when it is one of RFC 7919's ffdhe3072-8192, insufficient
 * otherwise (ffdhe2048 and every self-generated group). `standardGroup` says whether the prime
 * is an RFC 7919 one; unknown (undefined), the size alone decides, which rates a self-generated
 * prime of 3072+ bits phase out where internet.nl, comparing primes, says insufficient.
 */
export function ncscDheClass(bits: number, standardGroup?: boolean): NcscClass {
  if (standardGroup === false) return 'insufficient';
  return bits >= 3072 ? 'phase_out' : 'insufficient';
}

/** What the suite rules read; a CipherSuite row fits, and so does a scanned suite (traitsOf). */
export type NcscSuiteTraits = Pick<CipherSuite, 'name' | 'keyExchange' | 'authentication' | 'encryption'> &
  Partial<Pick<CipherSuite, 'export' | 'iana'>>;

export interface SuiteVerdict {
  class: NcscClass;
  /** Why, in a few words. */
  why: string;
  /** The guideline's section the rule rests on, e.g. "§3.3.3" or "appendix B". */
  section: string;
}

const TLS13_GOOD = new Set(['TLS_AES_256_GCM_SHA384', 'TLS_CHACHA20_POLY1305_SHA256']);
const TLS13_SUFFICIENT = new Set(['TLS_AES_128_GCM_SHA256', 'TLS_AES_128_CCM_SHA256']);
/** Appendix B's TLS 1.2 AEAD ciphers with ECDHE: sufficient. */
const AEAD_SUFFICIENT = new Set(['AESGCM', 'ChaCha20', 'AESCCM']);
/** Appendix B's other AEAD ciphers: phase out. */
const AEAD_PHASE_OUT = new Set(['CamelliaGCM', 'ARIAGCM']);
/** Appendix B's CBC ciphers, only with a SHA-2 MAC: phase out. */
const CBC_PHASE_OUT = new Set(['AES', 'Camellia', 'ARIA']);

const BULK_WHY: Record<string, string> = {
  RC4: 'RC4',
  '3DES': '3DES, a 64-bit block cipher',
  DES: 'single DES',
  AESCCM8: 'AES-CCM with an 8-byte tag',
  NULL: 'no encryption',
};

/** The class of `suite` negotiated in `protocol`, and why. */
export function ncscSuiteVerdict(suite: NcscSuiteTraits, protocol: ScanProtocol): SuiteVerdict {
  const bad = (why: string, section: string): SuiteVerdict => ({ class: 'insufficient', why, section });
  if (protocol === 'SSLv2') return bad('an SSLv2 cipher spec', '§3.3.1');
  if (suite.keyExchange === 'any') {
    if (TLS13_GOOD.has(suite.name))
      return { class: 'good', why: 'TLS 1.3 AEAD, 256-bit', section: 'appendix B' };
    if (TLS13_SUFFICIENT.has(suite.name)) {
      return { class: 'sufficient', why: 'TLS 1.3 AEAD, 128-bit', section: 'appendix B' };
    }
    return bad(BULK_WHY[suite.encryption] ?? 'not listed', 'appendix B');
  }
  if (suite.iana === false) return bad('not a registered suite', 'appendix B');
  if (suite.encryption === 'NULL') return bad('no encryption', '§3.3.4');
  if (suite.authentication === 'none') return bad('anonymous, no authentication', '§3.3.2');
  if (suite.export === true) return bad('export grade', '§3.3.4');
  const kx = suite.keyExchange;
  if (kx !== 'ECDHE' && kx !== 'DHE') {
    if (kx === 'RSA') return bad('RSA key exchange, no forward secrecy', '§3.3.3');
    if (kx === 'DH' || kx === 'ECDH') return bad('static (EC)DH key exchange, no forward secrecy', '§3.3.3');
    return bad(`${kx} key exchange`, '§3.3.3');
  }
  // ECDHE with an RSA or ECDSA certificate, DHE with an RSA one: nothing else is listed.
  if (suite.authentication !== 'RSA' && (kx === 'DHE' || suite.authentication !== 'ECDSA')) {
    return bad(`${kx} with ${suite.authentication} authentication`, '§3.3.2');
  }
  const enc = suite.encryption;
  const hash = suiteHash(suite.name);
  const cbcSha2 = CBC_PHASE_OUT.has(enc) && (hash === 'SHA256' || hash === 'SHA384');
  if (!AEAD_SUFFICIENT.has(enc) && !AEAD_PHASE_OUT.has(enc) && !cbcSha2) {
    const known = BULK_WHY[enc];
    if (known) return bad(known, '§3.3.4');
    if (CBC_PHASE_OUT.has(enc))
      return bad(`CBC with a ${hash === 'SHA' ? 'SHA-1' : (hash ?? 'weak')} MAC`, '§3.3.5');
    return bad(`${enc} is not listed`, '§3.3.4');
  }
  if (kx === 'ECDHE' && AEAD_SUFFICIENT.has(enc)) {
    return { class: 'sufficient', why: 'ECDHE with AEAD', section: 'appendix B' };
  }
  const weaker = [
    ...(kx === 'DHE' ? ['DHE key exchange'] : []),
    ...(cbcSha2 ? ['CBC mode'] : []),
    ...(/Camellia|ARIA/.test(enc) ? [enc.replace('GCM', '')] : []),
  ];
  return { class: 'phase_out', why: weaker.join(', '), section: 'appendix B' };
}

export function ncscSuiteClass(suite: NcscSuiteTraits, protocol: ScanProtocol): NcscClass {
  return ncscSuiteVerdict(suite, protocol).class;
}

/** A scanned suite as the suite rules read it. */
function traitsOf(s: ScannedSuite): NcscSuiteTraits {
  const row = s.protocol === 'SSLv2' ? undefined : cipherSuite(Number.parseInt(s.code, 16));
  return {
    name: s.name,
    keyExchange: s.key_exchange,
    authentication: s.authentication,
    encryption: s.encryption,
    export: s.export,
    iana: row?.iana ?? false,
  };
}

const LABEL: Record<NcscClass, string> = {
  good: 'good',
  sufficient: 'sufficient',
  phase_out: 'phase out',
  insufficient: 'insufficient',
};

interface Judged {
  class: NcscClass;
  reason: string;
}

/** Everything rated under one protocol: the protocol, its suites, its groups, DHE, compression, renegotiation. */
function judgeProtocol(facts: ScanFacts, protocol: ScanProtocol): Judged[] {
  const p = protocolLabel(protocol);
  const out: Judged[] = [];
  const own = ncscProtocolClass(protocol);
  out.push({ class: own, reason: `${p} is ${LABEL[own]} (${G} §3.3.1)` });

  // Suites grouped by class and cause, so sixty suites make a handful of reasons.
  const byCause = new Map<string, { class: NcscClass; why: string; names: string[] }>();
  const suites = suitesIn(facts, protocol);
  for (const s of suites) {
    const v = ncscSuiteVerdict(traitsOf(s), protocol);
    // The answer's class rules; the cause is shown only when the rules here agree with it.
    const why = v.class === s.ncsc ? `${v.why} (${G} ${v.section})` : `per ${G} appendix B`;
    const key = `${s.ncsc}|${why}`;
    const entry = byCause.get(key) ?? { class: s.ncsc, why, names: [] };
    entry.names.push(s.name);
    byCause.set(key, entry);
  }
  for (const e of byCause.values()) {
    const verb = e.names.length === 1 ? 'is' : 'are';
    out.push({ class: e.class, reason: `${p}: ${listNames(e.names)} ${verb} ${LABEL[e.class]}: ${e.why}` });
  }
  for (const g of facts.groups.filter((x) => x.protocol === protocol)) {
    out.push({ class: g.ncsc, reason: `${p}: group ${g.name} is ${LABEL[g.ncsc]} (${G} §3.3.3)` });
  }
  if (facts.dhe && suites.some((s) => s.key_exchange.startsWith('DHE'))) {
    const d = facts.dhe;
    out.push({
      class: d.ncsc,
      reason: `${p}: DHE with a ${d.bits}-bit group is ${LABEL[d.ncsc]} (${G} §3.3.3)`,
    });
  }
  if (protocol !== 'TLSv1.3' && protocol !== 'SSLv2') {
    if (facts.features.compression === true) {
      out.push({ class: 'insufficient', reason: `${p}: TLS compression is insufficient (${G} §3.4.1)` });
    }
    if (facts.features.secure_renegotiation === false) {
      out.push({
        class: 'insufficient',
        reason: `${p}: renegotiation without RFC 5746 is insufficient (${G} §3.4.2)`,
      });
    }
  }
  return out;
}

/**
 * The server's NCSC-NL standing: each offered protocol rated by the worst of itself and what it
 * accepts, the overall class the worst of those, and the reasons behind every class below good.
 */
export function rateNcsc(facts: ScanFacts): Ratings['ncsc'] {
  const offered = offeredProtocols(facts);
  if (offered.length === 0) {
    return {
      version: NCSC_VERSION,
      overall: 'insufficient',
      protocols: [],
      reasons: ['No protocol was offered.'],
    };
  }
  // Newest first, as the answer lists suites.
  const judged = [...offered].reverse().map((name) => ({ name, items: judgeProtocol(facts, name) }));
  // Each version's own class (what a protocol list shows beside it); what it carries (suites,
  // groups, DHE) counts in the overall class and the reasons, not in the version's.
  const protocols = judged.map(({ name }) => ({ name, class: ncscProtocolClass(name) }));
  const reasons = judged.flatMap(({ items }) => items.filter((i) => i.class !== 'good').map((i) => i.reason));
  return {
    version: NCSC_VERSION,
    overall: worstClass(judged.flatMap(({ items }) => items.map((i) => i.class))),
    protocols,
    reasons,
  };
}
