/**
 * crt.sh (Sectigo's CT search) as a CT provider: the free, keyless primary.
 *
 * One lookup is one JSON identity search, `q=D`. crt.sh strips a leading `%.`
 * from a search (certwatch_db fnc/web_apis.fnc), so `q=%.D` is the very same
 * search: names containing D, look-alikes included, which the lookup's scope
 * filter drops. The search:
 * - is bounded by CRTSH_REQUEST_TIMEOUT_MS, just past crt.sh's own 30 s
 *   request deadline so its verdict arrives before we give up;
 * - is retried once with `&exclude=expired` when crt.sh ran out of time on it
 *   (a database statement timeout, or its front end's 30 s deadline): a
 *   smaller search is the only remedy crt.sh offers, and the unexpired subset
 *   of a large history usually fits; the result then carries an
 *   `expired_excluded` gap;
 * - is retried once, after a jittered pause, on any other 502/503: crt.sh's
 *   overloaded front end answers those often and briefly, and its other
 *   database errors (a replica's recovery conflict, a lost connection) are as
 *   passing; a smaller search would not help them;
 * - is read for truncation: crt.sh stops at CRTSH_RESULT_LIMIT matching names
 *   and then answers an arbitrary subset, saying so only in the sum of the
 *   rows' `result_count` (see matchedNameCount).
 * Anything else (timeout, network, TLS, 429, other statuses, an unparseable
 * body) is an operational failure thrown to the chain.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { ProviderError } from '../../errors.js';
import { deadlineSignal } from '../deadline.js';
import { type HttpClient, joinUrl, parseJson } from '../http-client.js';
import type { ProviderInfo } from '../types.js';
import { certificateDnsNames, isoUtc, issuerFromDn, normalizeSerial } from './normalize.js';
import type { CtGap, CtIssuance, CtProvider, CtRecords } from './types.js';

/** crt.sh's web front end cancels a request after 30 s (crtsh/crtsh-web config.go, server.requestTimeout). */
export const CRTSH_REQUEST_TIMEOUT_MS = 35_000;
/** A popular domain's JSON runs to megabytes (about 350 bytes a row). */
export const MAX_CRTSH_BYTES = 16 * 1024 * 1024;
/**
 * Matching name rows crt.sh reads per search (certwatch_db fnc/web_apis.fnc,
 * `c_resultLimit`, applied as a LIMIT before the rows are grouped by
 * certificate and sorted, so what it keeps at the limit is arbitrary).
 */
export const CRTSH_RESULT_LIMIT = 10_000;

/**
 * One row of crt.sh's `output=json`: one certificate (web_apis.fnc, the
 * identity search's `row_to_json`). `name_value` holds the identities that
 * matched the search, distinct, newline-separated, and may include email
 * addresses; `result_count` (since November 2023) is how many of the
 * certificate's name rows matched, counting a name once per place it appears
 * (subject CN, DNS SAN, ...). The legacy schema (before about 2021) also lacks
 * `common_name` and `serial_number`.
 */
interface CrtshRow {
  issuer_ca_id?: number;
  issuer_name?: string;
  common_name?: string | null;
  name_value?: string;
  id?: number;
  entry_timestamp?: string | null;
  not_before?: string;
  not_after?: string;
  serial_number?: string | null;
  result_count?: number;
}

export interface CrtshOptions {
  /** Bound on each HTTP request. Default CRTSH_REQUEST_TIMEOUT_MS. */
  requestTimeoutMs?: number;
  /** Milliseconds to pause before retrying a 502/503; default 250–750 ms, jittered so callers do not retry in step. */
  retryDelayMs?: () => number;
}

export class CrtshProvider implements CtProvider {
  readonly info: ProviderInfo;
  readonly #http: Pick<HttpClient, 'send'>;
  readonly #requestTimeoutMs: number;
  readonly #retryDelayMs: () => number;

  constructor(info: ProviderInfo, http: Pick<HttpClient, 'send'>, opts: CrtshOptions = {}) {
    this.info = info;
    this.#http = http;
    this.#requestTimeoutMs = opts.requestTimeoutMs ?? CRTSH_REQUEST_TIMEOUT_MS;
    this.#retryDelayMs = opts.retryDelayMs ?? (() => 250 + Math.random() * 500);
  }

