/**
 * The near tier in front of Redis: a popular entry costs the shared store one read per
 * process, is handed back as the same object afterwards (so its serialized body is
 * reused), and lives exactly as long as it does in the shared store.
 */
import { describe, expect, it } from 'vitest';
import { MemoryCache } from '../../../src/cache/memory.js';
import { TieredCache } from '../../../src/cache/tiered.js';
import type { Cache, CacheEntry } from '../../../src/cache/types.js';

/** A shared store that counts its reads (another instance wrote what it holds). */
function countingStore(clock: () => number): Cache & { reads: number } {
  const inner = new MemoryCache({ clock });
  const store = {
    kind: 'redis' as const,
    reads: 0,
    get: <T>(key: string): Promise<CacheEntry<T> | undefined> => {
      store.reads++;
      return inner.get<T>(key);
    },
    set: <T>(key: string, value: T, ttl: number) => inner.set(key, value, ttl),
    delete: (key: string) => inner.delete(key),
    ping: () => inner.ping(),
    close: () => inner.close(),
  };
  return store;
}

describe('TieredCache', () => {
  it('reads the shared store once per entry, then answers from the process, the same object each time', async () => {
    let now = 1_700_000_000_000;
    const clock = () => now;
    const shared = countingStore(clock);
    await shared.set('dns:example.test:A', { records: ['192.0.2.10'] }, 60);
    const cache = new TieredCache(shared, { clock });

    const first = await cache.get('dns:example.test:A');
    const second = await cache.get('dns:example.test:A');
    expect(shared.reads).toBe(1);
    expect(second?.value).toBe(first?.value);
    expect(second?.expiresAt).toBe(now + 60_000);

    // Gone from the process at the instant it is gone from the shared store.
    now += 59_999;
    expect(await cache.get('dns:example.test:A')).toBeDefined();
    now += 1;
    expect(await cache.get('dns:example.test:A')).toBeUndefined();
    expect(shared.reads).toBe(2);
  });

  it('writes through to the shared store, where other instances read it', async () => {
    const clock = () => 1_700_000_000_000;
    const shared = countingStore(clock);
    const cache = new TieredCache(shared, { clock });
    await cache.set('k', { a: 1 }, 30);
    expect((await shared.get('k'))?.value).toEqual({ a: 1 });
    const readsBefore = shared.reads;
    expect((await cache.get('k'))?.value).toEqual({ a: 1 });
    expect(shared.reads).toBe(readsBefore);
    await cache.set('never', { b: 2 }, 0);
    expect(await cache.get('never')).toBeUndefined();
  });
});
