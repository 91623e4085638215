/**
 * What the judging layer (ncsc.ts, mozilla.ts, scan-findings.ts, grade.ts) reads: the scan's
 * answer before it is judged, and the few suite properties every judge asks about. Pure; the
 * judges read only these facts, so a rating can be reproduced from the published answer alone.
 */
import type { NcscClass, ScannedSuite, ScanProtocol, TlsScan } from '../features/tls-scan/tls-scan.schema.js';

/** The scan's answer without the verdicts computed from it. */
export type ScanFacts = Omit<TlsScan, 'findings' | 'grade' | 'ratings'>;

/** Oldest first: the order protocol lists are reported in. */
export const PROTOCOL_ORDER: readonly ScanProtocol[] = [
  'SSLv2',
  'SSLv3',
  'TLSv1',
  'TLSv1.1',
  'TLSv1.2',
  'TLSv1.3',
];

export function offeredProtocols(facts: Pick<ScanFacts, 'protocols'>): ScanProtocol[] {
  const offered = new Set(facts.protocols.filter((p) => p.offered).map((p) => p.name));
  return PROTOCOL_ORDER.filter((p) => offered.has(p));
}

/** The suites accepted in `protocol`, in the reported order. */
export function suitesIn(facts: Pick<ScanFacts, 'cipher_suites'>, protocol: ScanProtocol): ScannedSuite[] {
  return facts.cipher_suites.filter((s) => s.protocol === protocol);
}

/** Key exchanges that give forward secrecy: ephemeral (EC)DH, TLS 1.3 ("any"), Google's CECPQ1. */
export function hasForwardSecrecy(keyExchange: string): boolean {
  return /^(ECDHE|DHE|any$|CECPQ1)/.test(keyExchange);
}

const AEAD = new Set([
  'AESGCM',
  'AESCCM',
  'AESCCM8',
  'ChaCha20',
  'ARIAGCM',
  'CamelliaGCM',
  'AEGIS',
  'SM4GCM',
  'SM4CCM',
]);
/** Block ciphers the suite table names without a mode: all CBC there (RFC 5246 §6.2.3.2). */
const CBC = new Set(['AES', 'Camellia', 'ARIA', 'SEED', 'IDEA', '3DES', 'DES', 'RC2']);

type SuiteShape = Pick<ScannedSuite, 'protocol' | 'encryption'>;

/** Authenticated encryption: every TLS 1.3 suite but the integrity-only ones (RFC 9150). */
export function isAead(suite: SuiteShape): boolean {
  if (suite.protocol === 'TLSv1.3') return suite.encryption !== 'NULL';
  return AEAD.has(suite.encryption);
}

export function isCbc(suite: SuiteShape): boolean {
  return suite.protocol !== 'TLSv1.3' && CBC.has(suite.encryption);
}

/** The MAC or PRF hash an IANA name ends with: SHA (SHA-1), SHA256, SHA384, MD5; null for CCM and the like. */
export function suiteHash(name: string): string | null {
  return /_(SHA|SHA256|SHA384|SHA512|MD5|SM3)$/.exec(name)?.[1] ?? null;
}

/** Anonymous key exchange: no certificate, so no authentication at all. */
export function isAnonymous(suite: Pick<ScannedSuite, 'authentication'>): boolean {
  return suite.authentication === 'none';
}

const NCSC_RANK: Record<NcscClass, number> = { good: 0, sufficient: 1, phase_out: 2, insufficient: 3 };

/** The worse of NCSC classes; `good` for none. */
export function worstClass(classes: Iterable<NcscClass>): NcscClass {
  let worst: NcscClass = 'good';
  for (const c of classes) if (NCSC_RANK[c] > NCSC_RANK[worst]) worst = c;
  return worst;
}

export function classRank(c: NcscClass): number {
  return NCSC_RANK[c];
}

/** "a, b, c and 4 more": lists in messages stay readable for a server with 60 suites. */
export function listNames(names: readonly string[], max = 6): string {
  const unique = [...new Set(names)];
  if (unique.length <= max) return unique.join(', ');
  return `${unique.slice(0, max).join(', ')} and ${unique.length - max} more`;
}

/** Protocol names as people write them in prose. */
export function protocolLabel(p: string): string {
  return p === 'TLSv1' ? 'TLS 1.0' : p.startsWith('TLSv') ? `TLS ${p.slice(4)}` : p;
}
