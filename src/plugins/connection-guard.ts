/**
 * Concurrent connections per client address (IPv6: per /64), MAX_CONNECTIONS_PER_IP.
 * The rate limiter counts requests, but a client could hold hundreds of idle or slow
 * sockets without sending one, each a file descriptor and parser state here. A
 * connection over the cap is not dropped unanswered: its request is refused by the
 * connection-cap check (plugins/request-checks.ts) with a JSON 429, `Retry-After` and
 * `Connection: close`, and if it sends none within a second it is closed. Peers
 * TRUST_PROXY trusts are exempt: every client behind a proxy shares its address.
 */
import type { IncomingMessage, Server } from 'node:http';
import { canonicalIp, rateLimitKey } from './client-address.js';

/** The server's TCP socket (net.Socket), named through node:http: sockets are src/net/'s business. */
type Socket = IncomingMessage['socket'];

export interface ConnectionGuardOptions {
  /** 0: no cap. */
  maxPerAddress: number;
  /** True for a peer whose forwarded clients share its address (TRUST_PROXY). */
  trusted: (address: string) => boolean;
  onRefused?: () => void;
}

/** How long a connection over the cap may stay open without sending a request. */
const REFUSED_IDLE_MS = 1_000;

export class ConnectionGuard {
  readonly maxPerAddress: number;
  readonly #opts: ConnectionGuardOptions;
  readonly #refused = new WeakSet<Socket>();
  readonly #open = new Map<string, number>();

  constructor(opts: ConnectionGuardOptions) {
    this.#opts = opts;
    this.maxPerAddress = opts.maxPerAddress;
  }

  /** Counts the server's connections (app.ts, where the server is made). */
  watch(server: Server): void {
    if (this.maxPerAddress <= 0) return;
    server.on('connection', (socket: Socket) => this.#count(socket));
  }

  /** Whether this connection is one over the cap. */
  refused(socket: Socket): boolean {
    return this.#refused.has(socket);
  }

  #count(socket: Socket): void {
    const peer = canonicalIp(socket.remoteAddress ?? '');
    if (peer === undefined || this.#opts.trusted(peer)) return;
    const key = rateLimitKey(peer);
    const count = (this.#open.get(key) ?? 0) + 1;
    if (count > this.maxPerAddress) {
      this.#refused.add(socket);
      // Overrides the server's idle timeout (set by its own connection listener, which ran first).
      socket.setTimeout(REFUSED_IDLE_MS);
      this.#opts.onRefused?.();
      return;
    }
    this.#open.set(key, count);
    socket.once('close', () => {
      const left = (this.#open.get(key) ?? 1) - 1;
      if (left > 0) this.#open.set(key, left);
      else this.#open.delete(key);
    });
  }
}
