/**
 * Fake inspection targets: real HTTP and HTTPS servers on loopback for the
 * outbound-safety layer and the endpoints built on it (STYLE habit 6).
 *
 * A target listens on a 127.0.0.x address (Linux routes all of 127/8 to lo)
 * on the real port, 80 or 443, because the code under test only ever
 * connects to those ports. Tests run as root here (the CI machine too); a
 * free address is picked so parallel test files do not collide. HTTPS
 * targets get a leaf from the test CA for their names and address.
 *
 *   const site = await startHttpTarget({ protocol: 'https', names: ['site.test'], h2: true, routes: {
 *     '/': { headers: { 'strict-transport-security': 'max-age=63072000' }, body: 'hello' },
 *     '/old': { redirect: 'https://site.test/' },
 *     '/slow': { delayMs: 5_000 },
 *     '/huge': { streamBytes: 50 * 1024 * 1024 },
 *   } });
 *   site.address; site.origin; site.requests; site.connections; site.tlsServernames;
 *   await site.close();
 */
import {
  createServer as createHttpServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type ServerResponse,
} from 'node:http';
import { createSecureServer, type Http2ServerRequest, type Http2ServerResponse } from 'node:http2';
import { createServer as createHttpsServer } from 'node:https';
import { type AddressInfo, createServer as createTcpServer, type Server, type Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { FakeLifecycle } from './lifecycle.js';
import { getTestPki, type IssuedCert } from './test-ca.js';

export interface TargetRequest {
  method: string;
  /** Pathname only. */
  path: string;
  /** Path and query as requested. */
  url: string;
  /** Lower-cased; over HTTP/2 includes pseudo-headers (`:authority`, ...). */
  headers: IncomingHttpHeaders;
  /** Host as the client sent it: `host` over HTTP/1.1, `:authority` over HTTP/2. */
  host: string | undefined;
  /** '1.1' or '2.0'. */
  httpVersion: string;
  /** SNI the client sent on this connection (HTTPS); false when it sent none. */
  servername: string | false | undefined;
  remoteAddress: string | undefined;
}

export interface TargetReply {
  /** Default 200, or 302 with `redirect`. */
  status?: number;
  headers?: Record<string, string | string[]>;
  body?: string | Buffer;
  /** Location of a redirect. */
  redirect?: string;
  /** Wait this long before sending the headers. */
  delayMs?: number;
  /** Send this many bytes of body, in 64 KiB chunks, with no content-length. */
  streamBytes?: number;
  /** Never answer; close() ends the connection. */
  hang?: boolean;
  /** Drop the connection instead of answering (a reset mid-request). */
  reset?: boolean;
  /** Send the status and headers, then the body one byte per second, forever. */
  trickle?: boolean;
}

export type TargetRoute = TargetReply | ((req: TargetRequest) => TargetReply | Promise<TargetReply>);

export interface HttpTargetOptions {
  /** Default 'http'. */
  protocol?: 'http' | 'https';
  /** A loopback address to bind; default the first free one from 127.0.0.2 up. */
  address?: string;
  /** Default 80 for http, 443 for https; 0 picks an ephemeral port. */
  port?: number;
  /** DNS names the HTTPS certificate covers (its address is always included). */
  names?: string[];
  /** Use this certificate instead of issuing one (expired, self-signed, wrong name, ...). */
  cert?: IssuedCert;
  /** HTTPS only: serve HTTP/2 (with HTTP/1.1 fallback) via ALPN. */
  h2?: boolean;
  /** HTTPS only: the key-exchange groups offered (OpenSSL list, e.g. 'X25519:P-256'); default Node's. */
  groups?: string;
  /** Keyed by pathname. */
  routes?: Record<string, TargetRoute>;
  /** Answers what no route matches. Default 200 "ok". */
  fallback?: TargetRoute;
}

export interface HttpTarget {
  protocol: 'http' | 'https';
  address: string;
  port: number;
  /** e.g. `https://127.0.0.2` (with `:port` when not the default). */
  origin: string;
  requests: TargetRequest[];
  /** TCP connections accepted, whether or not a request followed. */
  connections: number;
  /** SNI of each TLS connection, in order (false: none sent). */
  tlsServernames: (string | false)[];
  /** Adds or replaces a route. */
  route(path: string, route: TargetRoute): void;
  /** Clears requests and counters (in place). */
  reset(): void;
  close(): Promise<void>;
}

const CHUNK = Buffer.alloc(64 * 1024, 'x');

export async function startHttpTarget(opts: HttpTargetOptions = {}): Promise<HttpTarget> {
  const protocol = opts.protocol ?? 'http';
  const port = opts.port ?? (protocol === 'https' ? 443 : 80);
  const routes = new Map(Object.entries(opts.routes ?? {}));
  const life = new FakeLifecycle();

  const target: HttpTarget = {
    protocol,
    address: '',
    port: 0,
    origin: '',
    requests: [],
    connections: 0,
    tlsServernames: [],
    route(path, route) {
      routes.set(path, route);
    },
    reset() {
      target.requests.length = 0;
      target.tlsServernames.length = 0;
      target.connections = 0;
    },
    close,
  };

  const listener = (
    req: IncomingMessage | Http2ServerRequest,
    res: ServerResponse | Http2ServerResponse,
  ): void => {
    handle(req, res as AnyResponse).catch(() => {
      // The client went away mid-answer (a cut-off body, a timeout): nothing to do.
    });
  };

  async function handle(req: IncomingMessage | Http2ServerRequest, res: AnyResponse): Promise<void> {
    const url = req.url ?? '/';
    const socket = req.socket as Partial<TLSSocket>;
    const request: TargetRequest = {
      method: req.method ?? 'GET',
      path: new URL(url, 'http://target.invalid').pathname,
      url,
      headers: req.headers,
      host: (req.headers[':authority'] as string | undefined) ?? req.headers.host,
      httpVersion: req.httpVersion,
      servername: protocol === 'https' ? (socket.servername ?? false) : undefined,
      remoteAddress: socket.remoteAddress,
    };
    target.requests.push(request);
    const route = routes.get(request.path) ?? opts.fallback ?? { body: 'ok' };
    const reply = typeof route === 'function' ? await route(request) : route;
    if (reply.hang) return;
    if (reply.reset) {
      req.socket.destroy();
      return;
    }
    if (reply.delayMs) await life.delay(reply.delayMs);
    if (life.closing || res.destroyed) return;

    const headers: Record<string, string | string[]> = {};
    for (const [name, value] of Object.entries(reply.headers ?? {})) headers[name.toLowerCase()] = value;
    if (reply.redirect) headers.location = reply.redirect;
    const status = reply.status ?? (reply.redirect ? 302 : 200);
    if (reply.trickle) {
      res.writeHead(status, headers);
      trickle(res);
      return;
    }
    if (reply.streamBytes !== undefined) {
      headers['content-type'] ??= 'text/plain';
      res.writeHead(status, headers);
      await stream(res, reply.streamBytes);
      return;
    }
    const body = typeof reply.body === 'string' ? Buffer.from(reply.body) : (reply.body ?? Buffer.alloc(0));
    headers['content-type'] ??= 'text/plain; charset=utf-8';
    headers['content-length'] = String(body.length);
    res.writeHead(status, headers);
    res.end(req.method === 'HEAD' ? undefined : body);
  }

  /** Writes `total` bytes honouring backpressure; stops when the client goes away. */
  async function stream(res: AnyResponse, total: number): Promise<void> {
    let left = total;
    while (left > 0 && !life.closing && !res.destroyed) {
      const chunk = left >= CHUNK.length ? CHUNK : CHUNK.subarray(0, left);
      left -= chunk.length;
      if (!res.write(chunk)) {
        await new Promise<void>((resolve) => {
          const done = () => {
            res.off('drain', done);
            res.off('close', done);
            resolve();
          };
          res.on('drain', done);
          res.on('close', done);
        });
      }
    }
    if (!res.destroyed) res.end();
  }

  /** One byte a second until the client goes away or the target closes. */
  function trickle(res: AnyResponse): void {
    if (life.closing || res.destroyed) return;
    res.write(Buffer.from(' '));
    life.later(() => trickle(res), 1000);
  }

  const makeServer = async (address: string): Promise<Server> => {
    if (protocol === 'http') return createHttpServer(listener);
    const pki = await getTestPki();
    const leaf = opts.cert ?? (await pki.issue({ dnsNames: opts.names ?? [], ips: [address] }));
    const tls = { key: leaf.keyPem, cert: leaf.certPem, ...(opts.groups ? { ecdhCurve: opts.groups } : {}) };
    const s = opts.h2
      ? createSecureServer({ ...tls, allowHTTP1: true }, listener)
      : createHttpsServer(tls, listener);
    s.on('secureConnection', (socket: TLSSocket) => {
      target.tlsServernames.push(socket.servername ?? false);
    });
    // HTTP/2 sessions must be destroyed themselves, or close() waits for them.
    s.on('session', (session: { destroy(): void; once(e: 'close', f: () => void): void }) => {
      life.track(session);
    });
    // A client that gives up on the certificate leaves an error on the server side; it is expected.
    s.on('tlsClientError', () => {});
    return s;
  };

  const bound = await bindLoopback(makeServer, opts.address, port);
  const server = bound.server;
  server.on('connection', (socket: Socket) => {
    target.connections += 1;
    life.track(socket);
  });

  const defaultPort = protocol === 'https' ? 443 : 80;
  target.address = bound.address;
  target.port = bound.port;
  target.origin = `${protocol}://${bound.address}${bound.port === defaultPort ? '' : `:${bound.port}`}`;

  function close(): Promise<void> {
    return life.close(server);
  }
  return target;
}

export interface SilentTarget {
  address: string;
  port: number;
  /** TCP connections accepted. */
  connections: number;
  close(): Promise<void>;
}

/**
 * A TCP listener that accepts connections and never sends a byte: a TLS handshake or an
 * HTTP request to it hangs until the client's own deadline ends it.
 */
export async function startSilentTarget(
  opts: { address?: string; port?: number } = {},
): Promise<SilentTarget> {
  const life = new FakeLifecycle();
  const bound = await bindLoopback(async () => createTcpServer(), opts.address, opts.port ?? 443);
  const target: SilentTarget = {
    address: bound.address,
    port: bound.port,
    connections: 0,
    close: () => life.close(bound.server),
  };
  bound.server.on('connection', (socket: Socket) => {
    target.connections += 1;
    life.track(socket);
  });
  return target;
}

/**
 * Listens on `port` at `address`, or at the first free loopback address from
 * loopbackCandidates(); a server is made per attempt, as a failed listen leaves it unusable.
 */
async function bindLoopback(
  makeServer: (address: string) => Promise<Server>,
  address: string | undefined,
  port: number,
): Promise<{ server: Server; address: string; port: number }> {
  let lastError: unknown;
  for (const candidate of address ? [address] : loopbackCandidates()) {
    const server = await makeServer(candidate);
    try {
      return { server, address: candidate, port: await listen(server, candidate, port) };
    } catch (err) {
      lastError = err;
      if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE') break;
    }
  }
  const code = (lastError as NodeJS.ErrnoException | undefined)?.code;
  throw new Error(
    code === 'EACCES'
      ? `fake target: binding port ${port} needs root (or net.ipv4.ip_unprivileged_port_start <= ${port})`
      : `fake target: no free loopback address for port ${port}: ${String(lastError)}`,
  );
}

/** The parts of the HTTP/1 and HTTP/2-compat responses the fake uses. */
interface AnyResponse {
  readonly destroyed: boolean;
  writeHead(status: number, headers: Record<string, string | string[]>): unknown;
  write(chunk: Buffer): boolean;
  end(body?: Buffer): unknown;
  on(event: 'drain' | 'close', f: () => void): unknown;
  off(event: 'drain' | 'close', f: () => void): unknown;
}

/** 127.0.0.2 … 127.0.0.254, starting at a per-process offset so parallel test files rarely contend. */
function loopbackCandidates(): string[] {
  const start = process.pid % 200;
  return Array.from({ length: 253 }, (_, i) => `127.0.0.${2 + ((start + i) % 253)}`);
}

function listen(server: Server, address: string, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const onError = (err: Error) => reject(err);
    server.once('error', onError);
    server.listen(port, address, () => {
      server.off('error', onError);
      resolve((server.address() as AddressInfo).port);
    });
  });
}
