/**
 * DNSSEC algorithm and DS digest numbers (IANA "DNS Security Algorithm Numbers",
 * "Delegation Signer (DS) Resource Record (RR) Type Digest Algorithms"), what
 * this validator does with each, and RFC 8624's recommendations for them, kept
 * as data so findings can quote them.
 */

/** RFC 8624's requirement words (RFC 2119/8174). */
export type Requirement = 'MUST' | 'RECOMMENDED' | 'MAY' | 'NOT RECOMMENDED' | 'MUST NOT';

export interface AlgorithmInfo {
  number: number;
  mnemonic: string;
  /** RFC 8624 §3.1, DNSSEC signing. */
  signing: Requirement;
  /** RFC 8624 §3.1, DNSSEC validation. */
  validation: Requirement;
  /** Whether this validator verifies it (node:crypto). */
  supported: boolean;
}

/** RFC 8624 §3.1 (the algorithms it lists; numbers it does not list are unknown to it). */
export const ALGORITHMS: readonly AlgorithmInfo[] = [
  { number: 1, mnemonic: 'RSAMD5', signing: 'MUST NOT', validation: 'MUST NOT', supported: false },
  { number: 3, mnemonic: 'DSA', signing: 'MUST NOT', validation: 'MUST NOT', supported: false },
  { number: 5, mnemonic: 'RSASHA1', signing: 'NOT RECOMMENDED', validation: 'MUST', supported: true },
  { number: 6, mnemonic: 'DSA-NSEC3-SHA1', signing: 'MUST NOT', validation: 'MUST NOT', supported: false },
  {
    number: 7,
    mnemonic: 'RSASHA1-NSEC3-SHA1',
    signing: 'NOT RECOMMENDED',
    validation: 'MUST',
    supported: true,
  },
  { number: 8, mnemonic: 'RSASHA256', signing: 'MUST', validation: 'MUST', supported: true },
  { number: 10, mnemonic: 'RSASHA512', signing: 'NOT RECOMMENDED', validation: 'MUST', supported: true },
  { number: 12, mnemonic: 'ECC-GOST', signing: 'MUST NOT', validation: 'MAY', supported: false },
  { number: 13, mnemonic: 'ECDSAP256SHA256', signing: 'MUST', validation: 'MUST', supported: true },
  { number: 14, mnemonic: 'ECDSAP384SHA384', signing: 'MAY', validation: 'RECOMMENDED', supported: true },
  { number: 15, mnemonic: 'ED25519', signing: 'RECOMMENDED', validation: 'RECOMMENDED', supported: true },
  { number: 16, mnemonic: 'ED448', signing: 'MAY', validation: 'RECOMMENDED', supported: true },
];

export interface DigestInfo {
  number: number;
  mnemonic: string;
  /** RFC 8624 §3.3, creating DS records. */
  signing: Requirement;
  /** RFC 8624 §3.3, validating with them. */
  validation: Requirement;
  /** node:crypto's name for it, when this validator computes it. */
  hash?: 'sha1' | 'sha256' | 'sha384';
}

/** RFC 8624 §3.3. Digest type 0 is for CDS deletion only (RFC 8078) and never a digest. */
export const DIGESTS: readonly DigestInfo[] = [
  { number: 0, mnemonic: 'NULL (CDS only)', signing: 'MUST NOT', validation: 'MUST NOT' },
  { number: 1, mnemonic: 'SHA-1', signing: 'MUST NOT', validation: 'MUST', hash: 'sha1' },
  { number: 2, mnemonic: 'SHA-256', signing: 'MUST', validation: 'MUST', hash: 'sha256' },
  { number: 3, mnemonic: 'GOST R 34.11-94', signing: 'MUST NOT', validation: 'MAY' },
  { number: 4, mnemonic: 'SHA-384', signing: 'MAY', validation: 'RECOMMENDED', hash: 'sha384' },
];

const byAlgorithm = new Map(ALGORITHMS.map((a) => [a.number, a]));
const byDigest = new Map(DIGESTS.map((d) => [d.number, d]));

/** The algorithm's entry, or undefined for a number RFC 8624 does not list. */
export function algorithmInfo(algorithm: number): AlgorithmInfo | undefined {
  return byAlgorithm.get(algorithm);
}

/** The mnemonic, or ALG<n> for an unlisted number. */
export function algorithmName(algorithm: number): string {
  return byAlgorithm.get(algorithm)?.mnemonic ?? `ALG${algorithm}`;
}

/** Whether this validator verifies signatures of this algorithm. */
export function isAlgorithmSupported(algorithm: number): boolean {
  return byAlgorithm.get(algorithm)?.supported === true;
}

export function digestInfo(digestType: number): DigestInfo | undefined {
  return byDigest.get(digestType);
}

export function digestName(digestType: number): string {
  return byDigest.get(digestType)?.mnemonic ?? `DIGEST${digestType}`;
}

/** Whether this validator computes DS digests of this type. */
export function isDigestSupported(digestType: number): boolean {
  return byDigest.get(digestType)?.hash !== undefined;
}

/**
 * The RSA key size under which a zone key is weak: 2048 bits, the smallest with
 * 112-bit security (NIST SP 800-57 Part 1, Table 2). RFC 8624 names algorithms,
 * not sizes; this is the size findings hold RSA keys to.
 */
export const RSA_MIN_RECOMMENDED_BITS = 2048;

/** A finding about the algorithm, key size or digest a zone publishes. */
export interface AlgorithmFinding {
  code: 'algorithm_must_not_sign' | 'algorithm_not_recommended' | 'rsa_key_short' | 'digest_must_not_sign';
  detail: string;
}

/**
 * What RFC 8624 says about signing with `algorithm` (a zone's DNSKEY), and
 * whether an RSA key of `bits` is short. Empty when nothing is amiss.
 */
export function algorithmFindings(algorithm: number, bits?: number): AlgorithmFinding[] {
  const info = byAlgorithm.get(algorithm);
  const findings: AlgorithmFinding[] = [];
  if (info?.signing === 'MUST NOT') {
    findings.push({
      code: 'algorithm_must_not_sign',
      detail: `RFC 8624 §3.1: zones MUST NOT be signed with ${info.mnemonic} (algorithm ${algorithm})`,
    });
  } else if (info?.signing === 'NOT RECOMMENDED') {
    findings.push({
      code: 'algorithm_not_recommended',
      detail: `RFC 8624 §3.1: signing with ${info.mnemonic} (algorithm ${algorithm}) is NOT RECOMMENDED`,
    });
  }
  const rsa = algorithm === 5 || algorithm === 7 || algorithm === 8 || algorithm === 10;
  if (rsa && bits !== undefined && bits < RSA_MIN_RECOMMENDED_BITS) {
    findings.push({
      code: 'rsa_key_short',
      detail: `${bits}-bit RSA key: shorter than ${RSA_MIN_RECOMMENDED_BITS} bits, the least with 112-bit security (NIST SP 800-57 Part 1)`,
    });
  }
  return findings;
}

/** What RFC 8624 §3.3 says about publishing a DS of `digestType`. */
export function digestFindings(digestType: number): AlgorithmFinding[] {
  const info = byDigest.get(digestType);
  if (info?.signing !== 'MUST NOT') return [];
  return [
    {
      code: 'digest_must_not_sign',
      detail: `RFC 8624 §3.3: DS records MUST NOT be made with ${info.mnemonic} (digest type ${digestType})`,
    },
  ];
}
