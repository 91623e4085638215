/**
 * Outbound HTTP to operator-configured upstreams (rdap.org, crt.sh, ...).
 * One undici Agent per process with keep-alive; every failure that should let
 * the chain fall back is thrown as a ProviderError of the right kind, and a
 * response body is capped so a hostile or broken upstream cannot exhaust memory.
 *
 * User-named destinations (inspect, tls, MTA-STS, BIMI) do not come through
 * here: they go through net/ with pinned, checked addresses.
 */
import { promisify } from 'node:util';
import { brotliDecompress, gunzip, type ZlibOptions } from 'node:zlib';
import { Agent, type Dispatcher, request, errors as undiciErrors } from 'undici';
import { ProviderError } from '../errors.js';
import { redirectRefusal } from '../net/redirect.js';
import { USER_AGENT } from '../net/user-agent.js';

export interface HttpClientOptions {
  /** Extra trust anchors (PEM). Production relies on the system store plus NODE_EXTRA_CA_CERTS. */
  ca?: string | string[];
  /** Negotiate HTTP/2 where the server offers it. */
  allowH2?: boolean;
}

export interface HttpRequest {
  method?: 'GET' | 'POST' | 'HEAD';
  headers?: Record<string, string>;
  body?: string | Uint8Array;
  signal: AbortSignal;
  /** Bytes; the response is rejected as bad_response past this. Default 5 MiB. */
  maxBytes?: number;
  /** Follow up to this many redirects (same client, configured upstreams only). Default 0. */
  maxRedirects?: number;
  /**
   * Statuses returned to the adapter instead of thrown as operational failures,
   * for an adapter that must read the response itself (e.g. a 429's
   * Retry-After, honoured while polling a long-running measurement).
   */
  passStatuses?: readonly number[];
}

export interface HttpResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
  /** Final URL after redirects. */
  url: string;
}

const DEFAULT_MAX_BYTES = 5 * 1024 * 1024;

export class HttpClient {
  readonly dispatcher: Dispatcher;

  constructor(opts: HttpClientOptions = {}) {
    this.dispatcher = new Agent({
      keepAliveTimeout: 10_000,
      connections: 64,
      allowH2: opts.allowH2 ?? false,
      connect: opts.ca ? { ca: opts.ca } : {},
    });
  }

  /**
   * Sends a request. 5xx and 429 are operational failures (thrown); any other
   * status is returned for the adapter to interpret (a 404 may be an answer).
   */
  async send(url: string, req: HttpRequest): Promise<HttpResponse> {
    let current = url;
    const maxRedirects = req.maxRedirects ?? 0;
    for (let hop = 0; ; hop++) {
      const res = await this.#once(current, req);
      const location = res.headers.location;
      if (res.status >= 300 && res.status < 400 && typeof location === 'string' && hop < maxRedirects) {
        current = followable(location, current);
        continue;
      }
      if (req.passStatuses?.includes(res.status)) return res;
      if (res.status === 429) throw new ProviderError('rate_limited', `HTTP 429 from ${hostOf(current)}`);
      if (res.status >= 500)
        throw new ProviderError('http_status', `HTTP ${res.status} from ${hostOf(current)}`);
      return res;
    }
  }

  /** GET and parse JSON; an unparseable body is an operational failure. */
  async getJson<T>(
    url: string,
    req: Omit<HttpRequest, 'method' | 'body'>,
  ): Promise<{ status: number; data: T; url: string }> {
    const res = await this.send(url, {
      ...req,
      headers: { accept: 'application/json', ...req.headers },
    });
    return { status: res.status, data: parseJson<T>(res.body, url), url: res.url };
  }

  async close(): Promise<void> {
    await this.dispatcher.close();
  }

  async #once(url: string, req: HttpRequest): Promise<HttpResponse> {
    const maxBytes = req.maxBytes ?? DEFAULT_MAX_BYTES;
    try {
      const res = await request(url, {
        dispatcher: this.dispatcher,
        method: req.method ?? 'GET',
        headers: { 'user-agent': USER_AGENT, ...req.headers },
        body: req.body,
        signal: req.signal,
      });
      const declared = Number(res.headers['content-length']);
      if (Number.isFinite(declared) && declared > maxBytes) {
        discard(res.body);
        throw new ProviderError('bad_response', `response of ${declared} bytes exceeds ${maxBytes}`);
      }
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of res.body) {
        size += (chunk as Buffer).length;
        if (size > maxBytes) {
          discard(res.body);
          throw new ProviderError('bad_response', `response exceeds ${maxBytes} bytes`);
        }
        chunks.push(chunk as Buffer);
      }
      return { status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks), url };
    } catch (err) {
      throw classifyError(err, url);
    }
  }
}

/** Accept-Encoding for an upstream that asks for compressed requests (Globalping): Brotli first. */
export const ACCEPT_ENCODING = 'br, gzip';

const decoders: Record<string, (body: Buffer, opts: ZlibOptions) => Promise<Buffer>> = {
  br: promisify(brotliDecompress),
  gzip: promisify(gunzip),
  'x-gzip': promisify(gunzip),
};

/**
 * The body of `res` with its Content-Encoding undone, for a request that sent
 * ACCEPT_ENCODING: undici's request() hands the body over as it came (only its
 * fetch decodes). The decoded size is capped as well, since the transfer cap alone
 * would let a small body expand without bound. A body it cannot decode is a bad_response.
 */
