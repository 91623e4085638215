/**
 * Fetching one RDAP object over HTTP (RFC 7480), shared by the aggregator,
 * the authoritative-server path and the registrar follow-up: the RDAP Accept
 * header, redirects followed hop by hop (at most 5, HTTPS only, every hop a
 * fresh destination for outbound safety), a body cap, 404 kept apart from
 * failures, and 429 with Retry-After honoured (retry-after.ts).
 */
import { AppError, ProviderError } from '../../errors.js';
import { parseJson } from '../http-client.js';
import type { RetryAfterGate } from './retry-after.js';
import type { RdapObject } from './types.js';

/** RFC 7480 §4.2: ask for application/rdap+json; plain JSON is what some servers label it. */
export const RDAP_ACCEPT = 'application/rdap+json, application/json;q=0.9';

/** Redirects followed per lookup (rdap.org → registry, and RIR → RIR for transferred space). */
export const MAX_RDAP_REDIRECTS = 5;

/** RDAP objects are tens of kilobytes; ARIN networks with many contacts reach a few hundred. */
export const MAX_RDAP_BYTES = 2 * 1024 * 1024;

export interface HopResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

export interface HopRequest {
  headers: Record<string, string>;
  signal: AbortSignal;
  maxBytes: number;
  /** The URL came from vetted data (the IANA bootstrap): its explicit port is allowed. */
  listedPort?: number;
}

/**
 * Sends ONE GET without following redirects and resolves with whatever status
 * came back; rejects with a ProviderError for an operational failure (timeout,
 * network, TLS), or with a 400 AppError when outbound safety refuses the
 * destination. It may reject 5xx itself (HttpClient does), but must resolve
 * with a 429: its Retry-After is what the fetcher's gate records.
 */
export type HopSender = (url: string, req: HopRequest) => Promise<HopResponse>;

export type RdapDocument =
  | { status: 'found'; url: string; object: RdapObject; redirects: number }
  | { status: 'not_found'; url: string; redirects: number };

export interface RdapFetchOptions {
  signal: AbortSignal;
  /**
   * Sender for the first request only. The aggregator is operator-configured
   * and is reached with the plain client; every URL it redirects to (and
   * every registry and registrar URL) goes through `outbound`.
   */
  first?: HopSender;
  /**
   * Accept a plain-http `url` (an operator-configured aggregator, or a
   * bootstrap service that lists no https URL). Redirects are https only.
   */
  allowHttp?: boolean;
  /**
   * `url` is listed in the IANA bootstrap registry: a non-standard port in it
   * (`https://nic.samsung:8443/rdap/`) is allowed for that first request.
   */
  listed?: boolean;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

export class RdapFetcher {
  readonly #outbound: HopSender;
  readonly #gate: RetryAfterGate;

  constructor(outbound: HopSender, gate: RetryAfterGate) {
    this.#outbound = outbound;
    this.#gate = gate;
  }

  /**
   * GETs `url` and follows redirects. A 404 is `not_found` (the caller decides
   * whether it is definitive); 2xx with a JSON object is `found`; everything
   * else throws a ProviderError so the chain may fall back.
   */
  async fetch(url: string, opts: RdapFetchOptions): Promise<RdapDocument> {
    const protocol = new URL(url).protocol;
    if (protocol !== 'https:' && !(opts.allowHttp && protocol === 'http:')) {
      throw new ProviderError('bad_response', `refusing to fetch registration data from a ${protocol} URL`);
    }
    let current = url;
    for (let redirects = 0; ; redirects++) {
      this.#gate.check(current);
      const send = redirects === 0 && opts.first ? opts.first : this.#outbound;
      const port = new URL(current).port;
      const listedPort = redirects === 0 && opts.listed && port !== '' ? Number(port) : undefined;
      const res = await sendHop(send, current, opts.signal, listedPort);
      const host = new URL(current).host;

      if (REDIRECTS.has(res.status)) {
        const location = header(res.headers.location);
        if (!location)
          throw new ProviderError('bad_response', `HTTP ${res.status} from ${host} without Location`);
        if (redirects >= MAX_RDAP_REDIRECTS) {
          throw new ProviderError('bad_response', `more than ${MAX_RDAP_REDIRECTS} redirects from ${url}`);
        }
        const next = new URL(location, current);
        // Registration data travels over TLS only (RFC 7481): a redirect may not downgrade to http.
        if (next.protocol !== 'https:') {
          throw new ProviderError(
            'bad_response',
            `${host} redirected to a non-HTTPS URL (${next.protocol}), refused`,
          );
        }
        current = next.toString();
        continue;
      }
      if (res.status === 404) return { status: 'not_found', url: current, redirects };
      if (res.status === 429) {
        const until = this.#gate.record(current, res.headers['retry-after']);
        const gated = until === undefined ? '' : `; not asked again until ${new Date(until).toISOString()}`;
        throw new ProviderError('rate_limited', `HTTP 429 from ${host}${gated}`);
      }
      if (res.status < 200 || res.status > 299) {
        throw new ProviderError('http_status', `HTTP ${res.status} from ${host}`);
      }
      const object = parseJson<unknown>(res.body, current);
      if (typeof object !== 'object' || object === null || Array.isArray(object)) {
        throw new ProviderError('bad_response', `${host} answered JSON that is not an RDAP object`);
      }
      return { status: 'found', url: current, object: object as RdapObject, redirects };
    }
  }
}

async function sendHop(
  send: HopSender,
  url: string,
  signal: AbortSignal,
  listedPort: number | undefined,
): Promise<HopResponse> {
  try {
    return await send(url, {
      headers: { accept: RDAP_ACCEPT },
      signal,
      maxBytes: MAX_RDAP_BYTES,
      ...(listedPort === undefined ? {} : { listedPort }),
    });
  } catch (err) {
    // Outbound safety refusing a destination an UPSTREAM named (a redirect,
    // a bootstrap URL) is a fault of that upstream, not bad input from the
    // user: it must let the chain fall back, never become a 400. Likewise a
    // failed DNS lookup of that host (the resolver's 502) is this source's failure.
    if (err instanceof AppError) {
      const host = new URL(url).host;
      throw err.statusCode === 400
        ? new ProviderError('upstream_error', `refused to contact ${host}: ${err.message}`, { cause: err })
        : new ProviderError('network', `${host}: ${err.message}`, { cause: err });
    }
    throw err;
  }
}

function header(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
