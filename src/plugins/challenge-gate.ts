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
 * The rule is applied by the challenge-gate check (plugins/request-checks.ts),
 * after the rate limit: a 429 wins over the 403, and an unverified flood is
 * counted (and stopped) before anything else happens.
 */
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { errorResponses } from '../api-schema.js';
import type { Clock } from '../cache/types.js';
import { AppError } from '../errors.js';
import { isAllowedByCidrs } from '../net/address.js';
import { sessionFromCookies } from '../session/cookie.js';
import { type RouteFacts, routeFactsOf } from './request-checks.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Needs no lookup session even when challenge protection is active. */
    passive?: boolean;
  }
}

export interface ChallengeGateOptions {
  active: boolean;
  sessionSecret: string;
  clock: Clock;
  /** Client addresses the operator exempts (CHALLENGE_EXEMPT_CIDRS): still limited, never asked for a session. */
  exemptCidrs: readonly string[];
}

/** The gate's rule; the challenge-gate check (plugins/request-checks.ts) applies it. */
export class ChallengeGate {
  readonly #opts: ChallengeGateOptions;

  constructor(opts: ChallengeGateOptions) {
    this.#opts = opts;
  }

  /** Whether this deployment asks this route's callers for a session (never when protection is off). */
  gated(route: RouteFacts): boolean {
    return this.#opts.active && route.matched && route.path.startsWith('/api/') && !route.passive;
  }

  /** Whether a caller with this address and Cookie header may use a gated route. */
  admits(ip: string, cookie: string | undefined): boolean {
    const { exemptCidrs, sessionSecret, clock } = this.#opts;
    return (
      (exemptCidrs.length > 0 && isAllowedByCidrs(ip, exemptCidrs)) ||
      sessionFromCookies(cookie, sessionSecret, clock()) !== undefined
    );
  }

  refusal(): AppError {
    return challengeRequired();
  }
}

export function challengeRequired(): AppError {
  return new AppError(
    403,
    'challenge_required',
    'a lookup session is required: complete the challenge and POST its token to /api/challenge/verify',
  );
}

/** What the gate means for the contract and for caches: the 403 documented, gated answers private. */
async function challengeGatePlugin(app: FastifyInstance, opts: { gate: ChallengeGate }): Promise<void> {
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

  // A gated answer went only to a session holder: a shared cache (a CDN, a corporate proxy)
  // must not hand it to a client without one, so it may be kept by the browser alone.
  app.addHook('onSend', (request, reply, payload, done) => {
    if (opts.gate.gated(routeFactsOf(request))) {
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

export default fp(challengeGatePlugin, { name: 'challenge-gate' });
