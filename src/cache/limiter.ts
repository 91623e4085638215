/**
 * The one way a budget is counted (client rate limits, an upstream's published
 * limit): a rate-limiter-flexible limiter in Redis when REDIS_URL is set, so
 * every instance shares it, with an in-process insurance limiter that takes over
 * while Redis fails; in process otherwise.
 */
import type { Redis } from 'ioredis';
import { type RateLimiterAbstract, RateLimiterMemory, RateLimiterRedis } from 'rate-limiter-flexible';

export interface SharedLimiterOptions {
  /** Names the counters; Redis keys get a `netdiag:` prefix before it. */
  keyPrefix: string;
  points: number;
  /** Seconds a counter lives. */
  duration: number;
  redis: Redis | undefined;
}

export function sharedLimiter({
  keyPrefix,
  points,
  duration,
  redis,
}: SharedLimiterOptions): RateLimiterAbstract {
  const memory = new RateLimiterMemory({ keyPrefix, points, duration });
  return redis
    ? new RateLimiterRedis({
        storeClient: redis,
        keyPrefix: `netdiag:${keyPrefix}`,
        points,
        duration,
        insuranceLimiter: memory,
      })
    : memory;
}
