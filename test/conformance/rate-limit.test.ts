/**
 * One suite, every rate-limit store (rate-limit/store.ts), as test/conformance/cache.test.ts
 * is for the caches: in process always, Redis when redis-server is available (always in
 * CI). In process the clock is the suite's; Redis closes a window with its own expiry, so
 * the one test about closing waits out a short window there (generous margins, no tight
 * timing), and every other test uses windows that cannot close while it runs.
 */
import { describe, expect, it, vi } from 'vitest';
import { MemoryStore } from '../../src/rate-limit/memory-store.js';
import { REDIS_KEY_PREFIX, RedisStore, redisKey } from '../../src/rate-limit/redis-store.js';
import {
  type Counter,
  createRateLimitStore,
  granted,
  type RateLimitStore,
} from '../../src/rate-limit/store.js';
import { redisBinary, startRedis } from '../fakes/redis.js';
import { redisSuite } from './redis-suite.js';

interface Made {
  store: RateLimitStore;
  /** Lets this much time pass for the store. */
  advance(ms: number): Promise<void>;
}

interface Backend {
  name: string;
  make(): Promise<Made>;
  /** The closing test's window, and how long before its end a point surely still falls in it. */
  closing: { seconds: number; marginMs: number };
}

const redisServer = redisSuite();

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const T0 = Date.parse('2026-11-24T12:00:00Z');

const backends: Backend[] = [
  {
    name: 'memory',
    make: async () => {
      let now = T0;
      return {
        store: createRateLimitStore({ clock: () => now }),
        advance: async (ms) => {
          now += ms;
        },
      };
    },
    closing: { seconds: 60, marginMs: 1 },
  },
  {
    name: 'redis',
    make: async () => ({ store: createRateLimitStore({ redis: await redisServer.fresh() }), advance: sleep }),
    closing: { seconds: 1.5, marginMs: 1000 },
  },
];

const counter = (name: string, points: number, seconds = 60): Counter => ({ name, points, seconds });

for (const backend of backends) {
  describe.skipIf(backend.name === 'redis' && !redisBinary)(
    `RateLimitStore conformance: ${backend.name}`,
    () => {
      it('opens a window with the first point and closes it `seconds` after, not before', async () => {
        const { store, advance } = await backend.make();
        const { seconds, marginMs } = backend.closing;
        const c = counter('closing', 5, seconds);
        const windowMs = seconds * 1000;
        expect(await store.take([c], 'k')).toEqual([{ consumed: 1, msBeforeNext: windowMs }]);
        await advance(windowMs - marginMs);
        const [inside] = await store.take([c], 'k');
        expect(inside?.consumed).toBe(2);
        expect(inside?.msBeforeNext).toBeGreaterThan(0);
        expect(inside?.msBeforeNext).toBeLessThanOrEqual(marginMs);
        await advance(marginMs);
        expect(await store.take([c], 'k')).toEqual([{ consumed: 1, msBeforeNext: windowMs }]);
      });

      it('grants `points` in a window, then refuses, counting every refused point too', async () => {
        const { store } = await backend.make();
        const c = counter('general', 3);
        const states = [];
        for (let i = 0; i < 6; i++) states.push(...(await store.take([c], '198.51.100.7')));
        expect(states.map((s) => s.consumed)).toEqual([1, 2, 3, 4, 5, 6]);
        expect(states.map((s) => granted(c, s))).toEqual([true, true, true, false, false, false]);
        for (const s of states) expect(s.msBeforeNext).toBeGreaterThan(0);
        for (const s of states) expect(s.msBeforeNext).toBeLessThanOrEqual(60_000);
      });

      it('takes several counters in order in one call, stopping after the first that refuses', async () => {
        const { store } = await backend.make();
        const general = counter('general', 4);
        const expensive = counter('expensive', 2);
        const consumed = async (counters: Counter[]) =>
          (await store.take(counters, 'k')).map((s) => s.consumed);
        expect(await consumed([general, expensive])).toEqual([1, 1]);
        expect(await consumed([general, expensive])).toEqual([2, 2]);
        // The second refuses: both counted.
        expect(await consumed([general, expensive])).toEqual([3, 3]);
        expect(await consumed([general])).toEqual([4]);
        // The first refuses: the second is neither counted nor answered.
        expect(await consumed([general, expensive])).toEqual([5]);
        expect((await store.peek([general, expensive], 'k')).map((s) => s?.consumed)).toEqual([5, 3]);
      });

      it('peeks without taking a point', async () => {
        const { store } = await backend.make();
        const general = counter('general', 3);
        const expensive = counter('expensive', 2);
        expect(await store.peek([general, expensive], 'k')).toEqual([undefined, undefined]);
        await store.take([general], 'k');
        for (let i = 0; i < 3; i++) {
          const [g, e] = await store.peek([general, expensive], 'k');
          expect(g?.consumed).toBe(1);
          expect(g?.msBeforeNext).toBeGreaterThan(0);
          expect(e).toBeUndefined();
        }
        expect((await store.take([general], 'k'))[0]?.consumed).toBe(2);
      });

      it('keeps keys and counters apart', async () => {
        const { store } = await backend.make();
        const a = counter('a', 1);
        const b = counter('b', 1, 30);
        await store.take([a], 'k1');
        expect((await store.take([a], 'k1'))[0]?.consumed).toBe(2);
        expect(await store.take([a], 'k2')).toEqual([{ consumed: 1, msBeforeNext: 60_000 }]);
        // Another counter on the same key: its own count, its own window.
        expect(await store.take([b], 'k1')).toEqual([{ consumed: 1, msBeforeNext: 30_000 }]);
        expect((await store.peek([a, b], 'k1')).map((s) => s?.consumed)).toEqual([2, 1]);
      });
    },
  );
}

