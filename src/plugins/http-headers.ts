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
  }
}

// JSON is never rendered as a document, so it may load nothing and be framed nowhere.
const JSON_CSP = "default-src 'none'; frame-ancestors 'none'";

async function httpHeadersPlugin(app: FastifyInstance): Promise<void> {
  app.decorateReply('cacheable', function (this: FastifyReply, cache: { hit: boolean; maxAge: number }) {
    this.header('x-service-cache', cache.hit ? 'HIT' : 'MISS');
    this.header('cache-control', `public, max-age=${Math.max(0, Math.floor(cache.maxAge))}`);
    return this;
  });

  app.addHook('onSend', async (request, reply, payload) => {
    reply.header('x-request-id', request.id);
    reply.header('x-content-type-options', 'nosniff');
    reply.header('referrer-policy', 'no-referrer');
    const type = String(reply.getHeader('content-type') ?? '');
    if (type.startsWith('application/json') && !reply.hasHeader('content-security-policy')) {
      reply.header('content-security-policy', JSON_CSP);
    }
    // A 304 revalidates a cacheable response: it keeps that response's caching headers.
    if ((reply.statusCode >= 300 && reply.statusCode !== 304) || !reply.hasHeader('cache-control')) {
      reply.header('cache-control', 'no-store');
      reply.removeHeader('x-service-cache');
    }
    // The matched route, not the raw URL: the router decodes `/%61pi/...` to `/api/...`.
    const path = request.routeOptions.url ?? request.url;
    const isApi = path.startsWith('/api/') || path === '/openapi.json';
    if (isApi && (request.method === 'GET' || request.method === 'HEAD')) {
      // Public, credential-free data: any origin may read it, cookies are never sent cross-origin.
      reply.header('access-control-allow-origin', '*');
      reply.header(
        'access-control-expose-headers',
        'x-service-cache, retry-after, ratelimit, ratelimit-policy, x-request-id',
      );
    }
    return payload;
  });
}

export default fp(httpHeadersPlugin, { name: 'http-headers' });
