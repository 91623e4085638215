/**
 * netdiag/client: the typed way to call a netdiag instance, used by the site, by the CLI's
 * `--api` mode and by anyone's TypeScript. Paths, parameters and 200 bodies come from
 * openapi.gen.d.ts, which the build generates from the app's own /openapi.json (not
 * committed), so a request the contract does not allow does not compile.
 *
 * Two ways in, over one openapi-fetch client:
 * - `client.GET('/api/dns', { params: { query: { target, type } } })`, typed end to end;
 * - `client.call(method, path, input)`, for callers that hold the path as data (the CLI's
 *   tool table, the site's `Call`): one answer shape, and a request that got no HTTP answer
 *   is status 0 with an `{error}` body rather than a throw, so "the API said no" and "the
 *   network failed" are told apart without a try/catch. Only an abort throws.
 *
 * Runs where fetch does (browsers, Node 20+): nothing here may need Node's own modules.
 */
import createClient, { type Client } from 'openapi-fetch';
import type { paths } from './openapi.gen.js';

export type { paths };

type JsonOf<R> = R extends { content: { 'application/json': infer T } } ? T : never;

type Operation<P extends string, M extends 'get' | 'post'> = P extends keyof paths
  ? paths[P] extends { [K in M]: infer O }
    ? O
    : never
  : never;

/** The 200 body of an operation. */
export type Ok<P extends string, M extends 'get' | 'post' = 'get'> =
  Operation<P, M> extends {
    responses: { 200: infer R };
  }
    ? JsonOf<R>
    : never;

/** The query parameters of a GET operation (one whose parameters are all optional too: /api/blocklists). */
export type QueryOf<P extends string> =
  Operation<P, 'get'> extends { parameters: { query?: infer Q } } ? NonNullable<Q> : never;

/** The JSON body of a POST operation. */
export type BodyOf<P extends string> =
  Operation<P, 'post'> extends {
    requestBody: { content: { 'application/json': infer B } };
  }
    ? B
    : never;

export type GetPath = { [P in keyof paths]: paths[P] extends { get: object } ? P : never }[keyof paths];
export type PostPath = { [P in keyof paths]: paths[P] extends { post: object } ? P : never }[keyof paths];

/** Every error body: `{error, code?, providers_tried?}` (the 502 shape is the widest). */
export type ErrorBody = JsonOf<paths['/api/dns']['get']['responses'][502]>;

export interface NetdiagClientOptions {
  /** The instance's origin, e.g. `https://netdiag.example` (paths start with /api/). */
  baseUrl: string;
  /** Instead of the global fetch (tests, instrumentation, a proxy agent). */
  fetch?: typeof fetch;
  /** Sent with every request. */
  headers?: Record<string, string>;
}

/** What `call` resolves to, whatever the status. */
export interface ApiAnswer {
  /** The HTTP status; 0 when no HTTP answer arrived (refused, unreachable, offline). */
  status: number;
  /** The parsed JSON body; null when there was none or it was not JSON. */
  body: unknown;
  headers: Headers;
  /** Whole seconds from Retry-After (429, 503), when the server sent one. */
  retryAfter: number | null;
}

export interface CallInput {
  query?: Record<string, string | string[]>;
  /** Sent as JSON. */
  body?: unknown;
  /**
   * Sent as it is, with this content type, instead of `body`: a route that takes a raw body
   * (POST /api/message: the message as message/rfc822 or text/plain, its other parameters in
   * `query`). A message is bytes, and JSON would both escape it past the route's size limit and
   * lose what is not UTF-8.
   */
  raw?: { bytes: Uint8Array | string; contentType: string };
  signal?: AbortSignal;
}

export interface NetdiagClient extends Client<paths> {
  call(method: 'GET' | 'POST', path: string, input?: CallInput): Promise<ApiAnswer>;
}

/** Retry-After is seconds or an HTTP date (RFC 9110 §10.2.3); the API sends seconds. */
export function parseRetryAfter(value: string | null, now = Date.now()): number | null {
  if (value === null || value.trim() === '') return null;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, Math.ceil((at - now) / 1000));
}

/** openapi-fetch's request with the path as data: `call` checks nothing against the contract. */
type UntypedRequest = (
  method: string,
  path: string,
  init: Record<string, unknown>,
) => Promise<{ data?: unknown; error?: unknown; response: Response }>;

/**
 * With parseAs 'text', openapi-fetch hands a 2xx body over as text and has already tried
 * JSON.parse on any other (leaving the text when that failed): one rule for both, JSON or null.
 */
function jsonOrNull(value: unknown): unknown {
  if (value === undefined) return null;
  if (typeof value !== 'string') return value;
  try {
    return JSON.parse(value);
  } catch {
    return null;
  }
}

/** Why no HTTP answer arrived: Node's fetch puts the socket error in `cause`, browsers say nothing useful. */
function unreachable(err: unknown, baseUrl: string): string {
  const cause = err instanceof Error && err.cause instanceof Error ? err.cause.message : undefined;
  return `the service at ${baseUrl} could not be reached (${cause ?? 'network error or offline'})`;
}

export function createNetdiagClient(opts: NetdiagClientOptions): NetdiagClient {
  const client = createClient<paths>({
    baseUrl: opts.baseUrl,
    ...(opts.fetch ? { fetch: opts.fetch } : {}),
    headers: { accept: 'application/json', ...opts.headers },
    // The lookup session cookie (challenge protection) is same-origin; say so rather than rely on the default.
    credentials: 'same-origin',
  });
  const request = client.request as unknown as UntypedRequest;

  async function call(method: 'GET' | 'POST', path: string, input: CallInput = {}): Promise<ApiAnswer> {
    try {
      const { data, error, response } = await request(method, path, {
        params: { query: input.query },
        ...(input.raw
          ? {
              body: input.raw.bytes,
              bodySerializer: (bytes: Uint8Array | string) => bytes,
              headers: { 'content-type': input.raw.contentType },
            }
          : { body: input.body }),
        signal: input.signal,
        parseAs: 'text',
      });
      return {
        status: response.status,
        body: jsonOrNull(response.ok ? data : error),
        headers: response.headers,
        retryAfter: parseRetryAfter(response.headers.get('retry-after')),
      };
    } catch (err) {
      if (input.signal?.aborted) throw err;
      return {
        status: 0,
        body: { error: unreachable(err, opts.baseUrl) },
        headers: new Headers(),
        retryAfter: null,
      };
    }
  }

  return Object.assign(client, { call });
}
