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
import { type Item, serializeList } from 'structured-headers';
import { sharedLimiter } from '../cache/limiter.js';
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

interface Limiter {
  readonly group: LimitGroup;
  readonly spec: RateLimitSpec;
  consume(key: string): Promise<RateLimiterRes>;
  /** The current state without consuming a point; null when the key has no window open. */
  get(key: string): Promise<RateLimiterRes | null>;
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

function makeLimiter(group: LimitGroup, spec: RateLimitSpec, redis: Redis | undefined): Limiter {
  const limiter = sharedLimiter({
    keyPrefix: `rl:${group}`,
    points: spec.points,
    duration: spec.seconds,
    redis,
  });
  return { group, spec, consume: (key) => limiter.consume(key), get: (key) => limiter.get(key) };
}

function stateOf(spec: RateLimitSpec, res: RateLimiterRes | null): LimitState {
  // No record, or one whose window has lapsed but not yet been swept: the full budget is there.
  if (res === null || res.msBeforeNext <= 0)
    return { limit: spec.points, remaining: spec.points, reset_seconds: 0 };
  return {
    limit: spec.points,
    remaining: Math.max(0, Math.min(spec.points, res.remainingPoints)),
    reset_seconds: Math.ceil(res.msBeforeNext / 1000),
  };
}

/** One member of the RateLimit list: the policy's name, remaining quota (r) and seconds to reset (t). */
function item(group: LimitGroup, res: RateLimiterRes, spec: RateLimitSpec): Item {
  const remaining = Math.max(0, Math.min(spec.points, res.remainingPoints));
  const reset = Math.max(0, Math.ceil(res.msBeforeNext / 1000));
  return [
    group,
    new Map([
      ['r', remaining],
      ['t', reset],
    ]),
  ];
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

  app.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
    // The matched route when there is one: the router decodes the path, so /%61pi/dns
    // reaches /api/dns although its raw URL does not start with /api/.
    const route = request.routeOptions;
    if (!(route.url ?? request.url).startsWith('/api/')) return;
    const { limiters, policy } = route.config.expensive ? costly : cheap;
    const key = rateLimitKey(clientIp(request));
    reply.header('ratelimit-policy', policy);
    const items: Item[] = [];
    for (const limiter of limiters) {
      let res: RateLimiterRes;
      try {
        res = await limiter.consume(key);
      } catch (rejection) {
        // rate-limiter-flexible rejects with a RateLimiterRes when the budget is spent.
        if (!(rejection instanceof RateLimiterRes)) throw rejection;
        reply.header('ratelimit', serializeList([...items, item(limiter.group, rejection, limiter.spec)]));
        opts.onReject?.(limiter.group);
        throw tooManyRequests(Math.max(1, Math.ceil(rejection.msBeforeNext / 1000)), limiter.group);
      }
      items.push(item(limiter.group, res, limiter.spec));
    }
    reply.header('ratelimit', serializeList(items));
  });
}

export default fp(rateLimitPlugin, { name: 'rate-limit' });
