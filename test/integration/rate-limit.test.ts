import { afterAll, beforeAll, describe, expect, it, onTestFinished, vi } from 'vitest';
import { clientIp } from '../../src/plugins/client-address.js';
import { type RedisProcess, redisBinary, startRedis } from '../fakes/redis.js';
import { buildTestApp } from '../helper.js';
import { ProbeProvider, probeRoutes } from '../probe-routes.js';

const from = (ip: string, extra: Record<string, string> = {}) => ({ remoteAddress: ip, headers: extra });

async function hit(
  app: Awaited<ReturnType<typeof buildTestApp>>,
  url: string,
  ip: string,
  headers: Record<string, string> = {},
) {
  return app.inject({ url, ...from(ip, headers) });
}

describe('rate limits (in-process)', () => {
  it('answers the 31st request in a window with 429, integer Retry-After ≥ 1 and JSON', async () => {
    const app = await buildTestApp({ extend: probeRoutes([new ProbeProvider('p')]) });
    for (let i = 1; i <= 30; i++) {
      const res = await hit(app, '/api/probe?target=x', '198.51.100.7');
      expect(res.statusCode).toBe(200);
    }
    const res = await hit(app, '/api/probe?target=x', '198.51.100.7');
    expect(res.statusCode).toBe(429);
    expect(res.json()).toMatchObject({ error: expect.any(String), code: 'rate_limited' });
    const retryAfter = res.headers['retry-after'];
    expect(retryAfter).toMatch(/^\d+$/);
    expect(Number(retryAfter)).toBeGreaterThanOrEqual(1);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.headers['ratelimit-policy']).toBe('"general";q=30;w=60');
    expect(res.headers.ratelimit).toMatch(/^"general";r=0;t=\d+$/);
    // Another address has its own budget.
    expect((await hit(app, '/api/probe?target=x', '198.51.100.8')).statusCode).toBe(200);
  });

  // Windows on a controllable clock (the app's, Date.now by default), never by waiting a minute.
  it('opens a fresh budget once the window has passed, and says how long until then', async () => {
    const T0 = Date.parse('2026-11-24T12:00:00Z');
    vi.useFakeTimers({ toFake: ['Date'], now: T0 });
    onTestFinished(() => {
      vi.useRealTimers();
    });
    const app = await buildTestApp({ extend: probeRoutes([new ProbeProvider('p')]) });
    for (let i = 0; i < 30; i++) {
      expect((await hit(app, '/api/probe?target=x', '198.51.100.70')).statusCode).toBe(200);
    }
    expect((await hit(app, '/api/probe?target=x', '198.51.100.70')).headers['retry-after']).toBe('60');
    vi.setSystemTime(T0 + 45_000);
    const later = await hit(app, '/api/probe?target=x', '198.51.100.70');
    expect(later.statusCode).toBe(429);
    expect(later.headers['retry-after']).toBe('15');
    vi.setSystemTime(T0 + 60_001);
    const fresh = await hit(app, '/api/probe?target=x', '198.51.100.70');
    expect(fresh.statusCode).toBe(200);
    expect(fresh.headers.ratelimit).toBe('"general";r=29;t=60');

    // The expensive window likewise.
    for (let i = 0; i < 6; i++) await hit(app, '/api/probe/expensive', '198.51.100.71');
    expect((await hit(app, '/api/probe/expensive', '198.51.100.71')).statusCode).toBe(429);
    vi.setSystemTime(T0 + 120_002);
    expect((await hit(app, '/api/probe/expensive', '198.51.100.71')).statusCode).toBe(200);
  });

  it('carries the IETF RateLimit headers on every limited response', async () => {
    const app = await buildTestApp({ extend: probeRoutes([new ProbeProvider('p')]) });
    const res = await hit(app, '/api/probe?target=x', '198.51.100.9');
    expect(res.headers['ratelimit-policy']).toBe('"general";q=30;w=60');
    expect(res.headers.ratelimit).toBe('"general";r=29;t=60');
    // Outside /api nothing is limited.
    expect((await app.inject('/healthz')).headers.ratelimit).toBeUndefined();
  });

  it('answers the 7th expensive request with 429 while cheap requests still pass', async () => {
    const app = await buildTestApp({ extend: probeRoutes([new ProbeProvider('p')]) });
    for (let i = 1; i <= 6; i++)
      expect((await hit(app, '/api/probe/expensive', '203.0.113.5')).statusCode).toBe(200);
    const seventh = await hit(app, '/api/probe/expensive', '203.0.113.5');
    expect(seventh.statusCode).toBe(429);
    expect(seventh.json().error).toMatch(/expensive/);
    expect(seventh.headers['ratelimit-policy']).toBe('"general";q=30;w=60, "expensive";q=6;w=60');
    expect((await hit(app, '/api/probe?target=x', '203.0.113.5')).statusCode).toBe(200);
  });

  it('counts a request answered from cache toward the general limit', async () => {
    const provider = new ProbeProvider('p');
    const app = await buildTestApp({ extend: probeRoutes([provider]) });
    for (let i = 0; i < 30; i++) await hit(app, '/api/probe/cached?q=same', '192.0.2.77');
    expect(provider.calls).toBe(1);
    expect((await hit(app, '/api/probe/cached?q=same', '192.0.2.77')).statusCode).toBe(429);
  });

  it('gives all addresses of one IPv6 /64 one budget, and another /64 its own', async () => {
    const app = await buildTestApp({ extend: probeRoutes([new ProbeProvider('p')]) });
    for (let i = 0; i < 30; i++) {
      expect(
        (await hit(app, '/api/probe?target=x', `2001:db8:1:2::${(i + 1).toString(16)}`)).statusCode,
      ).toBe(200);
    }
    expect((await hit(app, '/api/probe?target=x', '2001:db8:1:2:ffff::1')).statusCode).toBe(429);
    expect((await hit(app, '/api/probe?target=x', '2001:db8:1:3::1')).statusCode).toBe(200);
  });

  it('treats ::ffff:a.b.c.d and a.b.c.d as one client', async () => {
    const app = await buildTestApp({ extend: probeRoutes([new ProbeProvider('p')]) });
    for (let i = 0; i < 15; i++) await hit(app, '/api/probe?target=x', '192.0.2.10');
    for (let i = 0; i < 15; i++) await hit(app, '/api/probe?target=x', '::ffff:192.0.2.10');
    expect((await hit(app, '/api/probe?target=x', '192.0.2.10')).statusCode).toBe(429);
  });

  it('ignores X-Forwarded-For from an untrusted peer', async () => {
    const app = await buildTestApp({ extend: probeRoutes([new ProbeProvider('p')]) });
    for (let i = 0; i < 30; i++) {
      await hit(app, '/api/probe?target=x', '192.0.2.20', { 'x-forwarded-for': `198.51.100.${i}` });
    }
    const res = await hit(app, '/api/probe?target=x', '192.0.2.20', { 'x-forwarded-for': '198.51.100.200' });
    expect(res.statusCode).toBe(429);
  });

  it('believes X-Forwarded-For only from a trusted proxy CIDR', async () => {
    const app = await buildTestApp({
      config: { trustProxy: ['10.0.0.0/8'] },
      extend: async (a) => {
        await probeRoutes([new ProbeProvider('p')])(a);
        a.get('/api/whoami', async (req) => ({ ip: req.ip }));
      },
    });
    const viaProxy = await hit(app, '/api/whoami', '10.1.2.3', { 'x-forwarded-for': '203.0.113.50' });
    expect(viaProxy.json().ip).toBe('203.0.113.50');
    const direct = await hit(app, '/api/whoami', '192.0.2.30', { 'x-forwarded-for': '203.0.113.50' });
    expect(direct.json().ip).toBe('192.0.2.30');
    // A client spoofing a longer chain through the trusted proxy only gets the hop the proxy saw.
    const spoof = await hit(app, '/api/whoami', '10.1.2.3', { 'x-forwarded-for': '1.2.3.4, 203.0.113.51' });
    expect(spoof.json().ip).toBe('203.0.113.51');
  });

  // Issue 16: `X-Forwarded-For: 203.0.113.13:40001` (a port, as some proxies append) and other
  // spellings of one address each got a fresh budget, so a client could bypass the limits at will.
  it('counts every spelling of one forwarded address against one budget', async () => {
    const app = await buildTestApp({
      config: { trustProxy: ['10.0.0.0/8'] },
      extend: probeRoutes([new ProbeProvider('p')]),
    });
    const spellings = ['203.0.113.13', '203.0.113.13:40001', '[::ffff:203.0.113.13]:443', '::ffff:cb00:710d'];
    for (let i = 0; i < 30; i++) {
      // A new source port on every request, as a proxy appending the client's port would send.
      const xff = i % 2 === 0 ? `203.0.113.13:${40_000 + i}` : spellings[i % spellings.length]!;
      expect((await hit(app, '/api/probe?target=x', '10.1.2.3', { 'x-forwarded-for': xff })).statusCode).toBe(
        200,
      );
    }
    for (const spelling of spellings) {
      const res = await hit(app, '/api/probe?target=x', '10.1.2.3', { 'x-forwarded-for': spelling });
      expect(res.statusCode, spelling).toBe(429);
    }
    // IPv6 in brackets, with and without a port, is the same /64 as the bare address.
    for (let i = 0; i < 30; i++) {
      const v6 = [`[2001:db8:7::${i + 1}]:${1000 + i}`, `[2001:db8:7::${i + 1}]`, `2001:DB8:7:0::${i + 1}`][
        i % 3
      ]!;
      expect((await hit(app, '/api/probe?target=x', '10.1.2.3', { 'x-forwarded-for': v6 })).statusCode).toBe(
        200,
      );
    }
    expect(
      (await hit(app, '/api/probe?target=x', '10.1.2.3', { 'x-forwarded-for': '2001:db8:7::ffff' }))
        .statusCode,
    ).toBe(429);
  });

  it('counts an unparsable forwarded address against the socket peer, never as a key of its own', async () => {
    const app = await buildTestApp({
      config: { trustProxy: ['10.0.0.0/8'] },
      extend: async (a) => {
        await probeRoutes([new ProbeProvider('p')])(a);
        a.get('/api/whoami', async (req) => ({ ip: clientIp(req) }));
      },
    });
    const junk = ['011.110.009.009', '1.2.3.4.', 'unknown', '[2001:db8::1', '1.2.3.4:99999', '_hidden'];
    for (const value of junk) {
      const res = await hit(app, '/api/whoami', '10.9.9.9', { 'x-forwarded-for': value });
      expect(res.json().ip, value).toBe('10.9.9.9');
    }
    for (let i = 0; i < 30 - junk.length; i++) {
      await hit(app, '/api/probe?target=x', '10.9.9.9', { 'x-forwarded-for': junk[i % junk.length]! });
    }
    const res = await hit(app, '/api/probe?target=x', '10.9.9.9', { 'x-forwarded-for': '0x7f.1' });
    expect(res.statusCode).toBe(429);
  });

  it('believes one hop of X-Forwarded-For with TRUST_PROXY=1', async () => {
    const app = await buildTestApp({
      config: { trustProxy: 1 },
      extend: (a) => {
        a.get('/api/whoami', async (req) => ({ ip: req.ip }));
      },
    });
    const res = await hit(app, '/api/whoami', '10.1.2.3', { 'x-forwarded-for': '1.2.3.4, 203.0.113.60' });
    expect(res.json().ip).toBe('203.0.113.60');
  });
});

