/**
 * Fake HTTPS upstreams on loopback that speak real TLS and HTTP (docs/architecture.md
 * §2, STYLE habit 6): the code under test uses its production HTTP client,
 * pointed at `https://127.0.0.1:PORT`, and trusts the test CA.
 *
 *   const crtsh = await startFakeUpstream({
 *     prefix: '/crtsh',
 *     routes: { '/': { json: fixture('ct/crtsh-scenario-example.com.json') } },
 *   });
 *   crtsh.fault = '503';      // every request now fails until reset()
 *   ...
 *   await crtsh.close();
 *
 * Faults model the operational failures the provider chain must survive.
 * `fixture*` read what the project wrote itself, in test/fixtures/; captures from other
 * projects are read from ../shared through test/shared-data.ts (test/fixtures/README.md).
 */
import { readFileSync } from 'node:fs';
import type { IncomingHttpHeaders, IncomingMessage, OutgoingHttpHeaders } from 'node:http';
import type { Http2ServerRequest } from 'node:http2';
import { createSecureServer } from 'node:http2';
import { createServer } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import type { Server as TlsServer } from 'node:tls';
import { FakeLifecycle } from './lifecycle.js';
import { getTestPki } from './test-ca.js';

export type Fault =
  | 'none'
  | '503'
  | '429'
  | 'timeout'
  | 'garbage'
  | 'reset'
  | 'empty'
  /** 200 with well-formed JSON of the wrong shape (`wrongShape`, or an object where lists are expected). */
  | 'wrong-shape'
  /** 200 with a 50 MB JSON body streamed without a content-length (HUGE_BODY_BYTES). */
  | 'huge'
  /** 200 whose body arrives one byte per second, forever. */
  | 'trickle';

/** Size of the 'huge' fault's body. */
export const HUGE_BODY_BYTES = 50 * 1024 * 1024;

/** The 'wrong-shape' body unless the upstream names its own: valid JSON, no field any adapter reads. */
export const WRONG_SHAPE_BODY = { status: 'ok', data: [], results: 'none', items: { count: 0 } };

export interface FakeRequest {
  method: string;
  /** Pathname, with the upstream's prefix stripped when it carried it. */
  path: string;
  query: URLSearchParams;
  /** Lower-cased; over HTTP/2 this includes the pseudo-headers (`:method`, `:path`, ...). */
  headers: IncomingHttpHeaders;
  body: Buffer;
}

export interface FakeReply {
  /** Default 200. */
  status?: number;
  /**
   * Names are case-insensitive. content-length is added unless given, or unless
   * `transfer-encoding: chunked` is, which streams the body without a length.
   */
  headers?: Record<string, string>;
  /** Serialized as the body, with content-type application/json unless `headers` names one. */
  json?: unknown;
  /** Sent as-is when `json` is absent. */
  body?: string | Buffer;
  /** Wait this long before answering. */
  delayMs?: number;
  /** Fail this one request the way the upstream-wide `fault` switch would (the rest of the reply is ignored). */
  fault?: Fault;
}

export type FakeHandler = (req: FakeRequest) => FakeReply | Promise<FakeReply>;

export interface FakeUpstream {
  /** `https://127.0.0.1:PORT`, plus the prefix if one was given. */
  url: string;
  port: number;
  /** Settable at any time; applies to every request until changed. */
  fault: Fault;
  /** Every request received, in order. */
  requests: FakeRequest[];
  /** Requests received, optionally only those for one (prefix-stripped) pathname. */
  count(path?: string): number;
  /** Clears `requests` (in place) and sets `fault` back to 'none'. */
  reset(): void;
  close(): Promise<void>;
}

export interface FakeUpstreamOptions {
  /** Answers every request no route matches. */
  handler?: FakeHandler;
  /** Keyed by pathname (`'/v1/issuances'`) or method and pathname (`'POST /v1/issuances'`); the latter wins. */
  routes?: Record<string, FakeHandler | FakeReply>;
  /** e.g. '/crtsh': requests must carry it; it is stripped before routing and included in `url`. */
  prefix?: string;
  /** Serve via http2.createSecureServer with allowHTTP1: true. */
  http2?: boolean;
  /** Serve this certificate instead of the test CA's loopback leaf (e.g. one from an untrusted CA). */
  cert?: { certPem: string; keyPem: string };
  /** The body of the 'wrong-shape' fault. Default WRONG_SHAPE_BODY. */
  wrongShape?: unknown;
}

