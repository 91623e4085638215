/**
 * The findings of a TLS inspection: what is wrong or about to go wrong, each
 * with a severity and the rule it rests on. Pure functions over parsed
 * certificates and connection facts.
 *
 * Severity scale (the levels testssl.sh and SSL Labs use):
 *   critical  clients fail now (expired, wrong name, untrusted)
 *   high      clients fail soon or some clients fail (expiry in 14 days, incomplete chain, weak crypto)
 *   medium    a weakness or a deadline worth acting on (expiry in 30 days, no forward secrecy)
 *   low       harmless to most clients, still wrong (chain order, root sent)
 */
import { formatDateTime } from '../../client/words.js';
import type { ParsedCertificate } from './certificate.js';

export type Severity = 'critical' | 'high' | 'medium' | 'low';

export type FindingCode =
  | 'expired'
  | 'not_yet_valid'
  | 'expires_within_14_days'
  | 'expires_within_30_days'
  | 'name_mismatch'
  | 'untrusted'
  | 'protocol_below_tls_1_2'
  | 'no_forward_secrecy'
  | 'weak_key'
  | 'weak_signature'
  | 'incomplete_chain'
  | 'chain_wrong_order'
  | 'chain_contains_root'
  | 'chain_unrelated_certificates'
  | 'expired_intermediate';

export interface Finding {
  code: FindingCode;
  severity: Severity;
  message: string;
}

const DAY_MS = 24 * 60 * 60 * 1000;
const RANK: Readonly<Record<Severity, number>> = { critical: 0, high: 1, medium: 2, low: 3 };

/** Most severe first; the order of detection within one severity. */
export function sortFindings(findings: readonly Finding[]): Finding[] {
  return findings
    .map((f, i) => ({ f, i }))
    .sort((a, b) => RANK[a.f.severity] - RANK[b.f.severity] || a.i - b.i)
    .map(({ f }) => f);
}

/** Whole days left until notAfter, rounded down; negative once expired. */
export function daysRemaining(leaf: Pick<ParsedCertificate, 'notAfter'>, now: Date): number {
  return Math.floor((leaf.notAfter.getTime() - now.getTime()) / DAY_MS);
}

/**
 * Validity of the leaf. RFC 5280 §4.1.2.5: the certificate is valid from
 * notBefore through notAfter inclusive, so it is expired only once now > notAfter.
 * The 14- and 30-day horizons are when ACME clients and monitoring renew and
 * alert (Let's Encrypt renews at 30 days left; 14 days leaves one retry cycle).
 */
export function validityFindings(leaf: ParsedCertificate, now: Date): Finding[] {
  const remaining = leaf.notAfter.getTime() - now.getTime();
  if (remaining < 0) {
    return [
      {
        code: 'expired',
        severity: 'critical',
        message: `The certificate expired on ${formatDateTime(leaf.notAfter)} (RFC 5280 §4.1.2.5).`,
      },
    ];
  }
  if (now.getTime() < leaf.notBefore.getTime()) {
    return [
      {
        code: 'not_yet_valid',
        severity: 'critical',
        message: `The certificate is not valid before ${formatDateTime(leaf.notBefore)} (RFC 5280 §4.1.2.5).`,
      },
    ];
  }
  const days = daysRemaining(leaf, now);
  if (remaining <= 14 * DAY_MS) {
    return [
      {
        code: 'expires_within_14_days',
        severity: 'high',
        message: `The certificate expires in ${days} day${days === 1 ? '' : 's'}, on ${formatDateTime(leaf.notAfter)}.`,
      },
    ];
  }
  if (remaining <= 30 * DAY_MS) {
    return [
      {
        code: 'expires_within_30_days',
        severity: 'medium',
        message: `The certificate expires in ${days} days, on ${formatDateTime(leaf.notAfter)}.`,
      },
    ];
  }
  return [];
}

export function nameFindings(host: string, matches: boolean, leaf: ParsedCertificate): Finding[] {
  if (matches) return [];
  const names = [...leaf.dnsNames, ...leaf.ipAddresses];
  return [
    {
      code: 'name_mismatch',
      severity: 'critical',
      message:
        `The certificate does not cover ${host}: its subjectAltName lists ` +
        `${names.length > 0 ? names.join(', ') : 'no names'} (RFC 6125 §6.4; the subject CN is not used).`,
    },
  ];
}

/**
 * Protocol and key exchange. TLS 1.0 and 1.1 are deprecated by RFC 8996;
 * BCP 195 (RFC 9325 §4.1) requires ephemeral (EC)DHE key exchange, which TLS
 * 1.3 always has (RFC 8446 §2).
 */
