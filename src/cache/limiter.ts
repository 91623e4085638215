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

/** What one request's point did to a budget. */
export interface WindowState {
  /** Points taken in the current window, this one included. */
  consumed: number;
  /** Milliseconds until the window closes and the budget is whole again. */
  msBeforeNext: number;
}

/**
 * The in-process budget on the request hot path: a fixed window per key with exactly
 * RateLimiterMemory's semantics (the first point opens a window of `duration` seconds;
 * every point, refused ones included, counts in it; it closes `duration` after it opened),
 * answered synchronously. rate-limiter-flexible answers even an in-memory consume with a
 * promise, and the hook awaiting it costs a microtask round trip per request
 * (bench/hot-path.ts); it stays the Redis path and that path's insurance.
 *
 * Expired windows are dropped as new points arrive, oldest first: a window that is renewed
 * moves to the end of the map, so the map stays in closing order and no timer is needed.
 */
export class FixedWindowCounter {
  readonly #durationMs: number;
  readonly #windows = new Map<string, { consumed: number; closesAt: number }>();

  constructor(durationSeconds: number) {
    this.#durationMs = durationSeconds * 1000;
  }

  consume(key: string, now = Date.now()): WindowState {
    this.#sweep(now);
    const window = this.#windows.get(key);
    if (window !== undefined && window.closesAt > now) {
      window.consumed += 1;
      return { consumed: window.consumed, msBeforeNext: window.closesAt - now };
    }
    this.#windows.delete(key);
    this.#windows.set(key, { consumed: 1, closesAt: now + this.#durationMs });
    return { consumed: 1, msBeforeNext: this.#durationMs };
  }

  /** The open window of a key, without taking a point; undefined when none is open. */
  peek(key: string, now = Date.now()): WindowState | undefined {
    const window = this.#windows.get(key);
    if (window === undefined || window.closesAt <= now) return undefined;
    return { consumed: window.consumed, msBeforeNext: window.closesAt - now };
  }

  /** Open windows (tests, metrics). */
  get size(): number {
    return this.#windows.size;
  }

  #sweep(now: number): void {
    for (const [key, window] of this.#windows) {
      if (window.closesAt > now) return;
      this.#windows.delete(key);
    }
  }
}
