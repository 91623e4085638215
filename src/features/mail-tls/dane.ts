/**
 * DANE for one MX host (RFC 7672, RFC 6698, RFC 7671): the TLSA records at
 * `_25._tcp.<host>` checked against the certificates the server sent after
 * STARTTLS, the way a DANE-aware sender (Postfix, Exim: OpenSSL's DANE code)
 * checks them. Pure: the TLSA answer and the DER chain in, plain data out.
 *
 * - Records count only when their answer is secure (RFC 7672 §2.2.3), by
 *   netdiag's own validation (features/dnssec), never a resolver's AD bit: in
 *   an unsigned zone senders ignore them (`insecure`); a broken chain (`bogus`)
 *   makes DANE senders defer mail (§2.2). They are still compared with the
 *   chain then, so the report can say whether signing the zone would work.
 * - PKIX-TA(0) and PKIX-EE(1) are unusable for SMTP (RFC 7672 §3.1.3), as are
 *   unassigned values and digests of the wrong length (email/tlsa.ts decides,
 *   for /api/email-security too).
 * - DANE-EE(3) (§3.1.1): the server's own certificate (Cert(0)) or its public
 *   key (SPKI(1)) matches. No name check, no dates, no chain.
 * - DANE-TA(2) (§3.1.2, §3.2): a CA certificate the server sent (never the leaf)
 *   matches; the leaf chains up to it by verified signatures, every certificate
 *   from the leaf to it is within its dates and each issuer is a CA, and the
 *   leaf names the MX host (§3.2.3: DNS-ID SANs, the subject CN only when there
 *   are none). A TA the server did not send matches only when the record holds
 *   it whole (Cert(0) or SPKI(1) with Full(0), RFC 7671 §5.2.2): then its key
 *   must have signed a certificate on the leaf's path. A digest of a TA that
 *   was not sent matches nothing: servers must send the TA, even a
 *   self-signed root (RFC 7672 §3.2.1).
 *
 * The chain must be the Certificate message's list as sent, not Node's
 * getPeerCertificate(true) reconstruction: that one appends issuers from the
 * local trust store, and a DANE-TA record for a root the server never sends
 * would look valid here while every DANE-aware sender fails it.
 */

import { createHash, createPublicKey, type KeyObject, type X509Certificate } from 'node:crypto';
import { formatDateTime } from '../../client/words.js';
import type { Reason, ValidationStatus } from '../dnssec/verdicts.js';
import { describeTlsa, smtpTlsaName, type TlsaSummary } from '../email/tlsa.js';
import { type DnsOutcome, type Finding, finding, type TlsaRecord } from '../email/types.js';
import { issuedBy, type ParsedCertificate, parseCertificate, signedBy } from '../tls/certificate.js';
import { MAX_ANALYZED_CERTIFICATES } from '../tls/evidence.js';
import { findingsOf, summaryOf } from './dane-findings.js';

/**
 * valid: a usable record authenticates the server. mismatch: usable records, none authenticates it
 * (senders refuse delivery: the stale TLSA after a rollover). unusable: secure records, none
 * usable for SMTP (senders require TLS, authenticate nothing). unchecked: secure usable records
 * but no chain to check them against (no TLS handshake completed). insecure: records present in an
 * unsigned zone (senders ignore them). bogus: the TLSA answer fails validation (senders defer).
 * indeterminate: records present, no verdict reached (or this instance does not validate).
 * none: no records. error: the TLSA lookup failed (senders defer).
 */
export const DANE_VERDICTS = [
  'valid',
  'mismatch',
  'unusable',
  'unchecked',
  'insecure',
  'bogus',
  'indeterminate',
  'none',
  'error',
] as const;
export type DaneVerdict = (typeof DANE_VERDICTS)[number];

/**
 * One record against the chain. match: it authenticates the server. mismatch: usable, and it does
 * not (`reason` says why). unusable: SMTP cannot use it (`problem` says why). unchecked: usable,
 * but there was no chain to check it against.
 */
export const DANE_RECORD_RESULTS = ['match', 'mismatch', 'unusable', 'unchecked'] as const;
export type DaneRecordResult = (typeof DANE_RECORD_RESULTS)[number];

export interface DaneInput {
  /** The MX host: normalized (A-labels, lower case, no trailing dot). The TLSA base domain and DANE-TA's reference identifier. */
  host: string;
  /** The answer for `smtpTlsaName(host)`. */
  tlsa: DnsOutcome<TlsaRecord>;
  /** netdiag's own verdict on that answer. */
  dnssec: DnssecView;
  /** DER of the certificates the server sent, in the order sent, leaf first; undefined when no handshake completed. */
  chain: readonly Buffer[] | undefined;
  now: Date;
}

