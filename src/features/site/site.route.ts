/**
 * The site at `/`: the page built by `npm run build` into dist/web (see
 * scripts/build-web.ts), served by this process.
 *
 *   GET /            index.html, `Cache-Control: no-cache` (always revalidated, so a
 *                    deploy is seen at once) and the site's own strict CSP
 *   GET /assets/*    content-hashed JS, CSS and icon: `public, max-age=31536000, immutable`
 *
 * Neither is part of the API: hidden from /openapi.json, outside /api (so no
 * rate limit, no challenge gate, no CORS). The page uses only the public API.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { type Config, challengeActive } from '../../config/index.js';
import type { AppContext } from '../../context.js';
import { AppError } from '../../errors.js';

/** dist/web at the repository root, from src/features/site (tsx) or an equally deep compiled copy. */
export const SITE_DIR = fileURLToPath(new URL('../../../dist/web/', import.meta.url));

const IMMUTABLE = 'public, max-age=31536000, immutable';
const REVALIDATE = 'no-cache';

/**
 * The page runs only its own bundled script (no inline code), talks only to
 * its own origin, and, when challenge protection is on, also loads the
 * Turnstile script and its iframe from the configured widget origin
 * (Cloudflare documents script-src and frame-src for it).
 */
export function siteCsp(config: Config): string {
  const widget = challengeActive(config) ? new URL(config.turnstileScriptUrl).origin : undefined;
  return [
    "default-src 'none'",
    `script-src 'self'${widget ? ` ${widget}` : ''}`,
    "style-src 'self'",
    "img-src 'self'",
    "connect-src 'self'",
    `frame-src ${widget ?? "'none'"}`,
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
    "manifest-src 'self'",
  ].join('; ');
}

export default async function siteRoutes(app: FastifyInstance, { ctx }: { ctx: AppContext }): Promise<void> {
  const csp = siteCsp(ctx.config);
  // The widget decides which site embeds it from the page's origin, so it must see that origin
  // (never the path or query, which hold what the visitor looked up).
  const referrerPolicy = challengeActive(ctx.config) ? 'strict-origin' : 'no-referrer';
  const indexFile = join(SITE_DIR, 'index.html');

  await app.register(fastifyStatic, {
    root: join(SITE_DIR, 'assets'),
    prefix: '/assets/',
    index: false,
    // Names carry a content hash (scripts/build-web.ts): a changed file is a new URL.
    immutable: true,
    // The build writes .br and .gz beside every text file: sent as they are, never compressed per request.
    preCompressed: true,
    maxAge: '365d',
    etag: true,
    lastModified: true,
    // Hidden from /openapi.json: the page's files are not API operations.
    schemaHide: true,
  });

  // The global header hook answers every 3xx, 304 included, with `no-store`; a revalidated copy
  // must keep the policy it was stored with, so this scope's own hook (which runs after it) restores it.
  app.addHook('onSend', async (request, reply: FastifyReply, payload) => {
    const path = request.routeOptions.url ?? '';
    if (path === '/') {
      reply.header('cache-control', REVALIDATE);
      reply.header('referrer-policy', referrerPolicy);
    } else if (path.startsWith('/assets/') && (reply.statusCode === 200 || reply.statusCode === 304)) {
      reply.header('cache-control', IMMUTABLE);
    }
    return payload;
  });

  app.get('/', { schema: { hide: true } }, async (_request, reply) => {
    if (!existsSync(indexFile)) {
      throw new AppError(
        503,
        'unavailable',
        'the site is not built: run `npm run build` (npm start does it when missing)',
      );
    }
    reply.header('content-security-policy', csp);
    reply.header('x-frame-options', 'DENY');
    reply.header('cross-origin-opener-policy', 'same-origin');
    reply.header('permissions-policy', 'camera=(), microphone=(), geolocation=(), interest-cohort=()');
    return reply.sendFile('index.html', SITE_DIR, { cacheControl: false });
  });
}
