/**
 * A tool call answered by its route, in-process (Fastify's inject): the request runs the
 * whole pipeline, so the rate limiter counts it against the caller's address, the challenge
 * gate reads the caller's session cookie, the cache and attribution apply, and the access
 * log has its line. Nothing is answered around the route.
 */
import type { FastifyInstance } from 'fastify';
import { parseRetryAfter } from '../../client/index.js';
import type { ToolSpec } from './catalog.js';

/** Who is asking: the address the limiter counts and the headers the route may read. */
export interface Caller {
  /** The caller's address (clientIp of the request that carried the tool call); 127.0.0.1 for a local process. */
  ip: string;
  /** The caller's Cookie header: the lookup session when challenge protection is on. */
  cookie?: string | undefined;
  userAgent?: string | undefined;
  /** Correlates the route's access-log line with the request that carried the call. */
  requestId?: string | undefined;
}

export interface RouteAnswer {
  status: number;
  /** The route's JSON body (null when it sent none). */
  body: unknown;
  /** Whole seconds from Retry-After (429, 503), when sent. */
  retryAfter: number | null;
  /** X-Service-Cache: HIT, MISS or BYPASS. */
  cache: string | null;
}

export type ToolArguments = Readonly<Record<string, unknown>>;

/** Query-string form of tool arguments: booleans and numbers as text, arrays as repeated keys. */
export function queryOf(args: ToolArguments): Record<string, string | string[]> {
  const query: Record<string, string | string[]> = {};
  for (const [key, value] of Object.entries(args)) {
    if (value === undefined || value === null) continue;
    query[key] = Array.isArray(value) ? value.map(String) : String(value);
  }
  return query;
}

function header(value: string | string[] | number | undefined): string | null {
  if (value === undefined) return null;
  return Array.isArray(value) ? (value[0] ?? null) : String(value);
}

/**
 * A body sent as it is rather than the arguments as JSON (the CLI's `netdiag message`: the file's
 * bytes as message/rfc822); the tool's arguments then go in the query.
 */
export interface RawBody {
  bytes: Uint8Array;
  contentType: string;
}

export async function callRoute(
  app: FastifyInstance,
  spec: ToolSpec,
  args: ToolArguments,
  caller: Caller,
  raw?: RawBody,
): Promise<RouteAnswer> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (raw) headers['content-type'] = raw.contentType;
  if (caller.cookie) headers.cookie = caller.cookie;
  if (caller.userAgent) headers['user-agent'] = caller.userAgent;
  if (caller.requestId) headers['x-request-id'] = caller.requestId;
  const res = await app.inject({
    method: spec.method,
    url: spec.path,
    remoteAddress: caller.ip,
    headers,
    ...(spec.method === 'GET'
      ? { query: queryOf(args) }
      : raw
        ? { query: queryOf(args), payload: Buffer.from(raw.bytes) }
        : { payload: { ...args } }),
  });
  let body: unknown = null;
  try {
    body = res.payload === '' ? null : JSON.parse(res.payload);
  } catch {
    body = null;
  }
  return {
    status: res.statusCode,
    body,
    retryAfter: parseRetryAfter(header(res.headers['retry-after'])),
    cache: header(res.headers['x-service-cache']),
  };
}

/** The `{error}` text of a non-200 answer, with what to do about a 429. */
export function errorText(answer: RouteAnswer): string {
  const body = answer.body as { error?: unknown; code?: unknown } | null;
  const error = typeof body?.error === 'string' ? body.error : `the route answered HTTP ${answer.status}`;
  // The limiter's own text already says when to retry; say it once.
  if (answer.status === 429 && answer.retryAfter !== null && !/retry after \d+ s/.test(error)) {
    return `${error} (HTTP 429: retry after ${answer.retryAfter} s)`;
  }
  return `${error} (HTTP ${answer.status}${typeof body?.code === 'string' ? `, ${body.code}` : ''})`;
}
