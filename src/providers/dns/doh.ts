/**
 * DNS over HTTPS (RFC 8484) to an `https://` URL: POST of the wire-format
 * query as `application/dns-message`, message id 0 so identical questions
 * are identical requests (§4.1).
 *
 * HTTP/2 is the protocol we want (§5.2 names it the minimum recommended
 * version, and some servers, unbound among them, speak nothing else): one
 * TLS connection per origin, offered `h2` and `http/1.1` by ALPN, carries
 * every concurrent query as its own stream. node:http2 is used directly
 * because undici's pool neither multiplexes POSTs (it treats them as
 * non-idempotent) nor keeps to one connection per origin. When a server
 * picks `http/1.1` the origin is remembered as HTTP/1.1-only and served by
 * the shared keep-alive HTTP client instead.
 *
 * Redirects are followed as Google Public DNS documents them for its DoH
 * service (developers.google.com/speed/public-dns/docs/doh, "Redirections"),
 * which RFC 8484 leaves to HTTP (§1: DoH "aligns itself with HTTP features
 * such as ... redirection"): see `redirected` below.
 */
import {
  type ClientHttp2Session,
  type ClientHttp2Stream,
  constants as h2,
  connect as http2Connect,
  type IncomingHttpHeaders,
  type IncomingHttpStatusHeader,
} from 'node:http2';
import { isIP } from 'node:net';
import { type TLSSocket, connect as tlsConnect } from 'node:tls';
import { ProviderError } from '../../errors.js';
import { redirectRefusal } from '../../net/redirect.js';
import { USER_AGENT } from '../../net/user-agent.js';
import { classifyError, HttpClient } from '../http-client.js';
import type { ProviderInfo } from '../types.js';
import { abortable, abortError } from './abort.js';
import { type ResolverEndpoint, resolverInfo, type TransportIdentity } from './endpoint.js';
import type { DnsAnswer, DnsRecordType, DnsTransportProvider } from './types.js';
import { encodeQuery, expectAnswer, MAX_MESSAGE_BYTES } from './wire.js';

export interface DohTransportOptions extends TransportIdentity {
  /** Trust anchors (PEM) replacing the system store, for tests against a private CA. */
  ca?: string | string[];
  /** Give up on a TLS connection that is not up after this long. Default 10 s. */
  connectTimeoutMs?: number;
  /** Close an HTTP/2 connection after this long without streams. Default 30 s. */
  idleTimeoutMs?: number;
}

const MEDIA_TYPE = 'application/dns-message';
/** Redirects followed per query; each must stay on https. */
const MAX_REDIRECTS = 3;
/** The redirect statuses a resolver may send: Google's four (301, 302, 307, 308) and 303 (RFC 9110 §15.4.4). */
const REDIRECT_STATUSES: ReadonlySet<number> = new Set([301, 302, 303, 307, 308]);
/** Permanent redirects (RFC 9110 §15.4.2, §15.4.9), which Google asks clients to remember. */
const PERMANENT_STATUSES: ReadonlySet<number> = new Set([301, 308]);

/** One HTTP exchange of a query: the wire message POSTed, or a GET whose URL carries it (`?dns=`). */
interface DohRequest {
  method: 'POST' | 'GET';
  url: string;
}

interface DohResponse {
  status: number;
  location: string | undefined;
  contentType: string;
  body: Buffer;
}

/** How one origin is reached: a live HTTP/2 session, or HTTP/1.1 through the keep-alive client. */
type OriginState = { protocol: 'h2'; session: ClientHttp2Session } | { protocol: 'http/1.1' };

/** Thrown when a pooled HTTP/2 session went away before our stream got an answer. */
class SessionGone extends ProviderError {
  constructor(
    readonly reused: boolean,
    message: string,
  ) {
    super('network', message);
  }
}

export class DohDnsProvider implements DnsTransportProvider {
  readonly transport = 'doh' as const;
  readonly info: ProviderInfo;
  readonly #url: string;
  readonly #opts: DohTransportOptions;
  /** Per origin: the connection in use, and the attempt to make one (shared by concurrent queries). */
  readonly #live = new Map<string, OriginState>();
  readonly #opening = new Map<string, Promise<OriginState>>();
  #http1: HttpClient | undefined;
  /** Where a permanent redirect moved the resolver, for the provider's lifetime (see `redirected`). */
  #movedTo: string | undefined;