/**
 * The parts of the HTTP/1 and HTTP/2-compat request and response objects the
 * fake uses, so one listener serves both server kinds.
 */
type AnyRequest = IncomingMessage | Http2ServerRequest;
interface AnyResponse {
  readonly destroyed: boolean;
  readonly writableEnded: boolean;
  writeHead(status: number, headers: OutgoingHttpHeaders): unknown;
  end(body: Buffer): unknown;
  write(chunk: Buffer): boolean;
  once(event: 'drain' | 'close', listener: () => void): unknown;
  off(event: 'drain' | 'close', listener: () => void): unknown;
}

const NOT_JSON = '<html><body><h1>502 Bad Gateway</h1></body></html>';

export async function startFakeUpstream(opts: FakeUpstreamOptions = {}): Promise<FakeUpstream> {
  const leaf = opts.cert ?? (await getTestPki()).server;
  const prefix = normalizePrefix(opts.prefix);
  const routes = opts.routes ?? {};

  const life = new FakeLifecycle();

  const upstream: FakeUpstream = {
    url: '',
    port: 0,
    fault: 'none',
    requests: [],
    count(path?: string): number {
      const { requests } = upstream;
      return path === undefined ? requests.length : requests.filter((r) => r.path === path).length;
    },
    reset(): void {
      upstream.requests.length = 0;
      upstream.fault = 'none';
    },
    close,
  };

  const listener = (req: AnyRequest, res: AnyResponse): void => {
    handle(req, res).catch(() => {
      // The client went away mid-request (or the fake is closing): nothing to answer.
    });
  };

  async function handle(req: AnyRequest, res: AnyResponse): Promise<void> {
    const body = await readBody(req);
    const parsed = new URL(req.url ?? '/', 'https://fake.invalid');
    const path = stripPrefix(parsed.pathname, prefix);
    const fakeReq: FakeRequest = {
      method: req.method ?? 'GET',
      path: path ?? parsed.pathname,
      query: parsed.searchParams,
      headers: req.headers,
      body,
    };
    upstream.requests.push(fakeReq);

    // The fault in force when the request arrives decides its fate.
    if (upstream.fault !== 'none') return fail(upstream.fault, req, res);

    if (path === undefined) {
      return send(res, {
        status: 404,
        json: { error: `not found: ${parsed.pathname} lacks prefix ${prefix}` },
      });
    }
    const route = routes[`${fakeReq.method} ${path}`] ?? routes[path] ?? opts.handler;
    if (route === undefined) return send(res, { status: 404, json: { error: `not found: ${path}` } });

    let reply: FakeReply;
    try {
      reply = typeof route === 'function' ? await route(fakeReq) : route;
    } catch (err) {
      // A broken test handler shows up as a 500 naming the error, not as a hang.
      reply = { status: 500, json: { error: `fake handler threw: ${String(err)}` } };
    }
    if (reply.delayMs) await life.delay(reply.delayMs);
    if (reply.fault !== undefined && reply.fault !== 'none') return fail(reply.fault, req, res);
    send(res, reply);
  }

  /** Answers (or does not) the way `fault` says. */
  function fail(fault: Exclude<Fault, 'none'>, req: AnyRequest, res: AnyResponse): void | Promise<void> {
    switch (fault) {
      case '503':
        return send(res, { status: 503, json: { error: 'Service Unavailable' } });
      case '429':
        return send(res, {
          status: 429,
          headers: { 'retry-after': '1' },
          json: { error: 'Too Many Requests' },
        });
      case 'timeout':
        // Never answer; close() destroys the socket.
        return;
      case 'garbage':
        return send(res, { headers: { 'content-type': 'application/json' }, body: NOT_JSON });
      case 'reset':
        // Over HTTP/1 this drops the TCP connection; over HTTP/2 the compat
        // socket proxy forwards destroy() to the stream, which is reset alone.
        req.socket.destroy();
        return;
      case 'empty':
        return send(res, { headers: { 'content-type': 'application/json' }, body: '' });
      case 'wrong-shape':
        return send(res, { json: opts.wrongShape ?? WRONG_SHAPE_BODY });
      case 'huge':
        return streamHuge(res);
      case 'trickle':
        return trickle(res);
    }
  }

  function send(res: AnyResponse, reply: FakeReply): void {
    if (life.closing || res.destroyed || res.writableEnded) return;
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(reply.headers ?? {})) headers[name.toLowerCase()] = value;
    let body: Buffer;
    if (reply.json !== undefined) {
      body = Buffer.from(JSON.stringify(reply.json));
      headers['content-type'] ??= 'application/json';
    } else if (typeof reply.body === 'string') {
      body = Buffer.from(reply.body);
      headers['content-type'] ??= 'text/plain; charset=utf-8';
    } else {
      body = reply.body ?? Buffer.alloc(0);
      if (reply.body) headers['content-type'] ??= 'application/octet-stream';
    }
    if (headers['transfer-encoding'] === undefined) {
      headers['content-length'] ??= String(body.length);
    } else if ('stream' in res) {
      // HTTP/2 frames bodies itself and forbids the header (RFC 9113 §8.2.2);
      // leaving out content-length is the equivalent of chunked.
      delete headers['transfer-encoding'];
    }
    res.writeHead(reply.status ?? 200, headers);
    res.end(body);
  }

  /** A JSON array of HUGE_BODY_BYTES, written as fast as the client reads it, never buffered whole. */
  async function streamHuge(res: AnyResponse): Promise<void> {
    if (life.closing || res.destroyed) return;
    res.writeHead(200, { 'content-type': 'application/json' });
    const chunk = Buffer.from(`${'{"id":1,"name":"x"},'.repeat(3276)}`);
    let sent = 0;
    if (!res.write(Buffer.from('['))) await drained(res);
    while (sent < HUGE_BODY_BYTES && !life.closing && !res.destroyed) {
      sent += chunk.length;
      if (!res.write(chunk)) await drained(res);
    }
    if (!life.closing && !res.destroyed) res.end(Buffer.from('{}]'));
  }

  /** Headers at once, then one byte of a JSON body per second until the client or the fake gives up. */
  function trickle(res: AnyResponse): void {
    if (life.closing || res.destroyed) return;
    res.writeHead(200, { 'content-type': 'application/json' });
    const body = Buffer.from(`[${' '.repeat(1_000_000)}]`);
    let at = 0;
    const next = () => {
      if (life.closing || res.destroyed || at >= body.length) return;
      res.write(body.subarray(at, at + 1));
      at += 1;
      life.later(() => next(), 1000);
    };
    next();
  }

  function drained(res: AnyResponse): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        res.off('drain', done);
        res.off('close', done);
        resolve();
      };
      res.once('drain', done);
      res.once('close', done);
    });
  }

  const server: TlsServer = opts.http2
    ? createSecureServer({ key: leaf.keyPem, cert: leaf.certPem, allowHTTP1: true }, listener)
    : createServer({ key: leaf.keyPem, cert: leaf.certPem }, listener);

  // Track every TCP connection (from before the TLS handshake) so close() can
  // end them at once, including those a 'timeout' fault or keep-alive would
  // otherwise hold open indefinitely.
  server.on('connection', (socket: Socket) => {
    life.track(socket);
  });

  function close(): Promise<void> {
    return life.close(server);
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  upstream.port = port;
  upstream.url = `https://127.0.0.1:${port}${prefix}`;
  return upstream;
}

