/**
 * Per-address limits (docs/architecture.md §5): a general budget across /api/* and /mcp
 * (whose handler counts the messages no /api route counts: charge() below), and a smaller
 * one for expensive live measurements, which routes opt into with
 * `config: { expensive: true }`. Counted in Redis when configured so every
 * instance shares one budget; if Redis fails, an in-process insurance limiter
 * takes over and the service keeps serving.
 *
 * Headers follow draft-ietf-httpapi-ratelimit-headers (structured fields):
 *   RateLimit-Policy: "general";q=30;w=60, "expensive";q=6;w=60
 *   RateLimit: "general";r=29;t=60
 */
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { Redis } from 'ioredis';
import { RateLimiterRes } from 'rate-limiter-flexible';
import { serializeList } from 'structured-headers';
import { FixedWindowCounter, sharedLimiter } from '../cache/limiter.js';
import type { RateLimitSpec } from '../config/index.js';
import { type AppError, tooManyRequests } from '../errors.js';
import { clientIp, rateLimitKey } from './client-address.js';
import type { RouteFacts } from './request-checks.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Counts against the expensive budget as well as the general one. */
    expensive?: boolean;
  }
  interface FastifyInstance {
    /** The limits as routes use them (status, catalog, /mcp's charge). */
    rateLimits: RateLimitView;
  }
}

export type LimitGroup = 'general' | 'expensive';

/** A budget's answer to one point: whether it was granted, and the window it fell in. */
export interface Taken {
  granted: boolean;
  remaining: number;
  msBeforeNext: number;
}

export interface Limiter {
  readonly group: LimitGroup;
  readonly spec: RateLimitSpec;
  /** Synchronous when counted in process (the hot path awaits nothing); a promise with Redis. */
  consume(key: string): Taken | Promise<Taken>;
  /** The current state without consuming a point; null when the key has no window open. */
  get(key: string): Promise<Taken | null>;
  /** With Redis: the counter's key for a client key (rate-limiter-flexible's naming). */
  readonly redisKey?: (key: string) => string;
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

/** What routes read of the limits (/api/challenge/status, the tool catalog) and how /mcp counts its messages. */
export interface RateLimitView {
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
    redisKey: (key) => limiter.getKey(key),
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

/** The budgets a request counts against, and the RateLimit-Policy that describes them. */
export interface Budget {
  readonly limiters: readonly Limiter[];
  readonly policy: string;
  /** With Redis and more than one budget: all of them taken in one round trip (below). */
  readonly takeAll?: (key: string) => Promise<Taken[]>;
}

/**
 * rate-limiter-flexible's own counting step (set NX with the window, INCRBY, PTTL, the
 * window restored if it had none), for each counter in order, stopping after the first
 * that goes over its points: what consuming them one after the other through the library
 * does, in one round trip instead of one per budget. Same keys, same values, so the
 * library still reads them (status) and counts them when a route has a single budget.
 * ARGV: the window in seconds, then the points, for each key.
 */
const TAKE_ALL = `
local out = {}
for i, key in ipairs(KEYS) do
  local window = tonumber(ARGV[2 * i - 1])
  redis.call('set', key, 0, 'EX', window, 'NX')
  local consumed = redis.call('incrby', key, 1)
  local ttl = redis.call('pttl', key)
  if ttl == -1 then
    redis.call('expire', key, window)
    ttl = 1000 * window
  end
  out[#out + 1] = consumed
  out[#out + 1] = ttl
  if consumed > tonumber(ARGV[2 * i]) then break end
end
return out
`;

type TakeAllCommand = (numKeys: number, ...args: (string | number)[]) => Promise<number[]>;

/**
 * The budgets taken in one round trip (TAKE_ALL); undefined in process or for one budget.
 * If the script fails (Redis down), the budgets are taken one by one through the library,
 * whose in-process insurance limiter answers while Redis cannot.
 */
function takeAllInRedis(redis: Redis | undefined, limiters: readonly Limiter[]): Budget['takeAll'] {
  if (redis === undefined || limiters.length < 2) return undefined;
  redis.defineCommand('netdiagTakeAll', { lua: TAKE_ALL });
  const command = (redis as unknown as { netdiagTakeAll: TakeAllCommand }).netdiagTakeAll.bind(redis);
  const args = limiters.flatMap((l) => [l.spec.seconds, l.spec.points]);
  return async (key) => {
    const keys = limiters.map((l) => l.redisKey?.(key) ?? key);
    const out = await command(keys.length, ...keys, ...args);
    const list: Taken[] = [];
    for (let i = 0; i < out.length / 2; i++)
      list.push(taken(limiters[i]!.spec, out[2 * i]!, out[2 * i + 1]!));
    return list;
  };
}

/** One request's passage through its budgets. */
export interface Verdict {
  /** The RateLimit header: one member per budget consulted. */
  items: string;
  /** The budget that refused and the seconds until a retry can succeed; absent when all granted. */
  refused?: { group: LimitGroup; retryAfter: number };
}

/**
 * Takes a point from each budget in order, stopping at the first that refuses (its point is
 * counted, the next budget's is not). In process every budget answers synchronously and so
 * does this (the hot path awaits nothing); with Redis it answers with a promise.
 */
function admit(budget: Budget, key: string): Verdict | Promise<Verdict> {
  if (budget.takeAll === undefined) return admitEach(budget.limiters, key);
  return budget.takeAll(key).then(
    (list) => {
      let verdict: Verdict = { items: '' };
      for (let i = 0; i < list.length && verdict.refused === undefined; i++) {
        verdict = step(budget.limiters[i]!, list[i]!, verdict.items);
      }
      return verdict;
    },
    () => admitEach(budget.limiters, key),
  );
}

function admitEach(
  limiters: readonly Limiter[],
  key: string,
  from = 0,
  items = '',
): Verdict | Promise<Verdict> {
  for (let i = from; i < limiters.length; i++) {
    const limiter = limiters[i]!;
    const answer = limiter.consume(key);
    if (answer instanceof Promise) {
      return answer.then((res) => {
        const verdict = step(limiter, res, items);
        return verdict.refused === undefined ? admitEach(limiters, key, i + 1, verdict.items) : verdict;
      });
    }
    const verdict = step(limiter, answer, items);
    if (verdict.refused !== undefined) return verdict;
    items = verdict.items;
  }
  return { items };
}

function step(limiter: Limiter, res: Taken, items: string): Verdict {
  const member = itemOf(limiter.group, res);
  const list = items === '' ? member : `${items}, ${member}`;
  if (res.granted) return { items: list };
  return {
    items: list,
    refused: { group: limiter.group, retryAfter: Math.max(1, Math.ceil(res.msBeforeNext / 1000)) },
  };
}

/** The per-client budgets, as the rate-limit check (plugins/request-checks.ts) and /mcp use them. */
export class RequestLimits {
  readonly general: Limiter;
  readonly expensive: Limiter;
  readonly cheap: Budget;
  readonly costly: Budget;