describe.skipIf(!redisBinary)('rate limits on Redis', () => {
  let redis: RedisProcess;
  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(async () => {
    await redis?.stop();
  });

  it('shares one budget between two app instances', async () => {
    const config = { redisUrl: redis.url, sessionSecret: 'x'.repeat(32) };
    const a = await buildTestApp({ config, extend: probeRoutes([new ProbeProvider('p')]) });
    const b = await buildTestApp({ config, extend: probeRoutes([new ProbeProvider('p')]) });
    await waitReady(a);
    await waitReady(b);
    for (let i = 0; i < 15; i++)
      expect((await hit(a, '/api/probe?target=x', '198.18.0.1')).statusCode).toBe(200);
    for (let i = 0; i < 15; i++)
      expect((await hit(b, '/api/probe?target=x', '198.18.0.1')).statusCode).toBe(200);
    expect((await hit(a, '/api/probe?target=x', '198.18.0.1')).statusCode).toBe(429);
    expect((await hit(b, '/api/probe?target=x', '198.18.0.1')).statusCode).toBe(429);
  });

  it("takes an expensive route's two budgets in order in one round trip, stopping at the first that refuses", async () => {
    const config = {
      redisUrl: redis.url,
      sessionSecret: 'x'.repeat(32),
      rateLimitGeneral: { points: 5, seconds: 60 },
      rateLimitExpensive: { points: 2, seconds: 60 },
    };
    const app = await buildTestApp({ config, extend: probeRoutes([new ProbeProvider('p')]) });
    await waitReady(app);
    const ratelimit = async (path: string, ip: string) => {
      const res = await hit(app, path, ip);
      return [res.statusCode, res.headers.ratelimit];
    };
    // The expensive budget refuses the third: counted in both, the general one once.
    expect(await ratelimit('/api/probe/expensive', '198.18.0.9')).toEqual([
      200,
      '"general";r=4;t=60, "expensive";r=1;t=60',
    ]);
    expect(await ratelimit('/api/probe/expensive', '198.18.0.9')).toEqual([
      200,
      '"general";r=3;t=60, "expensive";r=0;t=60',
    ]);
    expect(await ratelimit('/api/probe/expensive', '198.18.0.9')).toEqual([
      429,
      '"general";r=2;t=60, "expensive";r=0;t=60',
    ]);
    expect(await ratelimit('/api/probe?target=x', '198.18.0.9')).toEqual([200, '"general";r=1;t=60']);
    expect(await ratelimit('/api/probe?target=x', '198.18.0.9')).toEqual([200, '"general";r=0;t=60']);
    // The general budget refuses first: the expensive one is not asked, so not counted.
    expect(await ratelimit('/api/probe/expensive', '198.18.0.9')).toEqual([429, '"general";r=0;t=60']);
    const client = app.ctx.redis!;
    expect(await client.get('netdiag:rl:general:198.18.0.9')).toBe('6');
    expect(await client.get('netdiag:rl:expensive:198.18.0.9')).toBe('3');
    // Status reads the same counters.
    const peek = await app.rateLimits.peek('198.18.0.9');
    expect(peek.general).toMatchObject({ limit: 5, remaining: 0 });
    expect(peek.expensive).toMatchObject({ limit: 2, remaining: 0 });
  });

  it('keeps serving (what this process holds, otherwise a miss; in-process limits) when Redis dies mid-test', async () => {
    const own = await startRedis();
    const provider = new ProbeProvider('p');
    const app = await buildTestApp({
      config: { redisUrl: own.url, sessionSecret: 'x'.repeat(32) },
      extend: probeRoutes([provider]),
    });
    await waitReady(app);
    expect((await hit(app, '/api/probe/cached?q=a', '198.18.0.2')).headers['x-service-cache']).toBe('MISS');
    expect((await hit(app, '/api/probe/cached?q=a', '198.18.0.2')).headers['x-service-cache']).toBe('HIT');
    expect((await app.inject('/readyz')).statusCode).toBe(200);

    await own.kill();
    // An answer this process served lately is still served from its own tier (cache/tiered.ts) …
    const held = await hit(app, '/api/probe/cached?q=a', '198.18.0.2');
    expect(held.statusCode).toBe(200);
    expect(held.headers['x-service-cache']).toBe('HIT');
    expect(provider.calls).toBe(1);
    // … anything else reads Redis, fails, and is a miss answered by the provider.
    const during = await hit(app, '/api/probe/cached?q=b', '198.18.0.2');
    expect(during.statusCode).toBe(200);
    expect(during.headers['x-service-cache']).toBe('MISS');
    expect(provider.calls).toBe(2);
    expect((await app.inject('/readyz')).statusCode).toBe(503);
    // The insurance limiter still enforces a budget.
    let last = 0;
    for (let i = 0; i < 31; i++) last = (await hit(app, '/api/probe?target=x', '198.18.0.3')).statusCode;
    expect(last).toBe(429);
    // An expensive route's budgets too, one by one when their single round trip fails.
    for (let i = 0; i < 6; i++)
      expect((await hit(app, '/api/probe/expensive', '198.18.0.4')).statusCode).toBe(200);
    expect((await hit(app, '/api/probe/expensive', '198.18.0.4')).statusCode).toBe(429);
    const metrics = await app.ctx.metrics.registry.metrics();
    expect(metrics).toMatch(/netdiag_cache_operations_total\{result="error"\} [1-9]/);
  });
});

async function waitReady(app: Awaited<ReturnType<typeof buildTestApp>>) {
  const client = app.ctx.redis;
  if (!client || client.status === 'ready') return;
  await new Promise<void>((resolve) => client.once('ready', () => resolve()));
}
