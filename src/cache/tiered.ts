/**
 * The cache with Redis behind it: Redis is the shared store every instance reads and
 * writes, and a small in-process tier in front keeps the entries this process served
 * lately, so a popular answer costs no Redis round trip once it is here (the rate limit's
 * is then a hit's only one). An entry is immutable until it expires and nothing is ever
 * invalidated early, so a copy held here until the same `expiresAt` answers exactly as
 * Redis would. Like the in-process cache, what a hit gets is frozen (cache/frozen.ts).
 */
import { deepFreeze } from './frozen.js';
import { MemoryCache } from './memory.js';
import type { Cache, CacheEntry, Clock } from './types.js';

/** Enough for the hot set of a busy instance; the bytes bound keeps large answers from crowding it. */
const NEAR_ENTRIES = 5_000;
const NEAR_BYTES = 16 * 1024 * 1024;

export class TieredCache implements Cache {
  readonly kind = 'redis' as const;
  readonly #near: MemoryCache;
  readonly #shared: Cache;
  readonly #clock: Clock;

  constructor(shared: Cache, opts: { clock?: Clock } = {}) {
    this.#shared = shared;
    this.#clock = opts.clock ?? Date.now;
    this.#near = new MemoryCache({ maxEntries: NEAR_ENTRIES, maxBytes: NEAR_BYTES, clock: this.#clock });
  }

  async get<T>(key: string): Promise<CacheEntry<T> | undefined> {
    const near = await this.#near.get<T>(key);
    if (near !== undefined) return near;
    const shared = await this.#shared.get<T>(key);
    if (shared === undefined) return undefined;
    // Parsed from Redis's JSON just now, so no one else holds it: frozen in place, kept until
    // the same instant Redis drops it.
    const entry = { value: deepFreeze(shared.value), expiresAt: shared.expiresAt };
    this.#near.keep(key, entry);
    return entry;
  }

  async set<T>(key: string, value: T, ttlSeconds: number): Promise<void> {
    await Promise.all([this.#near.set(key, value, ttlSeconds), this.#shared.set(key, value, ttlSeconds)]);
  }

  /** From both tiers of this process; no feature deletes (entries only expire), so no other process holds a copy it should not. */
  async delete(key: string): Promise<void> {
    await Promise.all([this.#near.delete(key), this.#shared.delete(key)]);
  }

  ping(): Promise<boolean> {
    return this.#shared.ping();
  }

  async close(): Promise<void> {
    await Promise.all([this.#near.close(), this.#shared.close()]);
  }
}
