/**
 * Per-address limits (docs/architecture.md §5): a general budget across /api/*, and
 * a smaller one for expensive live measurements, which routes opt into with
 * `config: { expensive: true }`. Counted in Redis when configured so every
 * instance shares one budget; if Redis fails, an in-process insurance limiter
 * takes over and the service keeps serving.
 *
 * Headers follow draft-ietf-httpapi-ratelimit-headers (structured fields):
 *   RateLimit-Policy: "general";q=30;w=60, "expensive";q=6;w=60
 *   RateLimit: "general";r=29;t=60
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { Redis } from 'ioredis';
import { RateLimiterRes } from 'rate-limiter-flexible';
import { serializeList } from 'structured-headers';
import { FixedWindowCounter, sharedLimiter } from '../cache/limiter.js';
import type { RateLimitSpec } from '../config/index.js';
import { tooManyRequests } from '../errors.js';
import { clientIp, rateLimitKey } from './client-address.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Counts against the expensive budget as well as the general one. */
    expensive?: boolean;
  }
  interface FastifyInstance {
    /** Read-only view of the limits, for GET /api/challenge/status. */
    rateLimits: RateLimitView;
  }
}

export type LimitGroup = 'general' | 'expensive';

/** A budget's answer to one point: whether it was granted, and the window it fell in. */
interface Taken {
  granted: boolean;
  remaining: number;
  msBeforeNext: number;
}

interface Limiter {
  readonly group: LimitGroup;
  readonly spec: RateLimitSpec;
  /** Synchronous when counted in process (the hot path awaits nothing); a promise with Redis. */
  consume(key: string): Taken | Promise<Taken>;
  /** The current state without consuming a point; null when the key has no window open. */
  get(key: string): Promise<Taken | null>;
}

/** One caller's budget in one tier. */
export interface LimitState {
  limit: number;
  remaining: number;
  /** Whole seconds until the window resets; 0 when no window is open. */
  reset_seconds: number;
}

export interface LimitTier {
  name: LimitGroup;
  limit: number;
  window_seconds: number;
  /** Route paths counted against this tier on top of the general one (expensive tier only). */
  endpoints?: string[];
}

export interface RateLimitView {
  tiers(): LimitTier[];
  /** The caller's state in every tier, read without consuming a point. */
  peek(ip: string): Promise<Record<LimitGroup, LimitState>>;
}

export interface RateLimitOptions {
  general: RateLimitSpec;
  expensive: RateLimitSpec;
  redis?: Redis | undefined;
  onReject?: (group: LimitGroup) => void;
}

function taken(spec: RateLimitSpec, consumed: number, msBeforeNext: number): Taken {
  return { granted: consumed <= spec.points, remaining: Math.max(0, spec.points - consumed), msBeforeNext };
}

function fromRes(spec: RateLimitSpec, res: RateLimiterRes): Taken {
  return taken(spec, res.consumedPoints, res.msBeforeNext);
}

function makeLimiter(group: LimitGroup, spec: RateLimitSpec, redis: Redis | undefined): Limiter {
  if (redis === undefined) {
    const window = new FixedWindowCounter(spec.seconds);
    return {
      group,
      spec,
      consume: (key) => {
        const state = window.consume(key);
        return taken(spec, state.consumed, state.msBeforeNext);
      },
      get: async (key) => {
        const state = window.peek(key);
        return state === undefined ? null : taken(spec, state.consumed, state.msBeforeNext);
      },
    };
  }
  const limiter = sharedLimiter({
    keyPrefix: `rl:${group}`,
    points: spec.points,
    duration: spec.seconds,
    redis,
  });
  return {
    group,
    spec,
    consume: (key) =>
      limiter.consume(key).then(
        (res) => fromRes(spec, res),
        (rejection: unknown) => {
          // rate-limiter-flexible rejects with a RateLimiterRes when the budget is spent.
          if (rejection instanceof RateLimiterRes) return fromRes(spec, rejection);
          throw rejection;
        },
      ),
    get: async (key) => {
      const res = await limiter.get(key);
      return res === null ? null : fromRes(spec, res);
    },
  };
}

function stateOf(spec: RateLimitSpec, res: Taken | null): LimitState {
  // No record, or one whose window has lapsed but not yet been swept: the full budget is there.
  if (res === null || res.msBeforeNext <= 0)
    return { limit: spec.points, remaining: spec.points, reset_seconds: 0 };
  return {
    limit: spec.points,
    remaining: Math.min(spec.points, res.remaining),
    reset_seconds: Math.ceil(res.msBeforeNext / 1000),
  };
}