  async issuances(domain: string, signal: AbortSignal): Promise<CtRecords> {
    let excludeExpired = false;
    let retried = false;
    for (;;) {
      const url = searchUrl(this.info.endpoint, domain, excludeExpired);
      const res = await this.#http.send(url, {
        headers: { accept: 'application/json' },
        signal: deadlineSignal(this.#requestTimeoutMs, signal),
        maxBytes: MAX_CRTSH_BYTES,
        // Read here rather than thrown by the client: a 503 may be crt.sh's database error page.
        passStatuses: [502, 503],
      });
      if (res.status === 200) {
        return crtshRecords(parseJson<unknown>(res.body, url), this.info.id, excludeExpired);
      }
      const failure = crtshFailure(res.status, res.body.toString('utf8'), new URL(url).host);
      if (failure.outOfTime && !excludeExpired) {
        excludeExpired = true;
        continue;
      }
      if (failure.transient && !retried) {
        retried = true;
        await pause(this.#retryDelayMs(), signal);
        continue;
      }
      const text = failure.outOfTime ? `${failure.text}, even with exclude=expired` : failure.text;
      throw new ProviderError(failure.kind, text);
    }
  }
}

/** `{base}/?q=...&output=json[&exclude=expired]`; `%` is sent as `%25`. */
export function searchUrl(base: string, q: string, excludeExpired: boolean): string {
  return `${joinUrl(base, '/')}?q=${encodeURIComponent(q)}&output=json${excludeExpired ? '&exclude=expired' : ''}`;
}

/** What a crt.sh answer other than 200 says, and what may still be tried. */
export interface CrtshFailure {
  kind: 'http_status' | 'upstream_error';
  /** For providers_tried: which case it was, in crt.sh's own words where it gives them. */
  text: string;
  /** crt.sh ran out of time on the search: the smaller `exclude=expired` search may fit. */
  outOfTime: boolean;
  /** Passing trouble: the same search may succeed a moment later. */
  transient: boolean;
}

/**
 * Reads a crt.sh answer other than 200. crt.sh's front end (crtsh/crtsh-web
 * request/webapis.go, server/server.go) answers 503 in two ways of its own:
 * - any error of its database call, whatever it was, as an HTML page "Sorry,
 *   something went wrong... Your request was terminated by the crt.sh
 *   database server after N seconds with the following messages:" quoting
 *   the PostgreSQL error (request/templates/error.qtpl), HTML-escaped. Only
 *   "canceling statement due to statement timeout" (SQLSTATE 57014) means the
 *   search was too big; the others (a replica's recovery conflict, a lost or
 *   refused connection) have nothing to do with its size, and an error the
 *   search function raises itself (SQLSTATE P0002, e.g. "Unsupported use of
 *   '%'") refuses this search whatever is retried;
 * - the request outlived the front end's own 30 s deadline: `text/plain`
 *   "ERROR". Time ran out, as with a statement timeout.
 * Any other 502/503 comes from the servers in front (nginx, overloaded).
 */
export function crtshFailure(status: number, body: string, host: string): CrtshFailure {
  const http = `HTTP ${status} from ${host}`;
  if (status === 503 && body.trim() === 'ERROR') {
    return {
      kind: 'upstream_error',
      text: `the search outlived crt.sh's 30 s request deadline (${http}: "ERROR")`,
      outOfTime: true,
      transient: false,
    };
  }
  if (status === 503 && /terminated by the crt\.sh database server/i.test(body)) {
    const message = databaseMessage(body);
    if (/canceling statement due to statement timeout/i.test(message)) {
      return {
        kind: 'upstream_error',
        text: `crt.sh's database stopped the search at its statement timeout (${http})`,
        outOfTime: true,
        transient: false,
      };
    }
    const quoted = message === '' ? '' : `: ${message}`;
    if (/\(SQLSTATE P0\d{3}\)/.test(message)) {
      return {
        kind: 'upstream_error',
        text: `crt.sh refused the search (${http})${quoted}`,
        outOfTime: false,
        transient: false,
      };
    }
    return {
      kind: 'upstream_error',
      text: `crt.sh's database failed (${http})${quoted}`,
      outOfTime: false,
      transient: true,
    };
  }
  return { kind: 'http_status', text: http, outOfTime: false, transient: status === 502 || status === 503 };
}

/** Longest database message quoted in providers_tried (an error may quote the whole SQL statement). */
const MAX_MESSAGE_CHARS = 200;