describe.skipIf(!redisBinary)('RedisStore', () => {
  it('keeps a window as `netdiag:rl:<counter>:<key>`: the count, expiring when the window closes', async () => {
    const redis = await redisServer.fresh();
    const store = createRateLimitStore({ redis });
    const c = counter('general', 30);
    expect(REDIS_KEY_PREFIX).toBe('netdiag:rl:');
    expect(redisKey(c, '2001:db8:1:2::/64')).toBe('netdiag:rl:general:2001:db8:1:2::/64');
    for (let i = 0; i < 3; i++) await store.take([c], '2001:db8:1:2::/64');
    expect(await redis.get('netdiag:rl:general:2001:db8:1:2::/64')).toBe('3');
    const ttl = await redis.pttl('netdiag:rl:general:2001:db8:1:2::/64');
    expect(ttl).toBeGreaterThan(50_000);
    expect(ttl).toBeLessThanOrEqual(60_000);
  });

  it('takes any number of counters in one Redis command', async () => {
    const redis = await redisServer.fresh();
    const store = createRateLimitStore({ redis });
    const counters = [counter('general', 30), counter('expensive', 6), counter('third', 9)];
    // The first take may add one EVAL, while Redis learns the script.
    await store.take(counters, 'warm');
    const sent = vi.spyOn(redis, 'sendCommand');
    try {
      for (const n of [1, 2, 3]) {
        sent.mockClear();
        await store.take(counters.slice(0, n), '198.51.100.7');
        expect(sent.mock.calls.map(([command]) => command.name)).toEqual(['evalsha']);
      }
    } finally {
      sent.mockRestore();
    }
  });

  it('shares one budget between stores on one Redis (every instance)', async () => {
    const redis = await redisServer.fresh();
    const other = await redisServer.client();
    const [a, b] = [createRateLimitStore({ redis }), createRateLimitStore({ redis: other })];
    const c = counter('general', 3);
    await a.take([c], 'k');
    await b.take([c], 'k');
    expect((await a.take([c], 'k'))[0]?.consumed).toBe(3);
    expect(granted(c, (await b.take([c], 'k'))[0]!)).toBe(false);
  });

  it('counts in process while Redis is down (reported), with the same rules, and in Redis again once it is back', async () => {
    const server = await startRedis();
    try {
      const redis = await redisServer.client(server.url);
      let now = T0;
      const errors: unknown[] = [];
      const store = new RedisStore(redis, {
        insurance: new MemoryStore(() => now),
        onError: (e) => errors.push(e),
      });
      const general = counter('general', 2);
      const expensive = counter('expensive', 1);
      expect((await store.take([general], 'k'))[0]?.consumed).toBe(1);

      await server.kill();
      // The insurance's own windows: Redis's point is not known here.
      const during = [];
      for (let i = 0; i < 3; i++)
        during.push((await store.take([general, expensive], 'k')).map((s) => s.consumed));
      expect(during).toEqual([[1, 1], [2, 2], [3]]);
      expect((await store.peek([general, expensive], 'k')).map((s) => s?.consumed)).toEqual([3, 2]);
      expect(errors.length).toBeGreaterThanOrEqual(4);
      now += 60_000;
      expect((await store.take([general], 'k'))[0]?.consumed).toBe(1);

      await server.restart();
      if (redis.status !== 'ready')
        await new Promise<void>((resolve) => redis.once('ready', () => resolve()));
      const reported = errors.length;
      // A restarted Redis holds nothing: a fresh window, counted there.
      expect((await store.take([general], 'k'))[0]?.consumed).toBe(1);
      expect(await redis.get('netdiag:rl:general:k')).toBe('1');
      expect(errors.length).toBe(reported);
    } finally {
      await server.stop();
    }
  });
});
