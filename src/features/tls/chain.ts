/**
 * The certificate chain as the server sent it, and what is wrong with it.
 * Pure: parsed certificates in, a summary and findings out.
 *
 * The rules: RFC 5246 §7.4.2 (TLS ≤ 1.2) has the list start with the server's
 * certificate, "each following certificate MUST directly certify the one
 * preceding it", and lets the root be omitted because the client must
 * already have it. RFC 8446 §4.4.2 (TLS 1.3) keeps the leaf first and the
 * order as the preferred form but asks clients to cope with extra
 * certificates and other orders, so out-of-order is a spec violation for
 * TLS 1.2 that some clients reject, and merely untidy for TLS 1.3.
 */
import { formatDateTime } from '../../client/words.js';
import { issuedBy, type ParsedCertificate } from './certificate.js';
import type { Finding } from './findings.js';

export type ChainRole = 'leaf' | 'intermediate' | 'root' | 'unrelated';

export interface ChainCertificate {
  /** Position in the Certificate message, 0 = the server's own certificate. */
  index: number;
  /** leaf; intermediate or root on the path from the leaf; unrelated when off that path. */
  role: ChainRole;
  /** Index of the sent certificate that issued this one, null when none of them did. */
  issued_by: number | null;
  cert: ParsedCertificate;
}

export interface ChainRoot {
  subject: string;
  fingerprint_sha256: string;
  /** 'sent': the server sent it; 'trust store': the client's roots supplied it. */
  source: 'sent' | 'trust store';
}

export interface ChainAnalysis {
  certificates: ChainCertificate[];
  /**
   * The self-signed certificate the path from the leaf ends at (the leaf itself when it is
   * self-signed), null when the path ends without one.
   */
  root: ChainRoot | null;
  findings: Finding[];
}

export interface ChainInput {
  /** The certificates in the order sent, leaf first (at least one). */
  sent: readonly ParsedCertificate[];
  /**
   * Issuers the client's trust store supplied above the sent certificates,
   * bottom up (what Node appended to getPeerCertificate(true) beyond the sent list).
   */
  storeIssuers: readonly ParsedCertificate[];
  /** The negotiated protocol ('TLSv1.3', 'TLSv1.2', ...): ordering is a MUST before 1.3. */
  protocol: string;
  now: Date;
}

export function analyzeChain(input: ChainInput): ChainAnalysis {
  const { sent, storeIssuers, now } = input;
  const leaf = sent[0];
  if (!leaf) throw new RangeError('analyzeChain needs at least the leaf');

  const issuerOf = sent.map((cert, i) => findIssuer(sent, cert, i));
  const path = pathFromLeaf(issuerOf);
  const onPath = new Set(path);
  const last = sent[path.at(-1)!]!;

  const certificates: ChainCertificate[] = sent.map((cert, index) => ({
    index,
    role: index === 0 ? 'leaf' : !onPath.has(index) ? 'unrelated' : cert.selfSigned ? 'root' : 'intermediate',
    issued_by: issuerOf[index] ?? null,
    cert,
  }));

  const findings: Finding[] = [];
  const storeIssuer = last.selfSigned ? undefined : storeIssuers.find((s) => issuedBy(last, s));
  let root: ChainRoot | null = null;
  if (last.selfSigned) {
    root = { subject: last.subject, fingerprint_sha256: last.fingerprintSha256, source: 'sent' };
  } else if (storeIssuer) {
    // Node walks the store up to a self-issued certificate; the top one is the root.
    const top = storeIssuers.at(-1) ?? storeIssuer;
    root = { subject: top.subject, fingerprint_sha256: top.fingerprintSha256, source: 'trust store' };
  }

  if (!last.selfSigned && !storeIssuer) {
    findings.push({
      code: 'incomplete_chain',
      severity: 'high',
      message:
        `The chain ends at ${describe(last, path.at(-1)!)}, whose issuer ${last.issuer} was neither sent nor ` +
        'found among the trusted roots. Either the server omits an intermediate (RFC 5246 §7.4.2, RFC 8446 §4.4.2: ' +
        'it must send every certificate up to the root), which browsers that fetch or cache intermediates hide ' +
        'but other clients reject, or the chain leads to a root that is not trusted.',
    });
  }

  const outOfOrder = path.some((certIndex, step) => certIndex !== step);
  if (outOfOrder) {
    const tls13 = input.protocol === 'TLSv1.3';
    findings.push({
      code: 'chain_wrong_order',
      severity: tls13 ? 'low' : 'medium',
      message:
        `The certificates are not sent in issuing order (the path from the leaf is #${path.join(' → #')}); ` +
        (tls13
          ? 'TLS 1.3 clients should cope (RFC 8446 §4.4.2), but older clients may not.'
          : 'TLS 1.2 requires each certificate to certify the one before it (RFC 5246 §7.4.2).'),
    });
  }

  const roots = certificates.filter((c) => c.index > 0 && c.cert.selfSigned);
  if (roots.length > 0) {
    findings.push({
      code: 'chain_contains_root',
      severity: 'low',
      message:
        `The server sends the self-signed root ${roots.map((c) => describe(c.cert, c.index)).join(', ')}; ` +
        'clients must already trust a root, so sending it only costs bytes (RFC 5246 §7.4.2, RFC 8446 §4.4.2).',
    });
  }

  const unrelated = certificates.filter((c) => c.role === 'unrelated');
  if (unrelated.length > 0) {
    findings.push({
      code: 'chain_unrelated_certificates',
      severity: 'low',
      message:
        `Sent but not on the path from the leaf: ${unrelated.map((c) => describe(c.cert, c.index)).join(', ')} ` +
        '(RFC 8446 §4.4.2 tolerates extra certificates; RFC 5246 §7.4.2 does not).',
    });
  }

  const expired = certificates.filter((c) => c.index > 0 && c.cert.notAfter.getTime() < now.getTime());
  if (expired.length > 0) {
    findings.push({
      code: 'expired_intermediate',
      severity: expired.some((c) => onPath.has(c.index)) ? 'critical' : 'high',
      message: `The server sends expired CA certificates: ${expired
        .map(
          (c) =>
            `${describe(c.cert, c.index)} (expired ${formatDateTime(c.cert.notAfter)}${onPath.has(c.index) ? ', on the path' : ''})`,
        )
        .join(', ')} (RFC 5280 §6.1.3 (a)(2)).`,
    });
  }

  return { certificates, root, findings };
}

/** The sent certificate that issued `cert`, preferring the next one in the list (the usual layout). */
function findIssuer(
  sent: readonly ParsedCertificate[],
  cert: ParsedCertificate,
  index: number,
): number | undefined {
  if (cert.selfSigned) return undefined;
  const next = sent[index + 1];
  if (next && issuedBy(cert, next)) return index + 1;
  const found = sent.findIndex((candidate, i) => i !== index && issuedBy(cert, candidate));
  return found === -1 ? undefined : found;
}

/** Indices from the leaf up through issuers; stops at a self-signed certificate, a missing issuer, or a loop. */
function pathFromLeaf(issuerOf: readonly (number | undefined)[]): number[] {
  const path = [0];
  const seen = new Set(path);
  for (let next = issuerOf[0]; next !== undefined && !seen.has(next); next = issuerOf[next]) {
    path.push(next);
    seen.add(next);
  }
  return path;
}

function describe(cert: ParsedCertificate, index: number): string {
  return `#${index} ${cert.subject}`;
}
