/**
 * Challenge protection across instances: two apps sharing Redis and
 * SESSION_SECRET accept each other's cookies and share the replay set.
 * Runs when redis-server is on PATH (see test/fakes/redis.ts).
 */
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type RedisProcess, redisBinary, startRedis } from '../fakes/redis.js';
import { getTestPki } from '../fakes/test-ca.js';
import { buildTestApp } from '../helper.js';
import { ProbeProvider, probeRoutes } from '../probe-routes.js';
import { activeConfig, type FakeSiteverify, startFakeSiteverify } from './challenge-fake-siteverify.js';

const SHARED_SECRET = 'shared-session-secret-for-every-instance';
const CLIENT = '203.0.113.77';

describe.skipIf(!redisBinary)('challenge protection on Redis', () => {
  let redis: RedisProcess;
  let ca: string;
  let siteverify: FakeSiteverify;

  beforeAll(async () => {
    ca = (await getTestPki()).caPem;
    [redis, siteverify] = await Promise.all([startRedis(), startFakeSiteverify()]);
  });
  afterAll(async () => {
    await Promise.all([redis?.stop(), siteverify?.close()]);
  });
  beforeEach(() => siteverify.reset());

  async function instance(redisUrl: string, sessionSecret = SHARED_SECRET): Promise<FastifyInstance> {
    const app = await buildTestApp({
      ca,
      config: activeConfig(siteverify, { redisUrl, sessionSecret }),
      extend: probeRoutes([new ProbeProvider('p')]),
    });
    const client = app.ctx.redis;
    if (client && client.status !== 'ready') await new Promise((r) => client.once('ready', r));
    return app;
  }

  const verify = (app: FastifyInstance, token: string) =>
    app.inject({ method: 'POST', url: '/api/challenge/verify', remoteAddress: CLIENT, payload: { token } });
  const probe = (app: FastifyInstance, cookie: string) =>
    app.inject({ url: '/api/probe?target=x', remoteAddress: CLIENT, headers: { cookie } });

  it('two instances sharing Redis and SESSION_SECRET accept each other’s cookies', async () => {
    const a = await instance(redis.url);
    const b = await instance(redis.url);
    const res = await verify(a, 'pass:shared-cookie');
    expect(res.statusCode).toBe(200);
    const cookie = String(res.headers['set-cookie']).split(';')[0] ?? '';
    expect((await probe(a, cookie)).statusCode).toBe(200);
    expect((await probe(b, cookie)).statusCode).toBe(200);
    const status = (
      await b.inject({ url: '/api/challenge/status', remoteAddress: CLIENT, headers: { cookie } })
    ).json();
    expect(status.session.valid).toBe(true);

    // An instance with another secret does not.
    const stranger = await instance(redis.url, 'a-different-secret-of-32-characters!!');
    expect((await probe(stranger, cookie)).statusCode).toBe(403);
  });

  it('shares the replay set: a token accepted by one instance is refused by the other without an upstream call', async () => {
    const a = await instance(redis.url);
    const b = await instance(redis.url);
    expect((await verify(a, 'pass:shared-replay')).statusCode).toBe(200);
    expect(siteverify.count()).toBe(1);
    const replay = await verify(b, 'pass:shared-replay');
    expect(replay.statusCode).toBe(403);
    expect(replay.json().code).toBe('challenge_failed');
    expect(siteverify.count()).toBe(1);
  });

  it('still refuses a replay when Redis is down: the verify endpoint enforces single use', async () => {
    const own = await startRedis();
    try {
      const app = await instance(own.url);
      const other = await instance(own.url);
      expect((await verify(app, 'pass:redis-down')).statusCode).toBe(200);
      await own.kill();
      // The instance that spent the token still knows it (its own cache tier): refused without asking.
      const local = await verify(app, 'pass:redis-down');
      expect(local.statusCode).toBe(403);
      expect(siteverify.count()).toBe(1);
      // Another instance's replay set reads as a miss, so upstream is asked; it answers timeout-or-duplicate.
      const replay = await verify(other, 'pass:redis-down');
      expect(replay.statusCode).toBe(403);
      expect(replay.json().error).toMatch(/timeout-or-duplicate/);
      expect(siteverify.count()).toBe(2);
      // Sessions need no shared state: a fresh token still opens one.
      expect((await verify(app, 'pass:redis-down-fresh')).statusCode).toBe(200);
    } finally {
      await own.stop();
    }
  });
});
