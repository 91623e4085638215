/**
 * Response headers every reply shares: cache policy (X-Service-Cache and
 * Cache-Control for cacheable successes, no-store for everything else),
 * baseline security headers, CORS for the public GET API, and the request id.
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import fp from 'fastify-plugin';
import type { Freshness } from '../cache/cached.js';

declare module 'fastify' {
  interface FastifyReply {
    /** Marks a successful answer as cacheable for maxAge seconds, with HIT/MISS for X-Service-Cache. */
    cacheable(cache: Pick<Freshness, 'hit' | 'maxAge'>): FastifyReply;
  }
}

// JSON is never rendered as a document, so it may load nothing and be framed nowhere.
const JSON_CSP = "default-src 'none'; frame-ancestors 'none'";
// Constant sets, each added in one call per reply.
const BASELINE = { 'x-content-type-options': 'nosniff', 'referrer-policy': 'no-referrer' } as const;
const PUBLIC_CORS = {
  'access-control-allow-origin': '*',
  'access-control-expose-headers': 'x-service-cache, retry-after, ratelimit, ratelimit-policy, x-request-id',
} as const;

/**
 * The headers this plugin writes whose value differs per request although the answer is the
 * same: a replay of a cached answer (plugins/response-cache.ts) writes each afresh from what
 * was stored and the request at hand.
 */
export const PER_REQUEST_HEADERS: Readonly<
  Record<string, (stored: string, request: { id: string; maxAge: number }) => string>
> = {
  'x-request-id': (_stored, request) => request.id,
  // max-age counted down to the entry's expiry, as a cache read does (`public` or `private`).
  'cache-control': (stored, request) =>
    `${stored.slice(0, stored.lastIndexOf('max-age=') + 8)}${request.maxAge}`,
};

async function httpHeadersPlugin(app: FastifyInstance): Promise<void> {
  app.decorateReply('cacheable', function (this: FastifyReply, cache: Pick<Freshness, 'hit' | 'maxAge'>) {
    this.header('x-service-cache', cache.hit ? 'HIT' : 'MISS');
    this.header('cache-control', `public, max-age=${Math.max(0, Math.floor(cache.maxAge))}`);
    return this;
  });

  app.addHook('onSend', (request, reply, payload, done) => {
    reply.header('x-request-id', request.id);
    reply.headers(BASELINE);
    const type = reply.getHeader('content-type');
    if (
      typeof type === 'string' &&
      type.startsWith('application/json') &&
      !reply.hasHeader('content-security-policy')
    ) {
      reply.header('content-security-policy', JSON_CSP);
    }
    // A 304 revalidates a cacheable response: it keeps that response's caching headers.
    if ((reply.statusCode >= 300 && reply.statusCode !== 304) || !reply.hasHeader('cache-control')) {
      reply.header('cache-control', 'no-store');
      reply.removeHeader('x-service-cache');
    }
    // The matched route, not the raw URL: the router decodes `/%61pi/...` to `/api/...`.
    const path = request.routeOptions.url ?? request.url;
    if (
      (request.method === 'GET' || request.method === 'HEAD') &&
      (path.startsWith('/api/') || path === '/openapi.json')
    ) {
      // Public, credential-free data: any origin may read it, cookies are never sent cross-origin.
      reply.headers(PUBLIC_CORS);
    }
    done(null, payload);
  });
}

export default fp(httpHeadersPlugin, { name: 'http-headers' });
