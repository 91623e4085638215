/**
 * DNS over a byte stream, the provider for `tcp://` (RFC 1035 §4.2.2, RFC
 * 7766; also the retry path UDP takes when an answer comes back truncated)
 * and `tls://` resolvers (RFC 7858, port 853 by default): the two differ only
 * in how a connection is opened. Each message is framed by a 2-byte length.
 * One connection per resolver is kept open and shared by concurrent queries,
 * which are matched to answers by message id (RFC 7766 §6.2.1 pipelining, §7
 * out-of-order answers), so a burst of lookups costs one handshake instead of
 * one each. An idle connection closes itself and never keeps the process
 * alive.
 *
 * Over TLS the certificate must be valid for the host in the URL: its name
 * goes out as SNI and is checked against the certificate; an IP literal is
 * checked against the certificate's IP SANs (RFC 8310 §8.1 strict privacy
 * profile, no fallback to cleartext).
 */
import { isIP, connect as netConnect, type Socket } from 'node:net';
import { type TLSSocket, connect as tlsConnect } from 'node:tls';
import { ProviderError } from '../../errors.js';
import { classifyError } from '../http-client.js';
import type { ProviderInfo } from '../types.js';
import { abortable, abortError } from './abort.js';
import { type ResolverEndpoint, resolverInfo, type TransportIdentity } from './endpoint.js';
import type { DnsAnswer, DnsRecordType, DnsTransportProvider } from './types.js';
import { type DnsQuestion, encodeQuery, expectAnswer, randomId } from './wire.js';

export interface StreamTransportOptions extends TransportIdentity {
  /** Give up on connecting (and the TLS handshake) after this long even if the caller's signal allows more. Default 10 s. */
  connectTimeoutMs?: number;
  /** Close a pooled connection after this long without queries. Default 10 s. */
  idleTimeoutMs?: number;
  /** `tls://` only: trust anchors (PEM) replacing the system store, for tests against a private CA. */
  ca?: string | string[];
}

/** A `tcp://` or `tls://` resolver: one pooled connection, opened plainly or with TLS. */
export class StreamDnsProvider implements DnsTransportProvider {
  readonly transport: 'tcp' | 'dot';
  readonly info: ProviderInfo;
  readonly #session: DnsStreamSession;

  constructor(endpoint: ResolverEndpoint, opts: StreamTransportOptions = {}) {
    const { transport } = endpoint;
    if (transport !== 'tcp' && transport !== 'dot')
      throw new TypeError(`DNS resolver "${endpoint.url}" is not a tcp:// or tls:// resolver`);
    this.transport = transport;
    this.info = resolverInfo(endpoint, opts.id);
    const timeoutMs = opts.connectTimeoutMs ?? 10_000;
    this.#session = new DnsStreamSession({
      url: endpoint.url,
      idleTimeoutMs: opts.idleTimeoutMs,
      connect: () => openStream(transport, endpoint.host, endpoint.port, opts.ca, timeoutMs),
    });
  }

  query(name: string, type: DnsRecordType, signal: AbortSignal): Promise<DnsAnswer> {
    return this.#session.query({ name, type }, signal);
  }

  close(): Promise<void> {
    return this.#session.close();
  }
}

/**
 * One exchange over a TCP connection of its own, closed after the answer
 * (the iterative engine's retry of a truncated answer from an authoritative
 * server, which it does not ask often enough to keep a connection for).
 */
export async function tcpExchange<T>(
  endpoint: Pick<ResolverEndpoint, 'host' | 'port' | 'url'>,
  encode: (id: number) => Buffer,
  read: (bytes: Buffer, id: number) => T,
  signal: AbortSignal,
  connectTimeoutMs = 10_000,
): Promise<T> {
  const session = new DnsStreamSession({
    url: endpoint.url,
    connect: () => openStream('tcp', endpoint.host, endpoint.port, undefined, connectTimeoutMs),
  });
  try {
    return await session.exchange(encode, read, signal);
  } finally {
    await session.close();
  }
}