export interface DaneRecordCheck extends TlsaSummary {
  result: DaneRecordResult;
  /**
   * Position in the chain as sent (0 = the server's certificate) of the certificate whose DER
   * (Cert(0)) or public key (SPKI(1)) the record's data matches; null when none does. For
   * DANE-TA(2) a match here can still fail the later checks: `result` is the verdict.
   */
  matched: number | null;
  /**
   * DANE-TA(2) with Full(0) data the server did not send: position of the sent certificate on the
   * leaf's path whose signature the record's certificate or key verifies (RFC 7671 §5.2.2).
   */
  issued_by_record?: number;
  /** Why a usable record does not authenticate the server (result mismatch). */
  reason?: string;
}

/** A verdict of netdiag's own validation, as the answer shows it. */
export interface DnssecView {
  status: ValidationStatus;
  reason: Reason | null;
}

export interface DaneEvaluation {
  /** `_25._tcp.<host>`. */
  tlsa_name: string;
  verdict: DaneVerdict;
  /** netdiag proved the TLSA answer secure (true), or insecure or bogus (false); null: no verdict, or the lookup failed. */
  validated: boolean | null;
  /** netdiag's own verdict on the TLSA answer. */
  dnssec: DnssecView;
  /** The records of the answer in the order received, each checked; empty for none and error. */
  records: DaneRecordCheck[];
  summary: string;
  findings: Finding[];
}

export function evaluateDane(input: DaneInput): DaneEvaluation {
  const { host, tlsa, dnssec } = input;
  const name = smtpTlsaName(host);
  const bogus = dnssec.status === 'bogus';
  if (tlsa.kind === 'error' && !bogus) {
    return {
      tlsa_name: name,
      verdict: 'error',
      validated: null,
      dnssec,
      records: [],
      summary: `The TLSA lookup for ${name} failed (${tlsa.message}).`,
      findings: [
        finding(
          'warning',
          `The TLSA lookup for ${name} failed (${tlsa.message}): DANE-aware senders whose MX and address answers for ${host} validated defer mail to it while the lookup fails.`,
          'RFC 7672 §2.2.3',
        ),
      ],
    };
  }
  // A name too long to ask (invalid_name) cannot hold TLSA records.
  const records = tlsa.kind === 'answer' ? tlsa.records : [];
  // Whether the answer that was read is secure; nothing to say of a name that could not be asked.
  const validated =
    tlsa.kind !== 'answer' && !bogus
      ? null
      : dnssec.status === 'secure'
        ? true
        : dnssec.status === 'indeterminate'
          ? null
          : false;
  if (records.length === 0 && !bogus) {
    return {
      tlsa_name: name,
      verdict: 'none',
      validated,
      dnssec,
      records: [],
      summary: `No TLSA records at ${name}: DANE does not apply to ${host}.`,
      findings: [],
    };
  }

  const chain = input.chain && input.chain.length > 0 ? new SentChain(input.chain) : undefined;
  const checks = records.map((record) => checkRecord(record, chain, input));
  const usable = checks.filter((c) => c.usable);
  const verdict: DaneVerdict =
    dnssec.status !== 'secure'
      ? dnssec.status
      : usable.length === 0
        ? 'unusable'
        : chain === undefined
          ? 'unchecked'
          : usable.some((c) => c.result === 'match')
            ? 'valid'
            : 'mismatch';
  return {
    tlsa_name: name,
    verdict,
    validated,
    dnssec,
    records: checks,
    summary: summaryOf(verdict, name, host, checks, dnssec),
    findings: findingsOf(verdict, name, host, checks, dnssec),
  };
}

function checkRecord(record: TlsaRecord, chain: SentChain | undefined, input: DaneInput): DaneRecordCheck {
  const summary = describeTlsa({ ...record, data: record.data.toUpperCase() });
  if (!summary.usable) return { ...summary, result: 'unusable', matched: null };
  if (chain === undefined) return { ...summary, result: 'unchecked', matched: null };
  const outcome = summary.usage === 3 ? checkDaneEe(summary, chain) : checkDaneTa(summary, chain, input);
  return { ...summary, ...outcome };
}

type RecordOutcome = Pick<DaneRecordCheck, 'result' | 'matched' | 'issued_by_record' | 'reason'>;