async function readBody(req: AnyRequest): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk)));
  return Buffer.concat(chunks);
}

/** '/crtsh/' → '/crtsh'; '' or '/' → ''. */
function normalizePrefix(prefix: string | undefined): string {
  if (!prefix) return '';
  const trimmed = prefix.replace(/\/+$/, '');
  if (trimmed === '') return '';
  return trimmed.startsWith('/') ? trimmed : `/${trimmed}`;
}

/** The pathname with the prefix removed, or undefined when it does not carry the prefix. */
function stripPrefix(pathname: string, prefix: string): string | undefined {
  if (prefix === '') return pathname;
  if (pathname === prefix) return '/';
  return pathname.startsWith(`${prefix}/`) ? pathname.slice(prefix.length) : undefined;
}

const FIXTURES = new URL('../fixtures/', import.meta.url);

/** Path of a fixture under test/fixtures/, e.g. 'ct/crtsh-scenario-example.com.json'. */
function fixtureUrl(path: string): URL {
  return new URL(path.replace(/^\/+/, ''), FIXTURES);
}

/** JSON.parse of test/fixtures/<path>. */
export function fixture(path: string): unknown {
  return JSON.parse(fixtureText(path));
}

/** UTF-8 text of test/fixtures/<path>. */
export function fixtureText(path: string): string {
  return readFileSync(fixtureUrl(path), 'utf8');
}
