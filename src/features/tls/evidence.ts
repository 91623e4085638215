/**
 * Turns the facts of one handshake into the `tls` evidence object. Pure: the
 * service gathers the facts from the socket; everything judged here is
 * testable with certificates made in memory.
 */

import { type ParsedCertificate, parseCertificate } from './certificate.js';
import { analyzeChain } from './chain.js';
import {
  connectionFindings,
  cryptoFindings,
  daysRemaining,
  type Finding,
  nameFindings,
  sortFindings,
  trustFindings,
  validityFindings,
} from './findings.js';
import { hostnameMatches } from './hostname.js';
import type { TlsEvidence } from './tls.schema.js';
import { rejectionReason, tlsVerdict } from './verdict.js';

/** A server may send any number of certificates; past this many the rest are counted, not analyzed. */
export const MAX_ANALYZED_CERTIFICATES = 16;

export interface HandshakeFacts {
  host: string;
  port: number;
  /** The address connected to. */
  address: string;
  sni: string | null;
  protocol: string;
  cipher: { standardName: string; name: string };
  alpn: string | null;
  /** Node's getEphemeralKeyInfo(): `{type, name?, size?}`, or null/empty when not ephemeral. */
  ephemeralKey: { type?: string; name?: string; size?: number } | null;
  ocspStapled: boolean;
  authorized: boolean;
  authorizationError: string | null;
  /** The Certificate message's list, in order; undefined when it could not be read from the handshake. */
  sent: readonly Buffer[] | undefined;
  /** Node's getPeerCertificate(true) issuer links as DER, leaf first (sent certificates plus trust-store issuers). */
  peerChain: readonly Buffer[];
  now: Date;
}

export function buildTlsEvidence(facts: HandshakeFacts): TlsEvidence {
  const exact = facts.sent !== undefined && facts.sent.length > 0;
  const sentDer = exact ? facts.sent! : facts.peerChain;
  if (sentDer.length === 0) throw new RangeError('the server sent no certificate');
  const sent = sentDer.slice(0, MAX_ANALYZED_CERTIFICATES).map((der) => parseCertificate(der));
  const leaf = sent[0]!;
  const sentSet = new Set(sentDer.map((der) => der.toString('base64')));
  // What Node appended beyond the sent list came from the trust store. From a reconstruction nothing can be told apart.
  const storeIssuers = exact
    ? facts.peerChain
        .filter((der) => !sentSet.has(der.toString('base64')))
        .map((der) => parseCertificate(der))
    : [];

  const chain = analyzeChain({ sent, storeIssuers, protocol: facts.protocol, now: facts.now });
  // A reconstruction is in issuing order with trust-store roots appended: order, root and extra-certificate
  // findings would be artifacts of it, so only the ones that do not depend on the sent list are kept.
  const chainFindings = exact
    ? chain.findings
    : chain.findings.filter((f) => f.code === 'incomplete_chain' || f.code === 'expired_intermediate');

  const tls13 = facts.protocol === 'TLSv1.3';
  const ephemeral = facts.ephemeralKey?.type ? facts.ephemeralKey : null;
  const forwardSecrecy = tls13 || ephemeral !== null;
  const matches = hostnameMatches(facts.host, leaf);

  const found: Finding[] = [
    ...validityFindings(leaf, facts.now),
    ...nameFindings(facts.host, matches, leaf),
    ...chainFindings,
    ...connectionFindings(facts.protocol, forwardSecrecy),
    ...cryptoFindings(sent),
  ];
  const leafSummary = {
    ...certificateSummary(leaf, facts.now),
    san: [...leaf.dnsNames, ...leaf.ipAddresses],
    days_remaining: daysRemaining(leaf, facts.now),
    ocsp_urls: leaf.ocspUrls,
    ca_issuer_urls: leaf.caIssuerUrls,
    sct_count: leaf.sctCount,
  };
  const chainSummary = {
    source: exact ? ('handshake' as const) : ('reconstructed' as const),
    sent_count: sentDer.length,
    certificates: chain.certificates.map((c) => ({
      index: c.index,
      role: c.role,
      issued_by: c.issued_by,
      is_ca: c.cert.isCa,
      ...certificateSummary(c.cert, facts.now),
    })),
    root: chain.root,
    findings: sortFindings(chainFindings),
  };
  const judged = {
    host: facts.host,
    authorized: facts.authorized,
    authorizationError: facts.authorized ? null : facts.authorizationError,
    leaf: leafSummary,
    chain: chainSummary,
  };
  const reason = facts.authorized ? null : rejectionReason(judged);
  const findings = sortFindings([
    ...found,
    ...trustFindings(facts.authorized, facts.authorizationError, reason ?? '', found),
  ]);

  return {
    host: facts.host,
    port: facts.port,
    connection: {
      address: facts.address,
      sni: facts.sni,
      protocol: facts.protocol,
      cipher: facts.cipher.standardName,
      cipher_openssl: facts.cipher.name,
      alpn: facts.alpn,
      ephemeral_key: ephemeral
        ? {
            type: keyExchangeType(ephemeral.type!),
            ...(ephemeral.name ? { curve: ephemeral.name } : {}),
            ...(ephemeral.size ? { bits: ephemeral.size } : {}),
          }
        : null,
      forward_secrecy: forwardSecrecy,
      ocsp_stapled: facts.ocspStapled,
      authorized: facts.authorized,
      authorization_error: judged.authorizationError,
      authorization_reason: reason,
      hostname_matches: matches,
    },
    leaf: leafSummary,
    chain: chainSummary,
    verdict: tlsVerdict({ ...judged, findings }),
    findings,
    checked_at: facts.now.toISOString(),
  };
}

function certificateSummary(cert: ParsedCertificate, now: Date) {
  return {
    subject: cert.subject,
    issuer: cert.issuer,
    serial: cert.serial,
    not_before: cert.notBefore.toISOString(),
    not_after: cert.notAfter.toISOString(),
    expired: cert.notAfter.getTime() < now.getTime(),
    self_signed: cert.selfSigned,
    key: cert.key,
    signature_algorithm: cert.signatureAlgorithm.name,
    fingerprint_sha256: cert.fingerprintSha256,
  };
}

/**
 * Node names a key-encapsulation group (TLS 1.3 hybrid or post-quantum, such as
 * X25519MLKEM768, the default first group of OpenSSL 3.5 and so of Node 24) `TLSGroup`,
 * an internal label with no size; the API calls it what it is.
 */
function keyExchangeType(nodeType: string): string {
  return nodeType === 'TLSGroup' ? 'KEM' : nodeType;
}