/** RFC 7672 §3.1.1: the leaf alone; its name and dates are not checked. */
function checkDaneEe(record: TlsaSummary, chain: SentChain): RecordOutcome {
  if (chain.matches(0, record)) return { result: 'match', matched: 0 };
  const leaf = chain.entries[0]!;
  const elsewhere = chain.matchingPositions(record).find((p) => p > 0);
  const reason =
    leaf.cert === undefined && record.selector === 1
      ? "the server's certificate could not be parsed, so its public key could not be compared"
      : elsewhere !== undefined
        ? `it matches ${chain.describe(elsewhere)}, not the server's own certificate: for an issuing CA the usage is DANE-TA(2)`
        : `it matches neither ${record.selector === 1 ? 'the public key of ' : ''}${chain.describe(0)} nor any other certificate sent`;
  return { result: 'mismatch', matched: null, reason };
}

/** RFC 7672 §3.1.2, §3.2: a sent CA certificate (or one the record holds whole) that the leaf chains to, and a leaf that names the host. */
function checkDaneTa(record: TlsaSummary, chain: SentChain, input: DaneInput): RecordOutcome {
  const positions = chain.matchingPositions(record);
  const anchors = positions.filter((p) => p > 0);
  let firstFailure: RecordOutcome | undefined;
  for (const position of anchors) {
    const path = chain.pathTo(position);
    const failure = path && pathFailure(chain, path, [], input);
    if (path && failure === undefined) return { result: 'match', matched: position };
    firstFailure ??= {
      result: 'mismatch',
      matched: position,
      reason: path
        ? `${chain.describe(position)} matches and the server's certificate chains up to it, but ${failure}`
        : `${chain.describe(position)} matches, but the server's certificate does not chain up to it (no path of verified signatures through the certificates sent)`,
    };
  }
  if (firstFailure) return firstFailure;

  if (positions.includes(0)) {
    return {
      result: 'mismatch',
      matched: null,
      reason:
        "it matches the server's own certificate (#0); DANE-TA(2) names an issuing CA, a record for the server's own certificate or key needs usage DANE-EE(3)",
    };
  }
  const sent = chain.entries.map((e) => chain.describe(e.position)).join(', ');
  // The TA whole in DNS (RFC 7671 §5.2.2): OpenSSL adds a Cert(0) Full(0) certificate to the untrusted
  // certificates, and accepts an SPKI(1) Full(0) key that signed the top of the chain.
  const anchor = record.matching_type === 0 ? recordAnchor(record) : undefined;
  if (anchor) {
    const what = anchor.cert ? 'certificate' : 'public key';
    let failure: string | undefined;
    for (const [position, path] of chain.pathsFromLeaf()) {
      const cert = chain.entries[position]!.cert!;
      if (!anchor.issued(cert)) continue;
      const problem = pathFailure(chain, path, anchor.cert ? [anchor.cert] : [], input);
      if (problem === undefined) return { result: 'match', matched: null, issued_by_record: position };
      failure ??= `the ${what} it holds issued ${chain.describe(position)}, but ${problem}`;
    }
    return {
      result: 'mismatch',
      matched: null,
      reason:
        failure ??
        `no certificate the server sent matches it (${sent}), and the ${what} it holds issued none that the server's certificate chains up to`,
    };
  }
  return {
    result: 'mismatch',
    matched: null,
    reason: `no certificate the server sent matches it (${sent}); the trust anchor must be in the chain the server sends, even a self-signed root`,
  };
}

/**
 * What stops the path (leaf first, the anchor's certificate last when it was sent) from
 * authenticating the host, undefined when nothing does. `beyond`: a TA certificate from DNS above
 * the path, whose dates count too. Dates and CA flags as OpenSSL checks them for a DANE-TA chain.
 */
function pathFailure(
  chain: SentChain,
  path: readonly number[],
  beyond: readonly ParsedCertificate[],
  input: DaneInput,
): string | undefined {
  const certs = [...path.map((p) => chain.entries[p]!.cert!), ...beyond];
  const where = (i: number) => (i < path.length ? chain.describe(path[i]!) : `the record's certificate`);
  for (const [i, cert] of certs.entries()) {
    if (i > 0 && !cert.isCa)
      return `${where(i)} is not a CA certificate (basicConstraints), so it cannot issue`;
    if (cert.notAfter.getTime() < input.now.getTime()) {
      return `${where(i)} expired on ${formatDateTime(cert.notAfter)}`;
    }
    if (cert.notBefore.getTime() > input.now.getTime()) {
      return `${where(i)} is not valid before ${formatDateTime(cert.notBefore)}`;
    }
  }
  const leaf = certs[0]!;
  if (!namesHost(leaf.x509, input.host)) {
    const names =
      leaf.dnsNames.length > 0 ? leaf.dnsNames.join(', ') : `no DNS name (subject ${leaf.subject})`;
    return `the server's certificate does not name ${input.host} (it names ${names})`;
  }
  return undefined;
}

