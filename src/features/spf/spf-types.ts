/**
 * The shapes of an SPF evaluation (RFC 7208 §2.6 results, the §4.6.4 limits,
 * the trace), shared by check_host(), the tree walk and where receivers stop,
 * the service, the response schema and the email-security check.
 */
import type { SpfIp } from './macros.js';

export const SPF_RESULTS = ['pass', 'fail', 'softfail', 'neutral', 'none', 'temperror', 'permerror'] as const;
export type SpfResult = (typeof SPF_RESULTS)[number];

/** RFC 7208 §4.6.4: at most 10 terms that cause DNS queries, and at most 2 lookups that find nothing (void). */
export const LOOKUP_LIMIT = 10;
export const VOID_LOOKUP_LIMIT = 2;
/** RFC 7208 §4.6.4: an `mx` term naming more hosts is a permerror; of a PTR answer only this many names are used. */
export const NAMES_PER_LOOKUP_LIMIT = 10;

export type SpfTraceOutcome = 'match' | 'no_match' | 'error' | 'not_reached';

/** One step of the evaluation; `depth` grows by one through each include or redirect. */
export interface SpfTraceEntry {
  /** `omitted`: terms of this record not listed (TRACE_LIMITS), `count` of them. */
  step: 'record' | 'term' | 'result' | 'omitted';
  depth: number;
  /** The <domain> being evaluated at this step. */
  domain: string;
  /** record: how this domain was reached. */
  via?: 'check' | 'include' | 'redirect';
  /** record: the SPF record selected, when there is one. */
  record?: string;
  /** term: the mechanism or modifier as written. */
  term?: string;
  /** term: the domain it queried, macros expanded. */
  target?: string;
  /** term: counted against the 10-lookup limit. */
  lookup?: boolean;
  /** term: its lookup found nothing (counted against the void limit). */
  void?: boolean;
  outcome?: SpfTraceOutcome;
  /** result: check_host()'s result for this domain. */
  result?: SpfResult;
  /** omitted: how many terms of this record are not listed. */
  count?: number;
  detail: string;
}

export interface SpfCheckInput {
  ip: SpfIp;
  /** <sender> after defaulting: `local@domain` (§4.3: `postmaster` when the local part is empty). */
  sender: string;
  helo: string;
  /** The domain whose policy is checked first. */
  domain: string;
  /** %{r}: the name of the host performing the check. */
  receiver: string;
  /** %{t}: seconds since the epoch. */
  now: number;
}

export interface SpfMatch {
  mechanism: string;
  record_domain: string;
  depth: number;
}

export interface SpfCheckOutcome {
  result: SpfResult;
  /** From exp= on a fail (§6.2); absent when there is none or it could not be used. */
  explanation?: string;
  /** Why the explanation is absent or shortened, when an exp= was there to read. */
  explanationNote?: string;
  matched?: SpfMatch;
  lookups: number;
  void_lookups: number;
  trace: SpfTraceEntry[];
  /** The problem behind a permerror or temperror, in words. */
  problem?: string;
  /** A macro of the policy read the sender's local part (%{l} or %{s}). */
  usedLocalPart: boolean;
}

/**
 * What this service makes of an exp= explanation (§6.2 leaves its use to the
 * receiver): a sentence for a person, so a TXT record longer than `txtChars` or
 * with more than `macros` macros is not used, and an expansion longer than
 * `chars` is cut there. Without these a 60 KB record of %{S} made 22 MB.
 */
export const EXPLANATION_LIMITS = { txtChars: 1024, macros: 32, chars: 512 } as const;

/**
 * What a trace or tree shows of what a record holds (the domain writes it, and
 * a record may hold thousands of terms): a record's terms are listed up to
 * `terms`, then counted (in /api/spf, only the ones that decided nothing: an
 * address range that did not match, a term not reached; terms that matched,
 * failed or queried DNS are always listed, and the §4.6.4 limits bound those);
 * the text of a record, a term and a detail is cut at its length.
 */
export const TRACE_LIMITS = { terms: 50, record: 2048, term: 256, detail: 600 } as const;
