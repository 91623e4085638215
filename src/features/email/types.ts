/**
 * Shapes shared by the email-security checks. Every check module is pure: it
 * takes a MailDns (and, for HTTPS resources, the fetched bytes) and returns
 * plain data. Points are not decided here but in score.ts, from the facts
 * each check reports, so the weights live in one place.
 */
import type { Reason as DnssecReason } from '../dnssec/verdicts.js';

export const CHECK_IDS = ['mx', 'spf', 'dmarc', 'dkim', 'mta_sts', 'tls_rpt', 'bimi', 'dnssec'] as const;
export type CheckId = (typeof CHECK_IDS)[number];

export type CheckStatus = 'pass' | 'warn' | 'fail' | 'info' | 'error' | 'not_applicable';

/** error: breaks the mechanism or is a protocol violation; warning: weakens it; info: worth knowing. */
export type Severity = 'error' | 'warning' | 'info';

export interface Finding {
  severity: Severity;
  message: string;
  /** The rule's source: `RFC 7208 §4.6.4`, or a draft / group document for BIMI. */
  rfc: string;
}

export const finding = (severity: Severity, message: string, rfc: string): Finding => ({
  severity,
  message,
  rfc,
});

/**
 * One DNS question's outcome as the checks see it. "Nothing there" and
 * "lookup failed" are different results (STYLE habit 8): `answer` covers
 * NOERROR (possibly empty) and NXDOMAIN; `error` is a timeout, SERVFAIL or
 * every resolver failing; `invalid_name` is a name that cannot be asked.
 * No resolver's AD bit is kept: what DNSSEC says is netdiag's own
 * validation's (features/dnssec/verdicts.ts).
 */
export type DnsOutcome<T> =
  | {
      kind: 'answer';
      rcode: 'NOERROR' | 'NXDOMAIN';
      records: T[];
      /** CNAME targets followed to reach the answer, in order. */
      aliases: string[];
      /**
       * Set when the configured resolvers refused this answer (SERVFAIL) and netdiag's own
       * validation finds it bogus: the records are then the authoritative servers', as netdiag's
       * engine read them (what a resolver that does not validate still sees), and this is the
       * broken link.
       */
      bogus?: DnssecReason;
    }
  | { kind: 'error'; message: string }
  | { kind: 'invalid_name'; message: string };

export interface MxRecord {
  priority: number;
  exchange: string;
}

/** The DNS questions the checks ask; the service backs it with the shared resolver, unit tests with a map. */
export interface MailDns {
  /** TXT records, each as its character-strings joined with nothing between them (RFC 7208 §3.3). */
  txt(name: string): Promise<DnsOutcome<string>>;
  mx(name: string): Promise<DnsOutcome<MxRecord>>;
  a(name: string): Promise<DnsOutcome<string>>;
  aaaa(name: string): Promise<DnsOutcome<string>>;
  /** PTR targets (lower case, no trailing dot). */
  ptr(name: string): Promise<DnsOutcome<string>>;
  tlsa(name: string): Promise<DnsOutcome<TlsaRecord>>;
}

export interface TlsaRecord {
  usage: number;
  selector: number;
  matchingType: number;
  /** Certificate association data, upper-case hex. */
  data: string;
}

/** A void answer (RFC 7208 §4.6.4): NOERROR with no records of the type asked, or NXDOMAIN. */
export function isVoid<T>(outcome: DnsOutcome<T>): boolean {
  return outcome.kind === 'answer' && outcome.records.length === 0;
}

/** What an HTTPS fetch returned. Redirects are never followed: a 3xx comes back as is. */
export interface FetchedResource {
  status: number;
  /** Lower-cased header names. */
  headers: Record<string, string>;
  body: Buffer;
  /** The body was longer than the cap and was cut at it. */
  truncated: boolean;
}

/** Why an HTTPS fetch produced no response; `reason` says in words, for a finding. */
export interface FetchFailure {
  reason: string;
  /** A DNS failure resolving the host: the fetch could not be judged (the check is `error`, not `fail`). */
  temporary: boolean;
}

export type FetchOutcome = { ok: true; response: FetchedResource } | ({ ok: false } & FetchFailure);