/**
 * RFC 7672 §3.2.3: DNS-ID subjectAltNames, the subject CN only when there is none, a wildcard
 * only as the whole left-most label. OpenSSL's X509_check_host with these flags is what
 * Postfix applies; features/tls/hostname.ts is the browsers' rule, which never reads the CN.
 */
function namesHost(cert: X509Certificate, host: string): boolean {
  return (
    cert.checkHost(host, {
      subject: 'default',
      wildcards: true,
      partialWildcards: false,
      multiLabelWildcards: false,
      singleLabelSubdomains: false,
    }) !== undefined
  );
}

interface RecordAnchor {
  /** The TA certificate itself (Cert(0) Full(0)); undefined for a bare key. */
  cert?: ParsedCertificate;
  issued(child: ParsedCertificate): boolean;
}

/** A trust anchor the record holds whole; undefined when its data is not a certificate or a public key. */
function recordAnchor(record: TlsaSummary): RecordAnchor | undefined {
  const der = Buffer.from(record.data, 'hex');
  try {
    if (record.selector === 0) {
      const cert = parseCertificate(der);
      return { cert, issued: (child) => issuedBy(child, cert) };
    }
    const key: KeyObject = createPublicKey({ key: der, format: 'der', type: 'spki' });
    return { issued: (child) => signedBy(child.x509, key) };
  } catch {
    return undefined;
  }
}

interface ChainEntry {
  position: number;
  der: Buffer;
  /** undefined when the DER does not parse: it can still match Cert(0) records byte for byte. */
  cert: ParsedCertificate | undefined;
}

/** The certificates as sent, parsed once, with their issuing links found on first use. */
class SentChain {
  readonly entries: ChainEntry[];
  private paths: Map<number, number[]> | undefined;

  constructor(ders: readonly Buffer[]) {
    this.entries = ders.slice(0, MAX_ANALYZED_CERTIFICATES).map((der, position) => {
      let cert: ParsedCertificate | undefined;
      try {
        cert = parseCertificate(der);
      } catch {
        cert = undefined;
      }
      return { position, der, cert };
    });
  }

  /** RFC 6698 §2.1.2-2.1.3: the selected bytes, as they are or digested, equal the record's data. */
  matches(position: number, record: TlsaSummary): boolean {
    const entry = this.entries[position];
    const selected = record.selector === 0 ? entry?.der : entry?.cert?.spki;
    if (selected === undefined) return false;
    const data =
      record.matching_type === 0
        ? selected
        : createHash(record.matching_type === 1 ? 'sha256' : 'sha512')
            .update(selected)
            .digest();
    return data.toString('hex').toUpperCase() === record.data;
  }

  matchingPositions(record: TlsaSummary): number[] {
    return this.entries.filter((e) => this.matches(e.position, record)).map((e) => e.position);
  }

  /** The path of verified signatures from the leaf up to `position` (both included), if any. */
  pathTo(position: number): number[] | undefined {
    return this.pathsFromLeaf().get(position);
  }

  /**
   * Every sent certificate the leaf chains up to, with the shortest path to it (breadth first
   * from the leaf). The order sent does not matter: OpenSSL builds the chain from the
   * certificates in any order (RFC 8446 §4.4.2 allows it), and so does a DANE-aware sender.
   */
  pathsFromLeaf(): Map<number, number[]> {
    if (this.paths) return this.paths;
    const paths = new Map<number, number[]>();
    const leaf = this.entries[0];
    if (leaf?.cert) {
      paths.set(0, [0]);
      const queue = [0];
      for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
        const child = this.entries[next]!.cert!;
        if (child.selfSigned) continue;
        for (const parent of this.entries) {
          if (paths.has(parent.position) || !parent.cert || !issuedBy(child, parent.cert)) continue;
          paths.set(parent.position, [...paths.get(next)!, parent.position]);
          queue.push(parent.position);
        }
      }
    }
    this.paths = paths;
    return paths;
  }

  describe(position: number): string {
    const cert = this.entries[position]?.cert;
    return cert ? `certificate #${position} (${cert.subject})` : `certificate #${position} (unparseable)`;
  }
}