  constructor(endpoint: ResolverEndpoint, opts: DohTransportOptions = {}) {
    this.info = resolverInfo(endpoint, opts.id);
    this.#url = endpoint.url;
    this.#opts = opts;
  }

  async query(name: string, type: DnsRecordType, signal: AbortSignal): Promise<DnsAnswer> {
    const body = encodeQuery(0, { name, type });
    let request: DohRequest = { method: 'POST', url: this.#movedTo ?? this.#url };
    let permanent = true;
    for (let hop = 0; ; hop++) {
      const res = await this.#send(request, body, signal);
      if (REDIRECT_STATUSES.has(res.status)) {
        if (hop >= MAX_REDIRECTS)
          throw new ProviderError(
            'http_status',
            `more than ${MAX_REDIRECTS} redirects from ${hostOf(request.url)}`,
          );
        const next = redirected(request, res);
        permanent &&= PERMANENT_STATUSES.has(res.status);
        // Google: permanent redirects "should be cached indefinitely". Only a POST target can be
        // reused: a `dns=` URL carries this one question.
        if (permanent && next.method === 'POST') this.#movedTo = next.url;
        request = next;
        continue;
      }
      const from = hostOf(request.url);
      if (res.status === 429) throw new ProviderError('rate_limited', `HTTP 429 from ${from}`);
      if (res.status < 200 || res.status >= 300)
        throw new ProviderError('http_status', `HTTP ${res.status} from ${from}`);
      if (res.contentType !== MEDIA_TYPE) {
        throw new ProviderError(
          'bad_response',
          `${from} answered with content-type "${res.contentType || 'none'}"`,
        );
      }
      // A `dns=` URL the resolver built could carry another question or id: the answer is checked against ours.
      return expectAnswer(res.body, 0, { name, type });
    }
  }

  async close(): Promise<void> {
    const states = [
      ...this.#live.values(),
      ...(await Promise.all([...this.#opening.values()].map((p) => p.catch(() => undefined)))),
    ];
    this.#live.clear();
    const http1 = this.#http1;
    this.#http1 = undefined;
    for (const state of states) if (state?.protocol === 'h2') state.session.destroy();
    await http1?.close();
  }

  async #send(req: DohRequest, body: Buffer, signal: AbortSignal): Promise<DohResponse> {
    const origin = new URL(req.url).origin;
    const state = await abortable(this.#origin(origin), signal, req.url);
    if (state.protocol === 'http/1.1') return this.#sendHttp1(req, body, signal);
    try {
      return await exchangeHttp2(state.session, req, body, signal);
    } catch (err) {
      // The server closed a pooled connection (idle timeout, GOAWAY) under our
      // stream: nothing is known about the resolver yet, so try once more on a new one.
      if (err instanceof SessionGone && err.reused && !signal.aborted) {
        const fresh = await abortable(this.#origin(origin), signal, req.url);
        if (fresh.protocol === 'h2') return exchangeHttp2(fresh.session, req, body, signal);
        return this.#sendHttp1(req, body, signal);
      }
      throw err;
    }
  }

  async #sendHttp1(req: DohRequest, body: Buffer, signal: AbortSignal): Promise<DohResponse> {
    this.#http1 ??= new HttpClient({ ca: this.#opts.ca });
    const res = await this.#http1.send(
      req.url,
      req.method === 'POST'
        ? {
            method: 'POST',
            headers: { 'content-type': MEDIA_TYPE, accept: MEDIA_TYPE },
            body,
            signal,
            maxBytes: MAX_MESSAGE_BYTES,
          }
        : { method: 'GET', headers: { accept: MEDIA_TYPE }, signal, maxBytes: MAX_MESSAGE_BYTES },
    );
    const location = res.headers.location;
    return {
      status: res.status,
      location: typeof location === 'string' ? location : undefined,
      contentType: mediaType(res.headers['content-type']),
      body: res.body,
    };
  }

  /** The origin's live session (or HTTP/1.1 verdict); concurrent callers share one connection attempt. */
  #origin(origin: string): Promise<OriginState> {
    const live = this.#live.get(origin);
    if (live && (live.protocol === 'http/1.1' || !(live.session.closed || live.session.destroyed))) {
      return Promise.resolve(live);
    }
    let opening = this.#opening.get(origin);
    if (!opening) {
      opening = this.#open(origin)
        .then((state) => {
          this.#live.set(origin, state);
          return state;
        })
        .finally(() => this.#opening.delete(origin));
      this.#opening.set(origin, opening);
    }
    return opening;
  }

  async #open(origin: string): Promise<OriginState> {
    const socket = await connectTls(origin, this.#opts.ca, this.#opts.connectTimeoutMs ?? 10_000);
    if (socket.alpnProtocol !== 'h2') {
      // Remembered for the provider's lifetime, so this probe connection is paid once.
      socket.destroy();
      return { protocol: 'http/1.1' };
    }
    const session = http2Connect(origin, { createConnection: () => socket });
    const state: OriginState = { protocol: 'h2', session };
    const forget = () => {
      if (this.#live.get(origin) === state) this.#live.delete(origin);
    };
    // Without an 'error' listener a session error would crash the process; the streams report it to their callers.
    session.on('error', forget);
    session.on('goaway', forget);
    session.on('close', forget);
    session.setTimeout(this.#opts.idleTimeoutMs ?? 30_000, () => session.close());
    // An idle session must not keep the process alive; exchangeHttp2 refs it while streams run.
    session.unref();
    return state;
  }
}

/**
 * The request a redirect leads to, or the ProviderError that refuses it (the
 * chain then asks the next resolver). Google Public DNS's rules, with RFC 9110:
 *  - 307 and 308 keep the method (RFC 9110 §15.4.8-9; Google: a POST that gets
 *    them "should always be retried with POST");
 *  - 301 and 302 to a POST: a GET only when the new URL carries a `dns`
 *    parameter (the resolver put the question there), else a POST again;
 *  - 303 means "GET this URL" (§15.4.4), and a GET reached by a redirect stays
 *    a GET: either is useful only when the URL carries `dns`, so a URL without
 *    it is refused rather than sent a request that holds no question.
 * Following, not refusing, is the careful choice for a resolver: Google
 * documents redirects as part of its DoH API and moved its own service by
 * them (dns.google.com to dns.google, docs/doh/migration), so refusing would
 * turn a documented move into an outage of the primary resolver. Every hop is
 * still held to https (a resolver has no reason to leave TLS, and what it
 * answers is trusted) and to net/redirect.ts's rules, and the hops are counted.
 */
function redirected(from: DohRequest, res: DohResponse): DohRequest {
  const host = hostOf(from.url);
  if (res.location === undefined)
    throw new ProviderError('http_status', `HTTP ${res.status} from ${host} without a Location`);
  let target: URL;
  try {
    target = new URL(res.location, from.url);
  } catch {
    throw new ProviderError('http_status', `${host} redirected to an unusable Location`);
  }
  const refusal =
    target.protocol === 'https:'
      ? redirectRefusal(target, new URL(from.url))
      : 'a resolver must stay on https';
  if (refusal !== undefined) {
    throw new ProviderError(
      'http_status',
      `${host} redirected to ${target.protocol}//${target.host}: ${refusal}`,
    );
  }
  const url = target.toString();
  const carriesQuery = target.searchParams.has('dns');
  if (from.method === 'POST' && (res.status === 307 || res.status === 308)) return { method: 'POST', url };
  if (from.method === 'POST' && res.status !== 303 && !carriesQuery) return { method: 'POST', url };
  if (carriesQuery) return { method: 'GET', url };
  throw new ProviderError(
    'http_status',
    `${host} answered ${res.status} calling for a GET to a URL without dns=, which would carry no question`,
  );
}

/** Active stream count per session, to ref the session only while something waits on it. */
const activeStreams = new WeakMap<ClientHttp2Session, number>();
/** Sessions that have completed at least one exchange (a later failure may be a stale pooled connection). */
const provenSessions = new WeakSet<ClientHttp2Session>();

function exchangeHttp2(
  session: ClientHttp2Session,
  req: DohRequest,
  body: Buffer,
  signal: AbortSignal,
): Promise<DohResponse> {
  const { url } = req;
  if (signal.aborted) return Promise.reject(abortError(signal, url));
  if (session.closed || session.destroyed) {
    return Promise.reject(new SessionGone(true, `HTTP/2 connection to ${hostOf(url)} closed`));
  }
  const target = new URL(url);
  let stream: ClientHttp2Stream;
  try {
    const common = {
      [h2.HTTP2_HEADER_PATH]: `${target.pathname}${target.search}`,
      accept: MEDIA_TYPE,
      'user-agent': USER_AGENT,
    };
    stream = session.request(
      req.method === 'POST'
        ? {
            ...common,
            [h2.HTTP2_HEADER_METHOD]: 'POST',
            'content-type': MEDIA_TYPE,
            'content-length': String(body.length),
          }
        : { ...common, [h2.HTTP2_HEADER_METHOD]: 'GET' },
      { endStream: req.method === 'GET' },
    );
  } catch (err) {
    return Promise.reject(new SessionGone(provenSessions.has(session), classifyError(err, url).message));
  }
  activeStreams.set(session, (activeStreams.get(session) ?? 0) + 1);
  session.ref();

  return new Promise<DohResponse>((resolve, reject) => {
    let headers: (IncomingHttpHeaders & IncomingHttpStatusHeader) | undefined;
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;

    const settle = (err: ProviderError | undefined, res?: DohResponse) => {
      if (settled) return;
      settled = true;
      signal.removeEventListener('abort', onAbort);
      const left = (activeStreams.get(session) ?? 1) - 1;
      activeStreams.set(session, left);
      if (left === 0 && !session.destroyed) session.unref();
      if (err) {
        if (!stream.closed) stream.close(h2.NGHTTP2_CANCEL);
        reject(err);
      } else {
        provenSessions.add(session);
        resolve(res!);
      }
    };
    const onAbort = () => settle(abortError(signal, url));
    signal.addEventListener('abort', onAbort, { once: true });

    stream.on('response', (h) => {
      headers = h;
    });
    stream.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_MESSAGE_BYTES) {
        settle(
          new ProviderError(
            'bad_response',
            `response from ${hostOf(url)} exceeds ${MAX_MESSAGE_BYTES} bytes`,
          ),
        );
        return;
      }
      chunks.push(chunk);
    });
    stream.on('end', () => {
      // The session going away ends its streams without headers.
      if (!headers)
        return settle(new SessionGone(provenSessions.has(session), `no response from ${hostOf(url)}`));
      const location = headers.location;
      settle(undefined, {
        status: Number(headers[h2.HTTP2_HEADER_STATUS]),
        location: typeof location === 'string' ? location : undefined,
        contentType: mediaType(headers['content-type']),
        body: Buffer.concat(chunks),
      });
    });
    stream.on('error', (err) => {
      // A stream refused or cut by the session going away, before any answer, may be retried on a new connection.
      if (!headers) settle(new SessionGone(provenSessions.has(session), classifyError(err, url).message));
      else settle(classifyError(err, url));
    });
    stream.on('close', () => {
      if (!headers) {
        settle(
          new SessionGone(
            provenSessions.has(session),
            `stream to ${hostOf(url)} closed (code ${stream.rstCode})`,
          ),
        );
      } else settle(new ProviderError('network', `stream to ${hostOf(url)} closed before the body ended`));
    });
    if (req.method === 'POST') stream.end(body);
  });
}

function connectTls(
  origin: string,
  ca: string | string[] | undefined,
  timeoutMs: number,
): Promise<TLSSocket> {
  const { hostname, port } = new URL(origin);
  const host = hostname.replace(/^\[(.*)\]$/, '$1');
  return new Promise((resolve, reject) => {
    const socket = tlsConnect({
      host,
      port: port === '' ? 443 : Number(port),
      // SNI must not carry an IP literal (RFC 6066 §3); verification still checks IP SANs.
      servername: isIP(host) === 0 ? host : undefined,
      ca,
      ALPNProtocols: ['h2', 'http/1.1'],
    });
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new ProviderError('timeout', `TLS connection to ${host} not up within ${timeoutMs} ms`));
    }, timeoutMs);
    socket.once('error', (err) => {
      clearTimeout(timer);
      reject(classifyError(err, origin));
    });
    socket.once('secureConnect', () => {
      clearTimeout(timer);
      resolve(socket);
    });
  });
}

function mediaType(value: string | string[] | undefined): string {
  const first = Array.isArray(value) ? value[0] : value;
  return (first ?? '').split(';')[0]!.trim().toLowerCase();
}

function hostOf(url: string): string {
  return new URL(url).host;
}