export function connectionFindings(protocol: string, forwardSecrecy: boolean): Finding[] {
  const out: Finding[] = [];
  if (['SSLv2', 'SSLv3', 'TLSv1', 'TLSv1.1'].includes(protocol)) {
    out.push({
      code: 'protocol_below_tls_1_2',
      severity: 'high',
      message: `The server negotiated ${protocol} with a client offering TLS 1.0 to 1.3; TLS below 1.2 is deprecated (RFC 8996).`,
    });
  }
  if (!forwardSecrecy) {
    out.push({
      code: 'no_forward_secrecy',
      severity: 'medium',
      message:
        'The key exchange is not ephemeral, so recorded traffic can be decrypted with the server key later (RFC 9325 §4.1).',
    });
  }
  return out;
}

/**
 * Keys and signatures of every certificate the server sent. CA/Browser Forum
 * Baseline Requirements §6.1.5: RSA moduli of at least 2048 bits, ECDSA on
 * P-256, P-384 or P-521 only (DSA is not permitted). §7.1.3.2: no MD5 or
 * SHA-1 signatures on subscriber or subordinate CA certificates. A self-signed
 * certificate's own signature is not checked by anyone (a trust anchor is
 * trusted for its key, RFC 5280 §6.1.1 (d)), so it is exempt.
 */
export function cryptoFindings(sent: readonly ParsedCertificate[]): Finding[] {
  const weakKeys: string[] = [];
  const weakSignatures: string[] = [];
  sent.forEach((cert, i) => {
    const who = i === 0 ? 'leaf' : `${cert.subject} (#${i})`;
    const weak = weakKeyReason(cert);
    if (weak) weakKeys.push(`${who}: ${weak}`);
    const hash = cert.signatureAlgorithm.hash;
    if (!cert.selfSigned && hash && ['MD2', 'MD5', 'SHA-1'].includes(hash)) {
      weakSignatures.push(`${who}: ${cert.signatureAlgorithm.name}`);
    }
  });
  const out: Finding[] = [];
  if (weakKeys.length > 0) {
    out.push({
      code: 'weak_key',
      severity: 'high',
      message: `Weak key: ${weakKeys.join('; ')} (CA/B Forum Baseline Requirements §6.1.5).`,
    });
  }
  if (weakSignatures.length > 0) {
    out.push({
      code: 'weak_signature',
      severity: 'high',
      message: `Signed with a broken hash: ${weakSignatures.join('; ')} (CA/B Forum Baseline Requirements §7.1.3.2).`,
    });
  }
  return out;
}

function weakKeyReason(cert: ParsedCertificate): string | undefined {
  const { type, bits, curve } = cert.key;
  if ((type === 'RSA' || type === 'RSA-PSS') && bits !== undefined && bits < 2048) {
    return `${type} ${bits} bits, below 2048`;
  }
  if (type === 'EC' && !['P-256', 'P-384', 'P-521'].includes(curve ?? '')) {
    return `EC curve ${curve ?? 'unknown'} is not P-256, P-384 or P-521`;
  }
  if (type === 'DSA') return `DSA ${bits ?? '?'} bits is not permitted`;
  return undefined;
}

// OpenSSL verify results (X509_verify_cert_error_string names, as Node reports them) that other findings explain.
const DATE_ERRORS = new Set(['CERT_HAS_EXPIRED', 'CERT_NOT_YET_VALID']);
const MISSING_ISSUER_ERRORS = new Set([
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
]);

/**
 * Whether the chain verified (OpenSSL, against the trust store, with the SNI
 * name). OpenSSL reports one error; when a more specific finding already
 * explains it (a date, a missing intermediate, the name), `untrusted` would
 * say the same thing twice and is left out. `reason` is the error in words (verdict.ts).
 */
export function trustFindings(
  authorized: boolean,
  authorizationError: string | null,
  reason: string,
  found: readonly Finding[],
): Finding[] {
  if (authorized) return [];
  const has = (...codes: FindingCode[]) => found.some((f) => codes.includes(f.code));
  const error = authorizationError ?? 'unknown verification error';
  if (error === 'ERR_TLS_CERT_ALTNAME_INVALID' && has('name_mismatch')) return [];
  if (DATE_ERRORS.has(error) && has('expired', 'not_yet_valid', 'expired_intermediate')) return [];
  if (MISSING_ISSUER_ERRORS.has(error) && has('incomplete_chain')) return [];
  return [
    {
      code: 'untrusted',
      severity: 'critical',
      message: `The certificate chain does not verify against the trusted roots: ${reason} (${error}).`,
    },
  ];
}