  constructor(opts: RateLimitOptions) {
    this.general = makeLimiter('general', opts.general, opts.redis);
    this.expensive = makeLimiter('expensive', opts.expensive, opts.redis);
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
    this.cheap = { limiters: [this.general], policy: policyOf([this.general]) };
    this.costly = {
      limiters: [this.general, this.expensive],
      policy: policyOf([this.general, this.expensive]),
      takeAll: takeAllInRedis(opts.redis, [this.general, this.expensive]),
    };
  }

  /** The budgets a request to this route counts against; undefined outside /api. */
  budgetFor(route: RouteFacts): Budget | undefined {
    if (!route.path.startsWith('/api/')) return undefined;
    return route.expensive ? this.costly : this.cheap;
  }

  /** Counts one request from this (canonical) address against a budget. */
  admit(budget: Budget, ip: string): Verdict | Promise<Verdict> {
    return admit(budget, rateLimitKey(ip));
  }

  /** The caller's state in every tier, read without consuming a point. */
  async peek(ip: string): Promise<Record<LimitGroup, LimitState>> {
    const key = rateLimitKey(ip);
    const [g, e] = await Promise.all([this.general.get(key), this.expensive.get(key)]);
    return { general: stateOf(this.general.spec, g), expensive: stateOf(this.expensive.spec, e) };
  }
}

async function rateLimitPlugin(
  app: FastifyInstance,
  opts: { limits: RequestLimits; onReject?: (group: LimitGroup) => void },
): Promise<void> {
  const { limits } = opts;
  const expensivePaths = new Set<string>();
  app.addHook('onRoute', (route) => {
    if (route.config?.expensive) expensivePaths.add(route.url);
  });

  /** The verdict's RateLimit header written; the 429 when a budget refused. */
  const charged = (reply: FastifyReply, verdict: Verdict): void => {
    reply.header('ratelimit', verdict.items);
    if (verdict.refused === undefined) return;
    opts.onReject?.(verdict.refused.group);
    throw tooManyRequests(verdict.refused.retryAfter, verdict.refused.group);
  };

  app.decorate('rateLimits', {
    tiers: (): LimitTier[] => [
      { name: 'general', limit: limits.general.spec.points, window_seconds: limits.general.spec.seconds },
      {
        name: 'expensive',
        limit: limits.expensive.spec.points,
        window_seconds: limits.expensive.spec.seconds,
        endpoints: [...expensivePaths].sort(),
      },
    ],
    peek: (ip) => limits.peek(ip),
    charge: (request, reply) => {
      reply.header('ratelimit-policy', limits.cheap.policy);
      const verdict = limits.admit(limits.cheap, clientIp(request));
      if (verdict instanceof Promise) return verdict.then((v) => charged(reply, v));
      charged(reply, verdict);
    },
  } satisfies RateLimitView);
}

export default fp(rateLimitPlugin, { name: 'rate-limit' });