/** A connected socket, the TLS handshake done for `dot`; rejects on failure or after `timeoutMs`. */
function openStream(
  transport: 'tcp' | 'dot',
  host: string,
  port: number,
  ca: string | string[] | undefined,
  timeoutMs: number,
): Promise<Socket | TLSSocket> {
  return new Promise((resolve, reject) => {
    const socket =
      transport === 'tcp'
        ? netConnect({ host, port, timeout: timeoutMs })
        : tlsConnect({
            host,
            port,
            // SNI must not carry an IP literal (RFC 6066 §3); verification still checks IP SANs.
            servername: isIP(host) === 0 ? host : undefined,
            ca,
            timeout: timeoutMs,
          });
    const fail = (err: Error) => {
      socket.destroy();
      reject(err);
    };
    const what = transport === 'tcp' ? 'connect' : 'TLS connect';
    socket.once('timeout', () => fail(Object.assign(new Error(`${what} timed out`), { code: 'ETIMEDOUT' })));
    socket.once('error', fail);
    socket.once(transport === 'tcp' ? 'connect' : 'secureConnect', () => {
      socket.removeListener('error', fail);
      socket.removeAllListeners('timeout');
      // The connect timeout doubles as an inactivity timeout; the session manages idleness itself.
      socket.setTimeout(0);
      resolve(socket);
    });
  });
}

interface StreamSessionOptions {
  /** For error messages and error classification (`tcp://host:port`). */
  url: string;
  /** Opens a connected socket (TLS handshake done); rejects on failure. */
  connect: () => Promise<Socket | TLSSocket>;
  /** Close the connection after this long without queries. Default 10 s. */
  idleTimeoutMs?: number;
}

interface Pending {
  resolve(bytes: Buffer): void;
  reject(err: ProviderError): void;
}

/** Thrown to a waiting query when its connection ends before its answer arrives. */
class ConnectionClosed extends ProviderError {
  constructor(
    readonly reused: boolean,
    message = 'connection closed before the answer arrived',
  ) {
    super('network', message);
  }
}

class Connection {
  readonly #socket: Socket | TLSSocket;
  readonly #pending = new Map<number, Pending>();
  readonly #idleTimeoutMs: number;
  #idleTimer: NodeJS.Timeout | undefined;
  #buffered: Buffer = Buffer.alloc(0);
  #closed = false;
  /** True once an answer arrived here: a server may then close it as idle at any time (RFC 7766 §6.2.3). */
  #answered = false;

  constructor(socket: Socket | TLSSocket, url: string, idleTimeoutMs: number, onClose: () => void) {
    this.#socket = socket;
    this.#idleTimeoutMs = idleTimeoutMs;
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => this.#onData(chunk));
    socket.on('error', (err) => {
      const failure = classifyError(err, url);
      // A reset on a connection that has served answers is the pooled-connection race, not a broken resolver.
      this.#fail(this.#answered ? new ConnectionClosed(true, failure.message) : failure);
    });
    socket.on('close', () => {
      onClose();
      this.#fail(new ConnectionClosed(this.#answered));
    });
    this.#idle();
  }

  get closed(): boolean {
    return this.#closed || this.#socket.destroyed;
  }

