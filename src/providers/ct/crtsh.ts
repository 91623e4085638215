/**
 * crt.sh (Sectigo's CT search) as a CT provider: the free, keyless primary.
 *
 * One lookup is two JSON searches run concurrently, `q=%.D` (every name
 * below D) and `q=D` (the apex), merged by crt.sh certificate id. Each search:
 * - is bounded by CRTSH_REQUEST_TIMEOUT_MS, just past crt.sh's own 30 s
 *   request deadline so its verdict arrives before we give up;
 * - is retried once, after a jittered pause, on a plain 502/503 (crt.sh's
 *   overloaded front end answers those often and briefly);
 * - is retried once with `&exclude=expired` when crt.sh says its database
 *   gave up on the query (see isDatabaseTimeout), since the unexpired subset
 *   of a large history usually does fit; the result is then flagged
 *   `expired_excluded`.
 * Anything else (timeout, network, TLS, 429, other statuses, an unparseable
 * body) is an operational failure thrown to the chain.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { deadlineSignal } from '../deadline.js';
import { type HttpClient, joinUrl, parseJson } from '../http-client.js';
import { ProviderError, type ProviderInfo } from '../types.js';
import { certificateDnsNames, isoUtc, issuerFromDn, normalizeSerial } from './normalize.js';
import type { CtIssuance, CtProvider, CtRecords } from './types.js';

/** crt.sh's web front end cancels a request after 30 s (crtsh/crtsh-web config.go, server.requestTimeout). */
export const CRTSH_REQUEST_TIMEOUT_MS = 35_000;
/** A popular domain's JSON runs to megabytes (about 350 bytes a row). */
export const MAX_CRTSH_BYTES = 16 * 1024 * 1024;

/**
 * One row of crt.sh's `output=json`. The current schema; the legacy one
 * (before about 2021) lacks `common_name` and `serial_number`. `name_value`
 * holds the identities that matched the search, newline-separated, and may
 * include email addresses.
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
}

export interface CrtshOptions {
  /** Bound on each HTTP request. Default CRTSH_REQUEST_TIMEOUT_MS. */
  requestTimeoutMs?: number;
  /** Milliseconds to pause before retrying a 502/503; default 250–750 ms, jittered so callers do not retry in step. */
  retryDelayMs?: () => number;
}

type SearchResult = { rows: CtIssuance[]; expiredExcluded: boolean };

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
    // When one search fails the other is pointless: the answer must be whole or a failure.
    const sibling = new AbortController();
    const linked = AbortSignal.any([signal, sibling.signal]);
    const search = (q: string) =>
      this.#search(q, linked).catch((err: unknown) => {
        sibling.abort();
        throw err;
      });
    const results = await Promise.all([search(`%.${domain}`), search(domain)]);
    return {
      issuances: mergeById(results.flatMap((r) => r.rows)),
      truncated: false,
      expired_excluded: results.some((r) => r.expiredExcluded),
    };
  }

  async #search(q: string, signal: AbortSignal): Promise<SearchResult> {
    let excludeExpired = false;
    let retried = false;
    for (;;) {
      const url = searchUrl(this.info.endpoint, q, excludeExpired);
      const res = await this.#http.send(url, {
        headers: { accept: 'application/json' },
        signal: deadlineSignal(this.#requestTimeoutMs, signal),
        maxBytes: MAX_CRTSH_BYTES,
        // Read here rather than thrown by the client: a 503 may be the database-timeout page.
        passStatuses: [502, 503],
      });
      if (res.status === 200) {
        return {
          rows: parseCrtshRows(parseJson<unknown>(res.body, url), this.info.id),
          expiredExcluded: excludeExpired,
        };
      }
      const host = new URL(url).host;
      if (isDatabaseTimeout(res.status, res.body.toString('utf8'))) {
        if (excludeExpired) {
          throw new ProviderError('http_status', `${host}: database timeout, even with exclude=expired`);
        }
        excludeExpired = true;
        continue;
      }
      if ((res.status === 502 || res.status === 503) && !retried) {
        retried = true;
        await pause(this.#retryDelayMs(), signal);
        continue;
      }
      throw new ProviderError('http_status', `HTTP ${res.status} from ${host}`);
    }
  }
}

/** `{base}/?q=...&output=json[&exclude=expired]`; `%` is sent as `%25`. */
export function searchUrl(base: string, q: string, excludeExpired: boolean): string {
  return `${joinUrl(base, '/')}?q=${encodeURIComponent(q)}&output=json${excludeExpired ? '&exclude=expired' : ''}`;
}

/**
 * Whether a crt.sh answer says its database gave up on the query. Both of
 * crt.sh's front ends answer 503 then (crtsh/crtsh-web request/webapis.go and
 * server/server.go; crtsh/mod_certwatch before it):
 * - the query failed in PostgreSQL: an HTML page "Sorry, something went
 *   wrong... Your request was terminated by the crt.sh database server after
 *   N seconds with the following messages:" quoting the error, here
 *   "canceling statement due to statement timeout" (SQLSTATE 57014);
 * - the request outlived the front end's own deadline: `text/plain` "ERROR".
 */
export function isDatabaseTimeout(status: number, body: string): boolean {
  if (status !== 503) return false;
  return (
    /canceling statement due to statement timeout/i.test(body) ||
    /terminated by the crt\.sh database server/i.test(body) ||
    body.trim() === 'ERROR'
  );
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

/**
 * One record per crt.sh id. The two searches return the same certificate
 * with different `name_value`s (each lists only the names it matched), so
 * the names are united.
 */
function mergeById(rows: CtIssuance[]): CtIssuance[] {
  const byId = new Map<string, CtIssuance>();
  for (const row of rows) {
    const seen = byId.get(row.id);
    if (!seen) byId.set(row.id, row);
    else seen.dns_names = [...new Set([...seen.dns_names, ...row.dns_names])].sort();
  }
  return [...byId.values()];
}

async function pause(ms: number, signal: AbortSignal): Promise<void> {
  try {
    await sleep(ms, undefined, { signal });
  } catch {
    throw new ProviderError('timeout', 'crt.sh retry abandoned: request aborted');
  }
}
