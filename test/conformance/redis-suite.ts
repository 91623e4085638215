/**
 * The redis-server a conformance suite runs against (when one is installed): started before
 * the suite, stopped after it, with every client the suite opened disconnected. A vitest
 * helper of its own, so test/fakes/redis.ts stays free of vitest (benchmarks import it).
 */
import type { Redis } from 'ioredis';
import { afterAll, beforeAll } from 'vitest';
import { createRedisClient } from '../../src/cache/redis.js';
import { type RedisProcess, redisBinary, startRedis } from '../fakes/redis.js';

export interface RedisSuite {
  /** The suite's server; throws when none is installed (the Redis tests are skipped then). */
  readonly server: RedisProcess;
  /** A ready client of `url` (the suite's server by default), disconnected after the suite. */
  client(url?: string): Promise<Redis>;
  /** A ready client of the suite's server, its database emptied. */
  fresh(): Promise<Redis>;
}

export function redisSuite(): RedisSuite {
  let server: RedisProcess | undefined;
  const clients: Redis[] = [];
  beforeAll(async () => {
    if (redisBinary) server = await startRedis();
  });
  afterAll(async () => {
    for (const c of clients) c.disconnect();
    await server?.stop();
  });
  const suite: RedisSuite = {
    get server() {
      if (!server) throw new Error('no redis-server');
      return server;
    },
    async client(url = suite.server.url) {
      const redis = createRedisClient(url);
      redis.on('error', () => {});
      clients.push(redis);
      if (redis.status !== 'ready')
        await new Promise<void>((resolve) => redis.once('ready', () => resolve()));
      return redis;
    },
    async fresh() {
      const redis = await suite.client();
      await redis.flushdb();
      return redis;
    },
  };
  return suite;
}
