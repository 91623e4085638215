/**
 * Cache-first loading with single-flight: concurrent identical misses share
 * one load, and a load that throws is never stored (failures are not cached).
 * The provider chain and composite lookups (email-security, subdomains) all
 * load through this one function.
 */
import type { Cache, CacheEvents } from './types.js';

export interface Loaded<T> {
  value: T;
  /** Seconds the value may be reused; 0 = do not store. */
  ttl: number;
}

/** What a lookup says about its answer's caching: where it came from and how long it stays fresh. */
export interface Freshness {
  hit: boolean;
  /** Seconds the value stays fresh from now (max-age). */
  maxAge: number;
  /**
   * Epoch milliseconds at which the cache entry holding the value expires (a hit's entry, or
   * the one a load just stored); 0 when no entry holds it. A hit's answer may be replayed
   * until then (plugins/response-cache.ts), its max-age counted down from it.
   */
  expiresAt: number;
}

export interface CachedResult<T> extends Freshness {
  value: T;
}

/** The freshness part of a result, for a lookup that reshapes the value. */
export function freshness({ hit, maxAge, expiresAt }: Freshness): Freshness {
  return { hit, maxAge, expiresAt };
}

export class CachedLoader {
  readonly #cache: Cache;
  readonly #events: CacheEvents;
  readonly #clock: () => number;
  readonly #inflight = new Map<string, Promise<CachedResult<unknown>>>();

  constructor(cache: Cache, opts: { events?: CacheEvents; clock?: () => number } = {}) {
    this.#cache = cache;
    this.#events = opts.events ?? {};
    this.#clock = opts.clock ?? Date.now;
  }

  get cache(): Cache {
    return this.#cache;
  }

  load<T>(key: string, loader: () => Promise<Loaded<T>>): Promise<CachedResult<T>> {
    const pending = this.#inflight.get(key);
    if (pending) return pending as Promise<CachedResult<T>>;
    const run = this.#run(key, loader).finally(() => this.#inflight.delete(key));
    this.#inflight.set(key, run);
    return run;
  }

  async #run<T>(key: string, loader: () => Promise<Loaded<T>>): Promise<CachedResult<T>> {
    const entry = await this.#cache.get<T>(key);
    if (entry !== undefined) {
      this.#events.onHit?.();
      return {
        value: entry.value,
        hit: true,
        maxAge: Math.max(0, Math.floor((entry.expiresAt - this.#clock()) / 1000)),
        expiresAt: entry.expiresAt,
      };
    }
    this.#events.onMiss?.();
    const { value, ttl } = await loader();
    const maxAge = Math.max(0, Math.floor(ttl));
    const storedAt = this.#clock();
    await this.#cache.set(key, value, maxAge);
    return { value, hit: false, maxAge, expiresAt: maxAge > 0 ? storedAt + maxAge * 1000 : 0 };
  }
}
