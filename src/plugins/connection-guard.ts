/**
 * Checks a request gets before anything else looks at it, about the connection
 * it came on rather than what it asks:
 *
 *  - Concurrent connections per client address (IPv6: per /64), MAX_CONNECTIONS_PER_IP.
 *    The rate limiter counts requests, but a client could hold hundreds of idle or
 *    slow sockets without sending one, each a file descriptor and parser state here.
 *    A connection over the cap is not dropped unanswered: its request gets a JSON 429
 *    with `Retry-After` and `Connection: close`, and if it sends none within a second
 *    it is closed. Peers TRUST_PROXY trusts are exempt: every client behind a proxy
 *    shares its address.
 *  - An HTTP/1.1 request without Host (RFC 9112 §3.2) is a 400 `{error}`; Node's own
 *    answer to it (requireHostHeader, turned off in app.ts) is an empty 400.
 */
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { canonicalIp, rateLimitKey } from './client-address.js';
import { sendError } from './errors.js';

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

declare module 'fastify' {
  interface FastifyInstance {
    /** Whether this request came on a connection over the cap (it is answered 429, below). */
    connectionRefused(raw: IncomingMessage): boolean;
  }
}

async function connectionGuard(app: FastifyInstance, opts: ConnectionGuardOptions): Promise<void> {
  const refused = new WeakSet<Socket>();
  app.decorate('connectionRefused', (raw: IncomingMessage) => refused.has(raw.socket));

  if (opts.maxPerAddress > 0) {
    const open = new Map<string, number>();
    app.server.on('connection', (socket: Socket) => {
      const peer = canonicalIp(socket.remoteAddress ?? '');
      if (peer === undefined || opts.trusted(peer)) return;
      const key = rateLimitKey(peer);
      const count = (open.get(key) ?? 0) + 1;
      if (count > opts.maxPerAddress) {
        refused.add(socket);
        // Overrides the server's idle timeout (set by its own connection listener, which ran first).
        socket.setTimeout(REFUSED_IDLE_MS);
        opts.onRefused?.();
        return;
      }
      open.set(key, count);
      socket.once('close', () => {
        const left = (open.get(key) ?? 1) - 1;
        if (left > 0) open.set(key, left);
        else open.delete(key);
      });
    });
  }

  app.addHook('onRequest', (request, reply, done) => {
    if (refused.has(request.raw.socket)) {
      reply.header('connection', 'close');
      sendError(
        reply,
        429,
        {
          error: `too many concurrent connections from this address (at most ${opts.maxPerAddress})`,
          code: 'too_many_connections',
        },
        { 'retry-after': '1' },
      );
      return;
    }
    if (request.headers.host === undefined && request.raw.httpVersion === '1.1') {
      reply.header('connection', 'close');
      sendError(reply, 400, { error: 'the Host header is required', code: 'bad_request' });
      return;
    }
    done();
  });
}

export default fp(connectionGuard, { name: 'connection-guard', dependencies: ['errors'] });
