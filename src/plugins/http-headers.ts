/**
 * Response headers every reply shares: cache policy (X-Service-Cache and
 * Cache-Control for cacheable successes, no-store for everything else),
 * baseline security headers, CORS for the public GET API, and the request id.
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import fp from 'fastify-plugin';

declare module 'fastify' {
  interface FastifyReply {
    /** Marks a successful answer as cacheable for maxAge seconds, with HIT/MISS for X-Service-Cache. */
    cacheable(cache: { hit: boolean; maxAge: number }): FastifyReply;
    /**
     * Sends a 200 body that many requests share (every hit on one cache entry gets the
     * same object): it goes through this route's serializer once, not once per request.
     * The body must not be mutated afterwards.
     */
    sendShared(body: object): FastifyReply;
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

async function httpHeadersPlugin(app: FastifyInstance): Promise<void> {
  app.decorateReply('cacheable', function (this: FastifyReply, cache: { hit: boolean; maxAge: number }) {
    this.header('x-service-cache', cache.hit ? 'HIT' : 'MISS');
    this.header('cache-control', `public, max-age=${Math.max(0, Math.floor(cache.maxAge))}`);
    return this;
  });

  // Per body object, with the route whose serializer produced it: a body is only reused as
  // that route's JSON. Entries go when their cache entry (the body's only holder) goes.
  const serialized = new WeakMap<object, { route: string | undefined; json: string }>();
  app.decorateReply('sendShared', function (this: FastifyReply, body: object) {
    const route = this.request.routeOptions.url;
    let memo = serialized.get(body);
    if (memo === undefined || memo.route !== route) {
      // A route's JSON serializer yields a string; String() only pins the type.
      memo = { route, json: String(this.serialize(body)) };
      serialized.set(body, memo);
    }
    return this.type('application/json; charset=utf-8').send(memo.json);
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

/**
 * A lookup's body, with the reply marked cacheable as the lookup says: the one-line
 * handler `async (request, reply) => answer(reply, await lookupX(deps, request.query.x))`.
 * A hit's body is the cache entry's own object, the same on every hit, so it is sent
 * through sendShared: serialized once per entry, not once per request (what /api/dns
 * always did, now every cached endpoint). A fresh answer is returned for Fastify to
 * serialize. Either way the route's response schema types the body.
 */
export function answer<B extends object>(
  reply: FastifyReply,
  lookup: { body: B; cache: { hit: boolean; maxAge: number } },
): B | FastifyReply {
  reply.cacheable(lookup.cache);
  return lookup.cache.hit ? reply.sendShared(lookup.body) : lookup.body;
}

export default fp(httpHeadersPlugin, { name: 'http-headers' });
