/**
 * Cache-first loading with single-flight: concurrent identical misses share
 * one load, and a load that throws is never stored (failures are not cached).
 * The provider chain and composite lookups (email-security, subdomains) all
 * load through this one function.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { Cache, CacheEvents } from './types.js';

/**
 * Who pays for a measurement. A request may run its lookups with a payer (the expensive
 * routes do: plugins/rate-limit.ts): it is called when one of them finds nothing cached and
 * is about to measure, before anything is measured, and a payer that throws (a spent
 * budget's 429) fails that request alone. An answer read from the cache costs nothing, and
 * a request that joins a measurement already under way is not charged for it.
 */
export const measurementPayer = new AsyncLocalStorage<() => void | Promise<void>>();

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

  async load<T>(key: string, loader: () => Promise<Loaded<T>>): Promise<CachedResult<T>> {
    const measuring = this.#inflight.get(key);
    if (measuring) return measuring as Promise<CachedResult<T>>;
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
    // Another request may have started measuring while this one read the cache, or was charged.
    const started = this.#inflight.get(key);
    if (started) return started as Promise<CachedResult<T>>;
    const pay = measurementPayer.getStore();
    if (pay !== undefined) {
      await pay();
      const meanwhile = this.#inflight.get(key);
      if (meanwhile) return meanwhile as Promise<CachedResult<T>>;
    }
    const run = this.#measure(key, loader).finally(() => this.#inflight.delete(key));
    this.#inflight.set(key, run);
    return run;
  }

  async #measure<T>(key: string, loader: () => Promise<Loaded<T>>): Promise<CachedResult<T>> {
    const { value, ttl } = await loader();
    const maxAge = Math.max(0, Math.floor(ttl));
    const storedAt = this.#clock();
    await this.#cache.set(key, value, maxAge);
    return { value, hit: false, maxAge, expiresAt: maxAge > 0 ? storedAt + maxAge * 1000 : 0 };
  }
}