  /** A message id not in flight on this connection (ids are per connection, RFC 7766 §6.2.1.1). */
  freeId(): number {
    for (;;) {
      const id = randomId();
      if (!this.#pending.has(id)) return id;
    }
  }

  send(id: number, message: Buffer, pending: Pending): void {
    if (this.#idleTimer) clearTimeout(this.#idleTimer);
    this.#idleTimer = undefined;
    this.#pending.set(id, pending);
    // Keep the process alive only while someone waits for an answer.
    this.#socket.ref();
    const frame = Buffer.alloc(2 + message.length);
    frame.writeUInt16BE(message.length, 0);
    message.copy(frame, 2);
    this.#socket.write(frame);
  }

  forget(id: number): void {
    this.#pending.delete(id);
    if (this.#pending.size === 0) this.#idle();
  }

  /**
   * A query given up on (timeout, or its caller left). When the connection is
   * in the middle of a frame, nothing behind that frame can arrive until it
   * ends, and a server sending it that slowly would hold every later query on
   * this connection hostage (each send also restarts the idle timer, so the
   * connection would never close by itself): close it, so the next query
   * opens a fresh one. Other queries waiting here are asked once more on a
   * new connection (as after a pooled connection's idle close).
   */
  abandon(id: number): void {
    this.forget(id);
    if (this.#buffered.length > 0) {
      this.#fail(new ConnectionClosed(true, 'connection closed: an answer stalled mid-frame'));
    }
  }

  close(): void {
    this.#socket.destroy();
  }

  #idle(): void {
    this.#socket.unref();
    if (this.#idleTimer || this.closed) return;
    this.#idleTimer = setTimeout(() => this.#socket.destroy(), this.#idleTimeoutMs);
    this.#idleTimer.unref();
  }

  #onData(chunk: Buffer): void {
    this.#buffered = this.#buffered.length === 0 ? chunk : Buffer.concat([this.#buffered, chunk]);
    // A frame is at most 2 + 65535 bytes, so the buffer never holds more than one partial frame.
    while (this.#buffered.length >= 2) {
      const len = this.#buffered.readUInt16BE(0);
      if (this.#buffered.length < 2 + len) break;
      const message = Buffer.from(this.#buffered.subarray(2, 2 + len));
      this.#buffered = this.#buffered.subarray(2 + len);
      if (message.length < 2) continue;
      const id = message.readUInt16BE(0);
      const waiter = this.#pending.get(id);
      // A late answer to a query that gave up: nobody waits for it.
      if (!waiter) continue;
      this.#answered = true;
      this.forget(id);
      waiter.resolve(message);
    }
  }

  #fail(err: ProviderError): void {
    this.#closed = true;
    if (this.#idleTimer) clearTimeout(this.#idleTimer);
    this.#socket.destroy();
    const waiters = [...this.#pending.values()];
    this.#pending.clear();
    for (const waiter of waiters) waiter.reject(err);
  }
}

class DnsStreamSession {
  readonly #opts: StreamSessionOptions;
  #live: Connection | undefined;
  #connecting: Promise<Connection> | undefined;

  constructor(opts: StreamSessionOptions) {
    this.#opts = opts;
  }

  /** Sends one query and returns its checked answer. */
  query(q: DnsQuestion, signal: AbortSignal): Promise<DnsAnswer> {
    return this.exchange(
      (id) => encodeQuery(id, q),
      (bytes, id) => expectAnswer(bytes, id, q),
      signal,
    );
  }

  /**
   * Sends the message `encode` builds with a free id and returns what `read` makes of the
   * answer carrying that id (`read` throws a ProviderError for one it refuses).
   */
  async exchange<T>(
    encode: (id: number) => Buffer,
    read: (bytes: Buffer, id: number) => T,
    signal: AbortSignal,
  ): Promise<T> {
    try {
      return await this.#exchange(encode, read, signal);
    } catch (err) {
      // A pooled connection the server closed as idle while our query was in
      // flight says nothing about the resolver: try once on a fresh one.
      if (err instanceof ConnectionClosed && err.reused && !signal.aborted)
        return this.#exchange(encode, read, signal);
      throw err;
    }
  }

  async close(): Promise<void> {
    const connecting = this.#connecting;
    this.#live?.close();
    this.#live = undefined;
    if (connecting) {
      try {
        (await connecting).close();
      } catch {
        // A connection that never opened has nothing to close.
      }
    }
  }

  async #exchange<T>(
    encode: (id: number) => Buffer,
    read: (bytes: Buffer, id: number) => T,
    signal: AbortSignal,
  ): Promise<T> {
    if (signal.aborted) throw abortError(signal, this.#opts.url);
    const conn = await abortable(this.#connection(), signal, this.#opts.url);
    const id = conn.freeId();
    const bytes = await new Promise<Buffer>((resolve, reject) => {
      const onAbort = () => {
        conn.abandon(id);
        reject(abortError(signal, this.#opts.url));
      };
      signal.addEventListener('abort', onAbort, { once: true });
      conn.send(id, encode(id), {
        resolve: (b) => {
          signal.removeEventListener('abort', onAbort);
          resolve(b);
        },
        reject: (e) => {
          signal.removeEventListener('abort', onAbort);
          reject(e);
        },
      });
    });
    return read(bytes, id);
  }

  /** The open connection, or the one being opened (shared by concurrent callers), or a new one. */
  #connection(): Promise<Connection> {
    if (this.#live && !this.#live.closed) return Promise.resolve(this.#live);
    this.#connecting ??= this.#opts
      .connect()
      .then(
        (socket) => {
          const conn: Connection = new Connection(
            socket,
            this.#opts.url,
            this.#opts.idleTimeoutMs ?? 10_000,
            () => {
              if (this.#live === conn) this.#live = undefined;
            },
          );
          this.#live = conn;
          return conn;
        },
        (err: unknown) => {
          throw classifyError(err, this.#opts.url);
        },
      )
      .finally(() => {
        this.#connecting = undefined;
      });
    return this.#connecting;
  }
}
