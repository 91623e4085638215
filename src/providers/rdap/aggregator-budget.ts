/**
 * What this service may ask of the RDAP aggregator. rdap.org publishes its
 * limit ("Cloudflare limits clients to a maximum of 10 requests in 10
 * seconds", about.rdap.org, "Rate Limits"; RDAP_AGGREGATOR_RATE_LIMIT): past
 * it Cloudflare answers 429 and blocks the client for the rest of its
 * mitigation period. The budget keeps the service under that limit, so a
 * lookup beyond it goes to the IANA bootstrap path at once instead of paying
 * a 429 first (the bootstrap files are what rdap.org itself tells heavy users
 * to consume).
 *
 * Counted with rate-limiter-flexible, as the per-client limits are
 * (plugins/rate-limit.ts): in process, or in Redis when REDIS_URL is set, so
 * every instance behind one egress address spends one budget, with the same
 * in-process insurance limiter when Redis fails.
 *
 * The windows are read from the app's clock (keys name them), not from the
 * library's own: the limiter only counts. Each request is counted in two
 * series of windows two periods long, the second offset by one period. Any
 * span of one period lies wholly inside a window of one series, so no such
 * span ever carries more than the limit, however requests fall around a
 * window's edge; a single fixed window would let twice the limit through
 * across its edge, which a sliding count refuses. The price: bursts up to the
 * limit, but about half of it under sustained load.
 */
import type { Redis } from 'ioredis';
import { type RateLimiterAbstract, RateLimiterRes } from 'rate-limiter-flexible';
import { sharedLimiter } from '../../cache/limiter.js';
import type { Clock } from '../../cache/types.js';
import type { RateLimitSpec } from '../../config/index.js';

export interface AggregatorBudgetOptions {
  spec: RateLimitSpec;
  clock: Clock;
  /** Shared budget across instances; undefined: this process alone. */
  redis?: Redis | undefined;
  /** Names the budget in its keys (the provider id). */
  id: string;
}

interface Window {
  key: string;
  /** When it closes, on the app's clock (ms). */
  end: number;
}

export class AggregatorBudget {
  readonly spec: RateLimitSpec;
  readonly #limiter: RateLimiterAbstract;
  readonly #clock: Clock;
  readonly #periodMs: number;

  constructor(opts: AggregatorBudgetOptions) {
    this.spec = opts.spec;
    this.#clock = opts.clock;
    this.#periodMs = opts.spec.seconds * 1000;
    // A window's record outlives the window (it is created inside it and kept two periods).
    this.#limiter = sharedLimiter({
      keyPrefix: `budget:${opts.id}`,
      points: opts.spec.points,
      duration: 2 * opts.spec.seconds,
      redis: opts.redis,
    });
  }

  /**
   * Takes one request. Resolves undefined when it is granted; otherwise with
   * the time (app clock, ms) when the full window closes and one may be
   * granted again.
   */
  async take(): Promise<number | undefined> {
    const windows = this.#windowsAt(this.#clock());
    const granted = await Promise.all(windows.map((w) => this.#consume(w.key)));
    if (granted.every(Boolean)) return undefined;
    // Nothing is sent: the point a window with room gave is handed back.
    await Promise.all(windows.filter((_, i) => granted[i]).map((w) => this.#limiter.reward(w.key, 1)));
    return Math.max(...windows.filter((_, i) => !granted[i]).map((w) => w.end));
  }

  async #consume(key: string): Promise<boolean> {
    try {
      await this.#limiter.consume(key);
      return true;
    } catch (rejection) {
      // rate-limiter-flexible rejects with a RateLimiterRes when the window is full.
      if (rejection instanceof RateLimiterRes) return false;
      throw rejection;
    }
  }

  /** The window of each series that holds `now`. */
  #windowsAt(now: number): Window[] {
    const length = 2 * this.#periodMs;
    return [0, this.#periodMs].map((offset, series) => {
      const index = Math.floor((now - offset) / length);
      return { key: `${series}:${index}`, end: index * length + offset + length };
    });
  }
}
