import { LRUCache } from 'lru-cache';
import { frozenCopy } from './frozen.js';
import type { Cache, CacheEntry, Clock } from './types.js';

export interface MemoryCacheOptions {
  maxEntries?: number;
  /** Upper bound on the summed JSON size of the stored values. */
  maxBytes?: number;
  clock?: Clock;
}

/**
 * In-process cache, bounded by entry count and by bytes so one huge CT history
 * cannot crowd out thousands of DNS answers. Expiry is checked against the
 * injected clock (tests move time instead of sleeping). What it stores is a
 * frozen copy of the value (cache/frozen.ts), and that copy is what every hit
 * gets: the same object each time, which no caller can change.
 */
export class MemoryCache implements Cache {
  readonly kind = 'memory' as const;
  readonly #lru: LRUCache<string, CacheEntry>;
  readonly #clock: Clock;

  constructor(opts: MemoryCacheOptions = {}) {
    this.#clock = opts.clock ?? Date.now;
    this.#lru = new LRUCache<string, CacheEntry>({
      max: opts.maxEntries ?? 50_000,
      maxSize: opts.maxBytes ?? 64 * 1024 * 1024,
      sizeCalculation: (entry, key) => key.length + (JSON.stringify(entry.value)?.length ?? 1),
    });
  }

  async get<T>(key: string): Promise<CacheEntry<T> | undefined> {
    const entry = this.#lru.get(key);
    if (entry === undefined) return undefined;
    if (entry.expiresAt <= this.#clock()) {
      this.#lru.delete(key);
      return undefined;
    }
    return entry as CacheEntry<T>;
  }

  async set<T>(key: string, value: T, ttlSeconds: number): Promise<void> {
    if (!(ttlSeconds > 0)) return;
    this.keep(key, { value: frozenCopy(value), expiresAt: this.#clock() + ttlSeconds * 1000 });
  }

  /**
   * Holds an entry that is already frozen and shared with no one (tiered.ts: a value just
   * parsed from Redis) until its own expiry, without copying it again.
   */
  keep(key: string, entry: CacheEntry): void {
    if (entry.expiresAt > this.#clock()) this.#lru.set(key, entry);
  }

  async delete(key: string): Promise<void> {
    this.#lru.delete(key);
  }

  async ping(): Promise<boolean> {
    return true;
  }

  async close(): Promise<void> {
    this.#lru.clear();
  }
}
