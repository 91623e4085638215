/**
 * The per-client limits (rate-limit/client-limits.ts) on Fastify: which budgets a route
 * counts against (/api/* the general one; routes with `config: { expensive: true }` the
 * expensive one as well), counted in onRequest, with the RateLimit headers and the 429.
 * The counting itself, and where it is kept, is src/rate-limit/'s.
 */
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { RateLimitSpec } from '../config/index.js';
import { type AppError, tooManyRequests } from '../errors.js';
import {
  type Budget,
  ClientLimits,
  type LimitGroup,
  type LimitState,
  type LimitTier,
  type Verdict,
} from '../rate-limit/client-limits.js';
import { MemoryStore } from '../rate-limit/memory-store.js';
import type { RateLimitStore } from '../rate-limit/store.js';
import { clientIp } from './client-address.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Counts against the expensive budget as well as the general one. */
    expensive?: boolean;
  }
  interface FastifyInstance {
    /** The limits: what a request counts against, counting it, and reading a caller's state. */
    rateLimits: RateLimits;
  }
}

export interface RateLimits {
  tiers(): LimitTier[];
  /** The caller's state in every tier, read without consuming a point. */
  peek(ip: string): Promise<Record<LimitGroup, LimitState>>;
  /** The budgets a request to this route counts against; undefined outside /api. */
  budgetOf(request: FastifyRequest): Budget | undefined;
  /** Counts one request from this (canonical) address against a budget. */
  admit(budget: Budget, ip: string): Verdict | Promise<Verdict>;
  /**
   * A verdict reached for this request before it reached Fastify: the limiter's hook applies
   * it (headers, 429) instead of counting the request a second time.
   */
  settle(raw: IncomingMessage, verdict: Verdict): void;
  /**
   * Counts a request outside /api against the general budget, from its handler: for a route
   * that learns from the body whether another route counts the request instead (/mcp: a tool
   * call is its route's request). Writes the RateLimit headers; a refusal rejects with the 429.
   */
  charge(request: FastifyRequest, reply: FastifyReply): void | Promise<void>;
}

export interface RateLimitOptions {
  general: RateLimitSpec;
  expensive: RateLimitSpec;
  /** Where the budgets are counted (ctx.rateLimitStore); in this process when absent. */
  store?: RateLimitStore;
  onReject?: (group: LimitGroup) => void;
}

async function rateLimitPlugin(app: FastifyInstance, opts: RateLimitOptions): Promise<void> {
  const limits = new ClientLimits({
    general: opts.general,
    expensive: opts.expensive,
    store: opts.store ?? new MemoryStore(),
  });
  // Verdicts reached before Fastify saw the request (plugins/cached-answers.ts counted it and
  // found it refused): the hook answers from them instead of counting the request again.
  const settled = new WeakMap<IncomingMessage, Verdict>();

  const expensivePaths = new Set<string>();
  app.addHook('onRoute', (route) => {
    if (route.config?.expensive) expensivePaths.add(route.url);
  });
  app.decorate('rateLimits', {
    tiers: () => limits.tiers([...expensivePaths]),
    peek: (ip) => limits.peek(ip),
    budgetOf: (request) => {
      // The matched route when there is one: the router decodes the path, so /%61pi/dns
      // reaches /api/dns although its raw URL does not start with /api/.
      const route = request.routeOptions;
      if (!(route.url ?? request.url).startsWith('/api/')) return undefined;
      return route.config.expensive ? limits.costly : limits.cheap;
    },
    admit: (budget, ip) => limits.admit(budget, ip),
    settle: (raw, verdict) => {
      settled.set(raw, verdict);
    },
    charge: (request, reply) => {
      reply.header('ratelimit-policy', limits.cheap.policy);
      const verdict = limits.admit(limits.cheap, clientIp(request));
      if (verdict instanceof Promise) return verdict.then((v) => charged(reply, v));
      charged(reply, verdict);
    },
  } satisfies RateLimits);

  /** The verdict's RateLimit header written; the 429 to answer when a budget refused. */
  const refusalOf = (reply: FastifyReply, verdict: Verdict): AppError | undefined => {
    reply.header('ratelimit', verdict.items);
    if (verdict.refused === undefined) return undefined;
    opts.onReject?.(verdict.refused.group);
    return tooManyRequests(verdict.refused.retryAfter, verdict.refused.group);
  };
  const apply = (reply: FastifyReply, verdict: Verdict, done: (err?: Error) => void): void => {
    const refusal = refusalOf(reply, verdict);
    if (refusal === undefined) done();
    else done(refusal);
  };
  const charged = (reply: FastifyReply, verdict: Verdict): void => {
    const refusal = refusalOf(reply, verdict);
    if (refusal !== undefined) throw refusal;
  };

  // Callback style: in process the request goes on in the same tick.
  app.addHook('onRequest', (request: FastifyRequest, reply: FastifyReply, done) => {
    const budget = app.rateLimits.budgetOf(request);
    if (budget === undefined) return done();
    reply.header('ratelimit-policy', budget.policy);
    const verdict = settled.get(request.raw) ?? limits.admit(budget, clientIp(request));
    if (verdict instanceof Promise) verdict.then((v) => apply(reply, v, done), done);
    else apply(reply, verdict, done);
  });
}

export default fp(rateLimitPlugin, { name: 'rate-limit' });
