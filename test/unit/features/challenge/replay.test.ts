import { describe, expect, it } from 'vitest';
import { MemoryCache } from '../../../../src/cache/memory.js';
import type { Cache, CacheEntry } from '../../../../src/cache/types.js';
import { REPLAY_TTL_SECONDS, ReplaySet } from '../../../../src/features/challenge/replay.js';

/** Records what is stored, so a test can look at the keys. */
class SpyCache extends MemoryCache {
  readonly keys: string[] = [];
  override async set<T>(key: string, value: T, ttlSeconds: number): Promise<void> {
    this.keys.push(key);
    return super.set(key, value, ttlSeconds);
  }
}

/** A backend that is down: every read is a miss and every write is dropped, as RedisCache behaves. */
class DownCache implements Cache {
  readonly kind = 'redis' as const;
  async get<T>(): Promise<CacheEntry<T> | undefined> {
    return undefined;
  }
  async set(): Promise<void> {}
  async delete(): Promise<void> {}
  async ping(): Promise<boolean> {
    return false;
  }
  async close(): Promise<void> {}
}

describe('replay set', () => {
  it('remembers a spent token for 5 minutes, then forgets it', async () => {
    let now = Date.parse('2026-03-01T12:00:00Z');
    const replay = new ReplaySet(new MemoryCache({ clock: () => now }));
    expect(REPLAY_TTL_SECONDS).toBe(300);
    expect(await replay.isSpent('tok')).toBe(false);
    await replay.markSpent('tok');
    expect(await replay.isSpent('tok')).toBe(true);
    expect(await replay.isSpent('tok2')).toBe(false);
    now += 300_000 - 1;
    expect(await replay.isSpent('tok')).toBe(true);
    now += 1;
    expect(await replay.isSpent('tok')).toBe(false);
  });

  it('stores a hash of the token, never the token itself', async () => {
    const cache = new SpyCache();
    await new ReplaySet(cache).markSpent('live-token-value');
    expect(cache.keys).toHaveLength(1);
    expect(cache.keys[0]).toMatch(/^challenge:spent:[0-9a-f]{64}$/);
    expect(cache.keys[0]).not.toContain('live-token-value');
  });

  it('reads "not spent" when the backend is down, leaving single use to the verify endpoint', async () => {
    const replay = new ReplaySet(new DownCache());
    await replay.markSpent('tok');
    expect(await replay.isSpent('tok')).toBe(false);
  });
});
