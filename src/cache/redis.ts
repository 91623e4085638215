import { createRequire } from 'node:module';
import type { Redis } from 'ioredis';
import type { Cache, CacheEntry, CacheEvents, Clock } from './types.js';

/**
 * One Redis connection per process, shared by the cache, the rate limiter and
 * the challenge replay set. Commands fail fast while disconnected (no offline
 * queue) so a dead Redis turns into cache misses and insurance limits within
 * milliseconds instead of stalling requests; ioredis keeps reconnecting.
 */
export function createRedisClient(url: string): Redis {
  // Required here, not imported: a process without REDIS_URL (most `netdiag` commands) never loads it.
  const ioredis = createRequire(import.meta.url)('ioredis') as typeof import('ioredis');
  return new ioredis.Redis(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    commandTimeout: 1000,
    connectTimeout: 2000,
    lazyConnect: false,
    retryStrategy: (times) => Math.min(times * 200, 2000),
  });
}

const PREFIX = 'netdiag:cache:';

interface Stored {
  v: unknown;
  e: number;
}

export class RedisCache implements Cache {
  readonly kind = 'redis' as const;
  readonly #redis: Redis;
  readonly #events: CacheEvents;
  readonly #clock: Clock;

  constructor(redis: Redis, opts: { events?: CacheEvents; clock?: Clock } = {}) {
    this.#redis = redis;
    this.#events = opts.events ?? {};
    this.#clock = opts.clock ?? Date.now;
  }

  async get<T>(key: string): Promise<CacheEntry<T> | undefined> {
    let text: string | null;
    try {
      text = await this.#redis.get(PREFIX + key);
    } catch (err) {
      this.#events.onError?.('get', err);
      return undefined;
    }
    if (text === null) return undefined;
    try {
      const stored = JSON.parse(text) as Stored;
      // Redis expiry is authoritative; this check only matters under a fake clock.
      if (stored.e <= this.#clock()) return undefined;
      return { value: stored.v as T, expiresAt: stored.e };
    } catch (err) {
      this.#events.onError?.('decode', err);
      return undefined;
    }
  }

  async set<T>(key: string, value: T, ttlSeconds: number): Promise<void> {
    if (!(ttlSeconds > 0)) return;
    const ms = Math.round(ttlSeconds * 1000);
    const stored: Stored = { v: value, e: this.#clock() + ms };
    try {
      await this.#redis.set(PREFIX + key, JSON.stringify(stored), 'PX', ms);
    } catch (err) {
      this.#events.onError?.('set', err);
    }
  }

  async delete(key: string): Promise<void> {
    try {
      await this.#redis.del(PREFIX + key);
    } catch (err) {
      this.#events.onError?.('delete', err);
    }
  }

  async ping(): Promise<boolean> {
    try {
      return (await this.#redis.ping()) === 'PONG';
    } catch {
      return false;
    }
  }

  async close(): Promise<void> {
    // The connection is shared; its owner (the app) quits it.
  }
}
