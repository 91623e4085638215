/**
 * The site's only way to reach the API: one request description (`Call`)
 * that is sent (through the typed client, src/client, as every caller of the
 * API does), shown as curl and used as a cache key, and one outcome type that
 * keeps "the API answered an error" apart from "the network failed".
 *
 * Calls are built through `get`/`post`, whose parameters are checked against
 * the generated contract; the 200 body is typed by the caller's contract type.
 */
import { createNetdiagClient } from '../../client';
import type { BodyOf, ErrorBody, GetPath, PostPath, QueryOf } from './types';

export interface Call {
  method: 'GET' | 'POST';
  /** Path without query, e.g. /api/dns. */
  path: string;
  query?: Readonly<Record<string, string>>;
  body?: unknown;
  /** A body sent as text rather than JSON (POST /api/message: the pasted message as text/plain). */
  text?: { body: string; contentType: 'text/plain' };
}

export type Outcome<T> =
  | { ok: true; status: number; data: T; cache: string | null; ms: number }
  | {
      ok: false;
      /** 0 when no HTTP answer arrived at all. */
      status: number;
      error: ErrorBody;
      /** Whole seconds from Retry-After, when the server sent one. */
      retryAfter: number | null;
      ms: number;
    };

function stringQuery(query: object): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(query)) {
    if (value !== undefined && value !== null && value !== '') out[key] = String(value);
  }
  return out;
}

export function get<P extends GetPath>(path: P, query: QueryOf<P>): Call {
  return { method: 'GET', path, query: stringQuery(query as object) };
}

export function post<P extends PostPath>(path: P, body: BodyOf<P>): Call {
  return { method: 'POST', path, body };
}

/**
 * A POST whose body is text (the pasted message), its other parameters in the query: the text is
 * sent as it is, so its size is the route's limit (JSON would escape every line end).
 */
export function postText<P extends PostPath>(
  path: P,
  query: Readonly<Record<string, string>>,
  text: string,
): Call {
  return { method: 'POST', path, query: stringQuery(query), text: { body: text, contentType: 'text/plain' } };
}

export function callUrl(call: Call): string {
  const qs = new URLSearchParams(call.query ?? {}).toString();
  return qs ? `${call.path}?${qs}` : call.path;
}

/** A stable key for the in-page result cache. */
export function callKey(call: Call): string {
  const body = call.text ? call.text.body : call.body === undefined ? '' : JSON.stringify(call.body);
  return `${call.method} ${callUrl(call)} ${body}`;
}

function quote(s: string): string {
  return `'${s.replaceAll("'", `'\\''`)}'`;
}

/** The same request as a shell command a person can paste. */
export function curlCommand(call: Call, origin: string): string {
  const url = quote(origin + callUrl(call));
  if (call.method === 'GET') return `curl -s ${url}`;
  // Never the text itself (a message of megabytes in a tooltip): the file it would be in.
  if (call.text)
    return `curl -s -X POST ${url} -H 'content-type: ${call.text.contentType}' --data-binary @message.eml`;
  return `curl -s -X POST ${url} -H 'content-type: application/json' -d ${quote(JSON.stringify(call.body ?? {}))}`;
}

function isErrorBody(value: unknown): value is ErrorBody {
  return typeof value === 'object' && value !== null && typeof (value as ErrorBody).error === 'string';
}

/** `send`'s shape, for the parts of the page that are handed a sender (tests hand them fakes). */
export type Sender = <T>(call: Call, signal?: AbortSignal) => Promise<Outcome<T>>;

export async function send<T>(call: Call, signal?: AbortSignal): Promise<Outcome<T>> {
  const started = performance.now();
  // The page's own origin: the API and the lookup session cookie are same-origin.
  const answer = await createNetdiagClient({ baseUrl: location.origin }).call(call.method, call.path, {
    query: call.query,
    ...(call.text
      ? { raw: { bytes: call.text.body, contentType: call.text.contentType } }
      : { body: call.body }),
    signal,
  });
  const ms = Math.round(performance.now() - started);
  const { status, body } = answer;
  if (status >= 200 && status < 300 && body !== null) {
    // Trusted cast: the body is what the contract says this path answers with a 200.
    return { ok: true, status, data: body as T, cache: answer.headers.get('x-service-cache'), ms };
  }
  return {
    ok: false,
    status,
    // With no HTTP answer (status 0) the client says why in the same {error} shape.
    error: isErrorBody(body) ? body : { error: `the service answered HTTP ${status} without a JSON error` },
    retryAfter: answer.retryAfter,
    ms,
  };
}
