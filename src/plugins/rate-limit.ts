/**
 * The per-client limits as routes use them (docs/architecture.md §5): which routes are
 * expensive (`config: { expensive: true }`, read as routes register), the tiers and a
 * caller's state for GET /api/challenge/status and the tool catalog, and `charge` for the
 * one route that counts its own requests (/mcp). Every other request is counted by the
 * rate-limit check (plugins/request-checks.ts); the budgets and their store are
 * src/rate-limit/.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { measurementPayer } from '../cache/cached.js';
import { type AppError, tooManyRequests } from '../errors.js';
import type {
  Budget,
  ClientLimits,
  LimitGroup,
  LimitState,
  LimitTier,
  Verdict,
} from '../rate-limit/client-limits.js';
import { clientIp } from './client-address.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** A live measurement it makes counts against the expensive budget too (a cached answer does not). */
    expensive?: boolean;
  }
  interface FastifyInstance {
    /** The limits as routes read them, and /mcp's way of counting a message. */
    rateLimits: RateLimits;
  }
}

export interface RateLimits {
  tiers(): LimitTier[];
  /** The caller's state in every tier, read without consuming a point. */
  peek(ip: string): Promise<Record<LimitGroup, LimitState>>;
  /**
   * Counts a request outside /api against the general budget, from its handler: for a route
   * that learns from the body whether another route counts the request instead (/mcp: a tool
   * call is its route's request). Writes the RateLimit headers; a refusal rejects with the 429.
   */
  charge(request: FastifyRequest, reply: FastifyReply): void | Promise<void>;
}

/**
 * What one request's passage through its budgets means for the response: the RateLimit
 * headers, and the 429 when a budget refused (told to `onRejected`). The rate-limit check
 * (plugins/request-checks.ts) and /mcp's charge both answer through it.
 */
export function rateLimitOutcome(
  budget: Budget,
  verdict: Verdict,
  onRejected?: (group: LimitGroup) => void,
  detail?: string,
): { headers: Record<string, string>; refusal?: AppError } {
  const headers = { 'ratelimit-policy': budget.policy, ratelimit: verdict.items };
  if (verdict.refused === undefined) return { headers };
  onRejected?.(verdict.refused.group);
  return { headers, refusal: tooManyRequests(verdict.refused.retryAfter, verdict.refused.group, detail) };
}

async function rateLimitPlugin(
  app: FastifyInstance,
  opts: { limits: ClientLimits; onReject?: (group: LimitGroup) => void },
): Promise<void> {
  const { limits } = opts;
  const expensivePaths = new Set<string>();
  app.addHook('onRoute', (route) => {
    if (!route.config?.expensive) return;
    expensivePaths.add(route.url);
    // The handler's lookups run with this request as the payer of what they measure
    // (cache/cached.ts): an answer from the cache costs the general point the check took.
    const handler = route.handler;
    route.handler = function measured(this: FastifyInstance, request, reply) {
      return measurementPayer.run(payer(request, reply), () => handler.call(this, request, reply));
    };
  });

  /**
   * What the expensive budget counts, from the one list it counts by (its routes' flag), for its
   * 429: made once, on the first measurement, when every route has registered.
   */
  let measurements: string | undefined;
  const measurementsText = () => {
    measurements ??=
      `${limits.expensive.points} live measurements per ${limits.expensive.seconds} s, by ` +
      [...expensivePaths]
        .map((path) => path.replace(/^\/api\//, ''))
        .sort()
        .join(', ');
    return measurements;
  };

  /**
   * Takes the expensive point once, the first time the request measures; a refusal is its 429,
   * thrown again to any later lookup of the same request, so nothing of it is measured.
   */
  const payer = (request: FastifyRequest, reply: FastifyReply) => {
    type Charged = { refusal?: AppError };
    let charged: Charged | Promise<Charged> | undefined;
    const settle = (verdict: Verdict): Charged => {
      const outcome = rateLimitOutcome(limits.measurement, verdict, opts.onReject, measurementsText());
      // After the general member the request check wrote.
      const before = reply.getHeader('ratelimit');
      reply.header(
        'ratelimit',
        before ? `${String(before)}, ${outcome.headers.ratelimit}` : outcome.headers.ratelimit,
      );
      return outcome;
    };
    const raise = ({ refusal }: Charged): void => {
      if (refusal) throw refusal;
    };
    return (): void | Promise<void> => {
      if (charged === undefined) {
        const verdict = limits.admit(limits.measurement, clientIp(request));
        charged = verdict instanceof Promise ? verdict.then(settle) : settle(verdict);
      }
      return charged instanceof Promise ? charged.then(raise) : raise(charged);
    };
  };

  /** The outcome's RateLimit headers written; the 429 thrown when a budget refused. */
  const charged = (reply: FastifyReply, verdict: Verdict): void => {
    const outcome = rateLimitOutcome(limits.cheap, verdict, opts.onReject);
    reply.headers(outcome.headers);
    if (outcome.refusal) throw outcome.refusal;
  };

  app.decorate('rateLimits', {
    tiers: () => limits.tiers([...expensivePaths]),
    peek: (ip) => limits.peek(ip),
    charge: (request, reply) => {
      const verdict = limits.admit(limits.cheap, clientIp(request));
      if (verdict instanceof Promise) return verdict.then((v) => charged(reply, v));
      charged(reply, verdict);
    },
  } satisfies RateLimits);
}

export default fp(rateLimitPlugin, { name: 'rate-limit' });