export async function decodedBody(res: HttpResponse, maxBytes = DEFAULT_MAX_BYTES): Promise<Buffer> {
  const header = res.headers['content-encoding'];
  const codings = (Array.isArray(header) ? header.join(',') : (header ?? ''))
    .split(',')
    .map((c) => c.trim().toLowerCase())
    .filter((c) => c !== '' && c !== 'identity');
  if (codings.length === 0 || res.body.length === 0) return res.body;
  const host = hostOf(res.url);
  let body = res.body;
  // Codings are listed in the order they were applied: undo the last one first.
  for (const coding of codings.reverse()) {
    const decode = decoders[coding];
    if (decode === undefined) {
      throw new ProviderError('bad_response', `${host} answered in an encoding not asked for (${coding})`);
    }
    try {
      body = await decode(body, { maxOutputLength: maxBytes });
    } catch (err) {
      const tooLarge = (err as { code?: unknown }).code === 'ERR_BUFFER_TOO_LARGE';
      throw new ProviderError(
        'bad_response',
        tooLarge
          ? `${host}'s ${coding} body decodes to more than ${maxBytes} bytes`
          : `${host}'s ${coding} body could not be decoded`,
        { cause: err },
      );
    }
  }
  return body;
}

/**
 * Milliseconds to wait from `now`, from a Retry-After value: delta-seconds or
 * an HTTP-date (RFC 9110 §10.2.3). Undefined when absent or unparseable.
 */
export function parseRetryAfter(value: string | string[] | undefined, now: number): number | undefined {
  const text = (Array.isArray(value) ? value[0] : value)?.trim();
  if (!text) return undefined;
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const date = Date.parse(text);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now);
}

/** The absolute URL a configured upstream redirects to, held to net/redirect.ts's rules. */
function followable(location: string, from: string): string {
  let target: URL;
  try {
    target = new URL(location, from);
  } catch {
    throw new ProviderError('bad_response', `${hostOf(from)} redirected to an unusable Location`);
  }
  const refusal = redirectRefusal(target, new URL(from));
  if (refusal !== undefined) {
    throw new ProviderError(
      'bad_response',
      `${hostOf(from)} redirected to ${target.protocol}//${target.host}: ${refusal}`,
    );
  }
  return target.toString();
}

export function parseJson<T>(body: Buffer | string, url: string): T {
  try {
    return JSON.parse(typeof body === 'string' ? body : body.toString('utf8')) as T;
  } catch {
    throw new ProviderError('bad_response', `unparseable JSON from ${hostOf(url)}`);
  }
}

/** Appends to a base URL that may carry a path prefix (`https://host:8443/crtsh`), never replacing it. */
export function joinUrl(base: string, path: string): string {
  return base.replace(/\/+$/, '') + (path.startsWith('/') ? path : `/${path}`);
}

/**
 * Abandons a response body unread. undici's body stream errors when destroyed
 * before its end, and an 'error' with no listener is an uncaught exception that
 * would take the process down; the listener swallows that expected error.
 */
function discard(body: Dispatcher.ResponseData['body']): void {
  body.on('error', () => {});
  body.destroy();
}

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return 'upstream';
  }
}

/** OpenSSL X509_V_ERR_* verify codes as Node reports them (Node docs, crypto: "X509 certificate error codes"). */
const TLS_CODES = new Set([
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'CERT_REVOKED',
  'CERT_UNTRUSTED',
  'CERT_REJECTED',
  'CERT_SIGNATURE_FAILURE',
  'CERT_CHAIN_TOO_LONG',
  'INVALID_CA',
  'INVALID_PURPOSE',
  'PATH_LENGTH_EXCEEDED',
  'HOSTNAME_MISMATCH',
  'UNABLE_TO_GET_ISSUER_CERT',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'ERR_TLS_CERT_ALTNAME_INVALID',
  'ERR_SSL_WRONG_VERSION_NUMBER',
]);

/** Maps undici/Node errors to the chain's failure kinds; the message never includes secrets. */
export function classifyError(err: unknown, url: string): ProviderError {
  if (err instanceof ProviderError) return err;
  const host = hostOf(url);
  const e = (typeof err === 'object' && err !== null ? err : {}) as {
    name?: unknown;
    code?: unknown;
    message?: unknown;
    cause?: { code?: unknown };
  };
  // Only string codes are Node/undici error codes: a DOMException (the reason
  // AbortSignal.timeout() aborts with) has a numeric legacy `code`.
  const code = [e.code, e.cause?.code].find((c): c is string => typeof c === 'string');
  const message = typeof e.message === 'string' ? e.message : undefined;
  if (e.name === 'TimeoutError') {
    return new ProviderError('timeout', `request to ${host} timed out`, { cause: err });
  }
  if (
    e.name === 'AbortError' ||
    err instanceof undiciErrors.RequestAbortedError ||
    code === 'UND_ERR_ABORTED'
  ) {
    return new ProviderError('timeout', `request to ${host} aborted`, { cause: err });
  }
  if (
    code === 'UND_ERR_CONNECT_TIMEOUT' ||
    code === 'UND_ERR_HEADERS_TIMEOUT' ||
    code === 'UND_ERR_BODY_TIMEOUT'
  ) {
    return new ProviderError('timeout', `${host} timed out (${code})`, { cause: err });
  }
  if ((code && TLS_CODES.has(code)) || code?.startsWith('ERR_TLS') || code?.startsWith('ERR_SSL')) {
    return new ProviderError('tls', `TLS failure with ${host} (${code})`, { cause: err });
  }
  return new ProviderError('network', `${host}: ${code ?? message ?? 'connection failed'}`, { cause: err });
}
