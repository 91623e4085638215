/**
 * The challenge gate (docs/architecture.md §5). When protection is active (both
 * Turnstile keys set), every /api route is diagnostic and needs a valid lookup
 * session, unless its options say `config: { passive: true }`. Default-deny,
 * so an endpoint added later is protected without anyone remembering to ask.
 *
 * One rule for every caller: browsers, scripts and AI agents (/mcp's tool calls
 * are answered by these routes) alike present the session cookie; nothing is
 * decided by user agent. The one exemption is the operator's to make, by client
 * address (CHALLENGE_EXEMPT_CIDRS), never a silent bypass. Paths outside /api (the site,
 * /openapi.json, /docs, health, metrics) are never gated, nor are unknown
 * routes, which answer 404 without doing any work.
 *
 * Registered right after the rate limiter so its onRequest hook runs second:
 * a 429 wins over the 403, and an unverified flood is counted (and stopped)
 * before anything else happens.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { Clock } from '../cache/types.js';
import { AppError } from '../errors.js';
import { sessionFromCookies } from '../features/challenge/cookie.js';
import { errorResponses } from '../features/shared.schema.js';
import { isAllowedByCidrs } from '../net/address.js';
import { clientIp } from './client-address.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Needs no lookup session even when challenge protection is active. */
    passive?: boolean;
  }
  interface FastifyInstance {
    /** The gate's rule, for answers given before Fastify routes a request (plugins/cached-answers.ts). */
    challengeGate: ChallengeGate;
  }
}

export interface ChallengeGate {
  /** Whether this deployment asks this route's callers for a session (false when protection is off). */
  gated(request: FastifyRequest): boolean;
  /** Whether a caller with this address and Cookie header may use a gated route. */
  admits(ip: string, cookie: string | undefined): boolean;
}

export interface ChallengeGateOptions {
  active: boolean;
  sessionSecret: string;
  clock: Clock;
  /** Client addresses the operator exempts (CHALLENGE_EXEMPT_CIDRS): still limited, never asked for a session. */
  exemptCidrs: readonly string[];
}

export function challengeRequired(): AppError {
  return new AppError(
    403,
    'challenge_required',
    'a lookup session is required: complete the challenge and POST its token to /api/challenge/verify',
  );
}

async function challengeGatePlugin(app: FastifyInstance, opts: ChallengeGateOptions): Promise<void> {
  // Every gated route documents its 403 in /openapi.json, whether or not this
  // deployment has protection on: the contract is the same for every deployment.
  // Fastify lets onRoute adjust a route's options before it is built.
  app.addHook('onRoute', (route) => {
    if (!route.url.startsWith('/api/') || route.config?.passive === true) return;
    if (route.schema === undefined || route.schema.hide === true) return;
    const response = (route.schema.response ?? {}) as Record<string, unknown>;
    if (response[403] !== undefined || response['4xx'] !== undefined) return;
    route.schema = { ...route.schema, response: { ...response, ...errorResponses(403) } };
  });

  // Inactive protection adds no request hook: nothing to check, nothing to pay per request.
  if (!opts.active) {
    app.decorate('challengeGate', { gated: () => false, admits: () => true } satisfies ChallengeGate);
    return;
  }
  // The matched route's template, not request.url: the router decodes the path,
  // so /%61pi/dns reaches /api/dns while its raw URL does not start with /api/.
  const gated = (request: FastifyRequest) => {
    const route = request.routeOptions.url;
    return route?.startsWith('/api/') === true && request.routeOptions.config.passive !== true;
  };
  const admits = (ip: string, cookie: string | undefined) =>
    (opts.exemptCidrs.length > 0 && isAllowedByCidrs(ip, opts.exemptCidrs)) ||
    sessionFromCookies(cookie, opts.sessionSecret, opts.clock()) !== undefined;
  app.decorate('challengeGate', { gated, admits } satisfies ChallengeGate);
  app.addHook('onRequest', async (request: FastifyRequest) => {
    if (gated(request) && !admits(clientIp(request), request.headers.cookie)) throw challengeRequired();
  });
  // A gated answer went only to a session holder: a shared cache (a CDN, a corporate proxy)
  // must not hand it to a client without one, so it may be kept by the browser alone.
  app.addHook('onSend', (request, reply, payload, done) => {
    if (gated(request)) {
      const policy = reply.getHeader('cache-control');
      if (typeof policy === 'string' && policy.startsWith('public')) {
        reply.header('cache-control', `private${policy.slice('public'.length)}`);
      }
      const vary = reply.getHeader('vary');
      reply.header('vary', typeof vary === 'string' && vary !== '' ? `${vary}, Cookie` : 'Cookie');
    }
    done(null, payload);
  });
}

export default fp(challengeGatePlugin, { name: 'challenge-gate', dependencies: ['rate-limit'] });