/**
 * One member of the RateLimit list (a structured-field list, RFC 9651): the policy's name as
 * a string, remaining quota (r) and seconds to reset (t), both non-negative integers. Written
 * directly: serializing it through structured-headers cost ~0.9 µs per request for a string
 * whose only variable parts are two integers (the two agree: test/unit/plugins).
 */
export function rateLimitItem(group: LimitGroup, remaining: number, resetSeconds: number): string {
  return `"${group}";r=${remaining};t=${resetSeconds}`;
}

function itemOf(group: LimitGroup, res: Taken): string {
  return rateLimitItem(group, res.remaining, Math.max(0, Math.ceil(res.msBeforeNext / 1000)));
}

async function rateLimitPlugin(app: FastifyInstance, opts: RateLimitOptions): Promise<void> {
  const general = makeLimiter('general', opts.general, opts.redis);
  const expensive = makeLimiter('expensive', opts.expensive, opts.redis);
  const policyOf = (groups: Limiter[]) =>
    serializeList(
      groups.map((l) => [
        l.group,
        new Map([
          ['q', l.spec.points],
          ['w', l.spec.seconds],
        ]),
      ]),
    );
  const cheap = { limiters: [general], policy: policyOf([general]) };
  const costly = { limiters: [general, expensive], policy: policyOf([general, expensive]) };

  const expensivePaths = new Set<string>();
  app.addHook('onRoute', (route) => {
    if (route.config?.expensive) expensivePaths.add(route.url);
  });
  app.decorate('rateLimits', {
    tiers: (): LimitTier[] => [
      { name: 'general', limit: general.spec.points, window_seconds: general.spec.seconds },
      {
        name: 'expensive',
        limit: expensive.spec.points,
        window_seconds: expensive.spec.seconds,
        endpoints: [...expensivePaths].sort(),
      },
    ],
    peek: async (ip: string): Promise<Record<LimitGroup, LimitState>> => {
      const key = rateLimitKey(ip);
      const [g, e] = await Promise.all([general.get(key), expensive.get(key)]);
      return { general: stateOf(general.spec, g), expensive: stateOf(expensive.spec, e) };
    },
  } satisfies RateLimitView);

  /**
   * Takes a point from each of the route's budgets in order, stopping at the first that
   * refuses (its point is counted, the next budget's is not). Callback style: in process
   * every budget answers synchronously and the request goes on in the same tick.
   */
  const take = (
    reply: FastifyReply,
    limiters: readonly Limiter[],
    key: string,
    from: number,
    items: string,
    done: (err?: Error) => void,
  ): void => {
    for (let i = from; i < limiters.length; i++) {
      const limiter = limiters[i]!;
      const answer = limiter.consume(key);
      if (answer instanceof Promise) {
        answer.then((res) => {
          const next = settle(reply, limiter, res, items, done);
          if (next !== undefined) take(reply, limiters, key, i + 1, next, done);
        }, done);
        return;
      }
      const next = settle(reply, limiter, answer, items, done);
      if (next === undefined) return;
      items = next;
    }
    reply.header('ratelimit', items);
    done();
  };
  /** The RateLimit list so far with this budget's member, or undefined when it refused (answered 429). */
  const settle = (
    reply: FastifyReply,
    limiter: Limiter,
    res: Taken,
    items: string,
    done: (err?: Error) => void,
  ): string | undefined => {
    const list = items === '' ? itemOf(limiter.group, res) : `${items}, ${itemOf(limiter.group, res)}`;
    if (res.granted) return list;
    reply.header('ratelimit', list);
    opts.onReject?.(limiter.group);
    done(tooManyRequests(Math.max(1, Math.ceil(res.msBeforeNext / 1000)), limiter.group));
    return undefined;
  };

  app.addHook('onRequest', (request: FastifyRequest, reply: FastifyReply, done) => {
    // The matched route when there is one: the router decodes the path, so /%61pi/dns
    // reaches /api/dns although its raw URL does not start with /api/.
    const route = request.routeOptions;
    if (!(route.url ?? request.url).startsWith('/api/')) return done();
    const { limiters, policy } = route.config.expensive ? costly : cheap;
    reply.header('ratelimit-policy', policy);
    take(reply, limiters, rateLimitKey(clientIp(request)), 0, '', done);
  });
}

export default fp(rateLimitPlugin, { name: 'rate-limit' });
