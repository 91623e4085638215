/**
 * One suite, every cache backend (STYLE habit 5): memory always, Redis when
 * redis-server is available (always in CI).
 */
import { describe, expect, it } from 'vitest';
import { CachedLoader } from '../../src/cache/cached.js';
import { MemoryCache } from '../../src/cache/memory.js';
import { RedisCache } from '../../src/cache/redis.js';
import { TieredCache } from '../../src/cache/tiered.js';
import type { Cache } from '../../src/cache/types.js';
import { redisBinary, startRedis } from '../fakes/redis.js';
import { redisSuite } from './redis-suite.js';

interface Backend {
  name: string;
  make(clock: () => number): Promise<Cache>;
}

const redisServer = redisSuite();

const backends: Backend[] = [
  { name: 'memory', make: async (clock) => new MemoryCache({ clock }) },
  { name: 'redis', make: async (clock) => new RedisCache(await redisServer.fresh(), { clock }) },
  // What the app builds with REDIS_URL: the in-process tier in front of Redis.
  {
    name: 'redis (tiered)',
    make: async (clock) => new TieredCache(new RedisCache(await redisServer.fresh(), { clock }), { clock }),
  },
];

for (const backend of backends) {
  describe.skipIf(backend.name.startsWith('redis') && !redisBinary)(
    `Cache conformance: ${backend.name}`,
    () => {
      let now = 1_700_000_000_000;
      const clock = () => now;

      it('returns what was stored, with its expiry', async () => {
        const cache = await backend.make(clock);
        await cache.set('k1', { a: 1, list: ['x'] }, 60);
        const entry = await cache.get<{ a: number; list: string[] }>('k1');
        expect(entry?.value).toEqual({ a: 1, list: ['x'] });
        expect(entry?.expiresAt).toBe(now + 60_000);
      });

      it('misses an unknown key', async () => {
        const cache = await backend.make(clock);
        expect(await cache.get('absent')).toBeUndefined();
      });

      it('forgets an entry once its lifetime has passed', async () => {
        const cache = await backend.make(clock);
        await cache.set('k2', 'v', 10);
        now += 10_001;
        expect(await cache.get('k2')).toBeUndefined();
      });

      it('stores nothing for a lifetime of 0', async () => {
        const cache = await backend.make(clock);
        await cache.set('k3', 'v', 0);
        expect(await cache.get('k3')).toBeUndefined();
      });

      it('deletes', async () => {
        const cache = await backend.make(clock);
        await cache.set('k4', 'v', 60);
        await cache.delete('k4');
        expect(await cache.get('k4')).toBeUndefined();
      });

      it('answers ping', async () => {
        const cache = await backend.make(clock);
        expect(await cache.ping()).toBe(true);
      });

      it('is not altered when the caller mutates what it stored', async () => {
        const cache = await backend.make(clock);
        const value = { n: 1 };
        await cache.set('k5', value, 60);
        value.n = 2;
        expect((await cache.get<{ n: number }>('k5'))?.value.n).toBe(1);
      });

      it('coalesces concurrent identical misses and does not store a failed load', async () => {
        const cache = await backend.make(clock);
        const loader = new CachedLoader(cache, { clock });
        let loads = 0;
        const results = await Promise.all(
          Array.from({ length: 20 }, () =>
            loader.load('k6', async () => {
              loads++;
              await new Promise((r) => setTimeout(r, 10));
              return { value: 'v', ttl: 30 };
            }),
          ),
        );
        expect(loads).toBe(1);
        expect(results.every((r) => r.value === 'v')).toBe(true);
        expect((await loader.load('k6', async () => ({ value: 'other', ttl: 30 }))).hit).toBe(true);

        await expect(
          loader.load('k7', async () => Promise.reject(new Error('upstream down'))),
        ).rejects.toThrow();
        expect(await cache.get('k7')).toBeUndefined();
      });
    },
  );
}

describe('MemoryCache bounds', () => {
  it('evicts by bytes so one huge value cannot grow the process without limit', async () => {
    const cache = new MemoryCache({ maxBytes: 10_000 });
    await cache.set('big1', 'x'.repeat(6000), 60);
    await cache.set('big2', 'y'.repeat(6000), 60);
    expect(await cache.get('big1')).toBeUndefined();
    expect((await cache.get<string>('big2'))?.value.length).toBe(6000);
  });

  it('evicts by entry count', async () => {
    const cache = new MemoryCache({ maxEntries: 2 });
    await cache.set('a', 1, 60);
    await cache.set('b', 2, 60);
    await cache.set('c', 3, 60);
    expect(await cache.get('a')).toBeUndefined();
    expect((await cache.get('c'))?.value).toBe(3);
  });
});

describe.skipIf(!redisBinary)('RedisCache when Redis dies', () => {
  it('turns every operation into a miss (counted) instead of an error, and recovers', async () => {
    const server = await startRedis();
    const client = await redisServer.client(server.url);
    const errors: string[] = [];
    const cache = new RedisCache(client, { events: { onError: (op) => errors.push(op) } });
    await cache.set('k', 'v', 60);
    expect((await cache.get('k'))?.value).toBe('v');

    await server.kill();
    expect(await cache.get('k')).toBeUndefined();
    await cache.set('k2', 'v2', 60);
    expect(await cache.ping()).toBe(false);
    expect(errors).toContain('get');
    expect(errors).toContain('set');

    await server.restart();
    await new Promise<void>((resolve) =>
      client.status === 'ready' ? resolve() : client.once('ready', () => resolve()),
    );
    await cache.set('k3', 'v3', 60);
    expect((await cache.get('k3'))?.value).toBe('v3');
    client.disconnect();
    await server.stop();
  });
});