/** The PostgreSQL error quoted in crt.sh's error page (its TEXTAREA), unescaped, first line, bounded. */
function databaseMessage(page: string): string {
  const quoted = /<textarea[^>]*>([\s\S]*?)<\/textarea>/i.exec(page)?.[1] ?? '';
  const text = quoted
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;|&#34;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&');
  const line = (text.split('\n').find((l) => l.trim() !== '') ?? '').trim().replace(/\s+/g, ' ');
  return line.length > MAX_MESSAGE_CHARS ? `${line.slice(0, MAX_MESSAGE_CHARS)}…` : line;
}

/** crt.sh rows as issuances; rows lacking an id or validity dates are skipped, a non-array body is a failure. */
export function parseCrtshRows(data: unknown, sourceId: string): CtIssuance[] {
  if (!Array.isArray(data))
    throw new ProviderError('bad_response', 'crt.sh answered JSON that is not an array');
  const out: CtIssuance[] = [];
  for (const row of data as unknown[]) {
    const issuance = crtshRowToIssuance(row, sourceId);
    if (issuance) out.push(issuance);
  }
  return out;
}

/**
 * A crt.sh JSON answer as records, with its gaps: crt.sh's result limit when
 * the matched names reach it, and the expired certificates when the search
 * had to leave them out.
 */
export function crtshRecords(data: unknown, sourceId: string, expiredExcluded: boolean): CtRecords {
  const issuances = parseCrtshRows(data, sourceId);
  const gaps: CtGap[] = [];
  if (matchedNameCount(data as unknown[]) >= CRTSH_RESULT_LIMIT) {
    gaps.push({
      reason: 'result_cap',
      detail:
        `crt.sh stops a search at ${CRTSH_RESULT_LIMIT.toLocaleString('en-US')} matching names and then ` +
        'returns an arbitrary subset of them: this history is a partial, arbitrary sample (not the newest ' +
        'part), and its counts are of what crt.sh returned.',
    });
  }
  if (expiredExcluded) {
    gaps.push({
      reason: 'expired_excluded',
      detail:
        'crt.sh ran out of time on the full history, so it was asked again for unexpired certificates ' +
        'only: expired history is missing.',
    });
  }
  return { issuances, gaps };
}

/**
 * How many name rows crt.sh matched: the sum of the rows' `result_count`,
 * which reaches CRTSH_RESULT_LIMIT exactly when crt.sh stopped there (its
 * HTML page shows "your search results have been truncated" on the same
 * test; the JSON says nothing else). A row without the field (an answer from
 * before November 2023, or a proxy's) matched at least one name, so it counts
 * one: the sum is then a lower bound.
 */
export function matchedNameCount(rows: readonly unknown[]): number {
  let sum = 0;
  for (const row of rows) {
    const count = typeof row === 'object' && row !== null ? (row as CrtshRow).result_count : undefined;
    sum += typeof count === 'number' && Number.isInteger(count) && count >= 1 ? count : 1;
  }
  return sum;
}

export function crtshRowToIssuance(raw: unknown, sourceId: string): CtIssuance | undefined {
  if (typeof raw !== 'object' || raw === null) return undefined;
  const row = raw as CrtshRow;
  const notBefore = isoUtc(row.not_before);
  const notAfter = isoUtc(row.not_after);
  if (typeof row.id !== 'number' || notBefore === undefined || notAfter === undefined) return undefined;
  const commonName = typeof row.common_name === 'string' && row.common_name !== '' ? row.common_name : null;
  const issuance: CtIssuance = {
    id: String(row.id),
    source_id: sourceId,
    serial: normalizeSerial(row.serial_number),
    issuer: issuerFromDn(typeof row.issuer_name === 'string' ? row.issuer_name : 'unknown'),
    common_name: commonName,
    // The subject CN is a DNS name on a TLS certificate too; non-DNS identities are dropped.
    dns_names: certificateDnsNames([...(row.name_value ?? '').split('\n'), commonName]),
    not_before: notBefore,
    not_after: notAfter,
  };
  const entry = isoUtc(row.entry_timestamp);
  if (entry) issuance.entry_timestamp = entry;
  return issuance;
}

async function pause(ms: number, signal: AbortSignal): Promise<void> {
  try {
    await sleep(ms, undefined, { signal });
  } catch {
    throw new ProviderError('timeout', 'crt.sh retry abandoned: request aborted');
  }
}
