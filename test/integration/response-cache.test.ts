/**
 * Replays of cached answers (plugins/response-cache.ts), over real sockets: a replay never
 * reaches Fastify (a hook added here counts what does), and what it sends is what Fastify
 * sent for the same hit, header for header and byte for byte, but for what differs per
 * request (request id, RateLimit, Cache-Control's max-age, Date). Everything a replay must
 * not answer goes to Fastify and is answered as before.
 */
import { request as httpRequest } from 'node:http';
import { connect, type Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { buildApp } from '../../src/app.js';
import { type Config, testConfig } from '../../src/config/index.js';
import { type FixtureUpstreams, SPF_SENDER, startFixtureUpstreams } from '../e2e/fixture-app.js';
import { type RedisProcess, redisBinary, startRedis } from '../fakes/redis.js';
import { getTestPki } from '../fakes/test-ca.js';
import { capturingLogger } from '../helper.js';
import { hasShared } from '../shared-data.js';

interface Answer {
  status: number;
  /** Header names and values in the order they were sent (lower-case names). */
  headers: [string, string][];
  body: Buffer;
  get(name: string): string | undefined;
}

function get(
  base: string,
  path: string,
  headers: Record<string, string> = {},
  method = 'GET',
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${base}${path}`, { method, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const pairs: [string, string][] = [];
        for (let i = 0; i < res.rawHeaders.length; i += 2) {
          pairs.push([res.rawHeaders[i]!.toLowerCase(), res.rawHeaders[i + 1]!]);
        }
        resolve({
          status: res.statusCode ?? 0,
          headers: pairs,
          body: Buffer.concat(chunks),
          get: (name) => pairs.find(([n]) => n === name)?.[1],
        });
      });
    });
    req.on('error', reject);
    req.end();
  });
}

/** The headers that may differ between two answers from one cache entry. */
const PER_REQUEST = new Set(['x-request-id', 'ratelimit', 'cache-control', 'date']);
const fixed = (a: Answer) => a.headers.filter(([name]) => !PER_REQUEST.has(name));
const names = (a: Answer) => a.headers.map(([name]) => name);
const remaining = (a: Answer, group = 'general') =>
  Number(new RegExp(`"${group}";r=(\\d+)`).exec(a.get('ratelimit') ?? '')?.[1]);
const maxAge = (a: Answer) => Number(/max-age=(\d+)$/.exec(a.get('cache-control') ?? '')?.[1]);

interface Harness {
  app: FastifyInstance;
  url: string;
  /** Requests Fastify answered. */
  reached(): number;
  lines(): Record<string, unknown>[];
  now: { ms: number };
}

let fx: FixtureUpstreams;
const open: Harness[] = [];

async function start(
  config: Partial<Config> = {},
  upstreams = fx,
  build: { loadSampleIntervalMs?: number } = {},
): Promise<Harness> {
  const { logger, lines } = capturingLogger();
  const now = { ms: Date.now() };
  const app = await buildApp(testConfig({ ...upstreams.config, ...config }), {
    ca: (await getTestPki()).caPem,
    logger,
    clock: () => now.ms,
    ...build,
  });
  let reached = 0;
  // Every answer Fastify gives runs onResponse, a refusal in an earlier hook's too.
  app.addHook('onResponse', (_request, _reply, done) => {
    reached++;
    done();
  });
  const url = await app.listen({ host: '127.0.0.1', port: 0 });
  const harness = { app, url, reached: () => reached, lines, now };
  open.push(harness);
  return harness;
}

beforeAll(async () => {
  fx = await startFixtureUpstreams();
}, 60_000);

afterAll(async () => {
  for (const h of open) await h.app.close();
  await fx.close();
});

describe('a cached answer asked again', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await start();
  });

  const endpoints = [
    '/api/dns?target=example.test&type=A',
    '/api/dns?target=example.test&type=mx',
    `/api/spf?ip=198.51.100.7&sender=${encodeURIComponent(SPF_SENDER)}`,
    '/api/email-security?domain=example.test',
    '/api/certificates?domain=example.com',
    '/api/subdomains?domain=example.com',
    '/api/ip-geo?ip=172.224.226.34',
  ];

  /** Asks three times: a MISS and a HIT from Fastify, then the replay, compared with the HIT. */
  async function replayed(path: string, id: string): Promise<void> {
    const miss = await get(h.url, path);
    expect(miss.status, miss.body.toString()).toBe(200);
    expect(miss.get('x-service-cache')).toBe('MISS');
    const hit = await get(h.url, path);
    expect(hit.get('x-service-cache')).toBe('HIT');
    const before = h.reached();
    const replay = await get(h.url, path, { 'x-request-id': id });
    expect(h.reached()).toBe(before);
    expect(replay.status).toBe(200);
    expect(replay.body.equals(hit.body)).toBe(true);
    // Every header, in Fastify's order, the same but for the per-request ones, which are there.
    expect(names(replay)).toEqual(names(hit));
    expect(fixed(replay)).toEqual(fixed(hit));
    expect(replay.get('x-request-id')).toBe(id);
    expect(remaining(replay)).toBe(remaining(hit) - 1);
    expect(replay.get('cache-control')).toBe(hit.get('cache-control'));
    // Its access-log line is the one Fastify writes, with the caller's address.
    const line = h.lines().find((l) => l.reqId === id);
    expect(line).toMatchObject({
      method: 'GET',
      url: path,
      statusCode: 200,
      ip: '127.0.0.1',
      msg: 'request',
    });
    expect(Object.keys(line ?? {})).toEqual(
      Object.keys(h.lines().find((l) => l.url === path && l.reqId !== id) ?? {}),
    );
  }

  it.each(endpoints)('%s: is replayed as Fastify sent it, without reaching Fastify', async (path) => {
    await replayed(path, `replay-${endpoints.indexOf(path)}`);
  });

  // Inspect's routing part reads RIPEstat's real answer (../shared): without it the answer is partial, never cached.
  it.skipIf(!hasShared)(
    'replays the answers of the lookups that connect to hosts (tls, inspect, mail-tls)',
    async (t) => {
      // Their targets listen on 127.0.0.x:443, :80 and :25, which needs root, as in CI.
      if (fx.inspectHost === undefined || fx.mailDomain === undefined) return t.skip();
      await replayed(`/api/tls?target=${fx.inspectHost}`, 'replay-tls');
      await replayed(`/api/inspect?target=${fx.inspectHost}`, 'replay-inspect');
      await replayed(`/api/mail-tls?domain=${fx.mailDomain}`, 'replay-mail-tls');
    },
    60_000,
  );

  it('gives every replay a request id of its own unless the caller names one', async () => {
    const path = '/api/dns?target=example.test&type=AAAA';
    await get(h.url, path);
    await get(h.url, path);
    const [a, b] = [await get(h.url, path), await get(h.url, path)];
    expect(a.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    expect(b.get('x-request-id')).not.toBe(a.get('x-request-id'));
    // An id that is not a plausible one is replaced, as Fastify's genReqId does.
    expect((await get(h.url, path, { 'x-request-id': 'bad id!' })).get('x-request-id')).toMatch(
      /^[0-9a-f-]{36}$/,
    );
  });

  it('counts replays in the request and cache metrics as Fastify counts hits', async () => {
    const path = '/api/dns?target=example.test&type=TXT';
    const metric = async (pattern: RegExp) => {
      const text = await h.app.ctx.metrics.registry.metrics();
      return Number(pattern.exec(text)?.[1] ?? 0);
    };
    const requests = /netdiag_http_requests_total\{route="\/api\/dns",method="GET",status="200"\} (\d+)/;
    const hits = /netdiag_cache_operations_total\{result="hit"\} (\d+)/;
    await get(h.url, path);
    await get(h.url, path);
    const [r0, h0, reached] = [await metric(requests), await metric(hits), h.reached()];
    for (let i = 0; i < 3; i++) await get(h.url, path);
    expect(h.reached()).toBe(reached);
    expect(await metric(requests)).toBe(r0 + 3);
    expect(await metric(hits)).toBe(h0 + 3);
    expect(
      await metric(/netdiag_http_request_duration_seconds_count\{route="\/api\/dns",method="GET"\} (\d+)/),
    ).toBe(r0 + 3);
  });

  it('keeps one replay per Accept-Encoding: a compressed answer is replayed compressed, byte for byte', async () => {
    const path = '/api/certificates?domain=example.com';
    for (const encoding of ['br', 'gzip', 'gzip, deflate, br']) {
      await get(h.url, path, { 'accept-encoding': encoding });
      const hit = await get(h.url, path, { 'accept-encoding': encoding });
      expect(hit.get('content-encoding')).toBe(encoding === 'gzip' ? 'gzip' : 'br');
      const before = h.reached();
      const replay = await get(h.url, path, { 'accept-encoding': encoding });
      expect(h.reached()).toBe(before);
      expect(replay.body.equals(hit.body)).toBe(true);
      expect(fixed(replay)).toEqual(fixed(hit));
    }
    const plain = await get(h.url, path);
    expect(plain.get('content-encoding')).toBeUndefined();
  });

  it('counts Cache-Control max-age down from the entry, and stops at its expiry', async () => {
    const path = '/api/dns?target=example.com&type=A';
    await get(h.url, path);
    const hit = await get(h.url, path);
    const age = maxAge(hit);
    expect(age).toBeGreaterThan(30);
    h.now.ms += 20_000;
    const before = h.reached();
    const later = await get(h.url, path);
    expect(h.reached()).toBe(before);
    expect(maxAge(later)).toBe(age - 20);
    // Past the entry's expiry the replay is gone with it: Fastify asks the resolver again.
    h.now.ms += (age + 1) * 1000;
    const expired = await get(h.url, path);
    expect(h.reached()).toBe(before + 1);
    expect(expired.get('x-service-cache')).toBe('MISS');
  });

  it('leaves HEAD, a GET with a body and another URL spelling to Fastify', async () => {
    const path = '/api/dns?target=example.test&type=NS';
    await get(h.url, path);
    await get(h.url, path);
    let before = h.reached();
    expect((await get(h.url, path, {}, 'HEAD')).status).toBe(200);
    expect(h.reached()).toBe(before + 1);
    before = h.reached();
    await get(h.url, path, { 'content-length': '0' });
    expect(h.reached()).toBe(before + 1);
    // The same question spelled differently is its own key: Fastify answers it (a HIT) once.
    before = h.reached();
    const other = await get(h.url, '/api/dns?type=NS&target=example.test');
    expect(other.get('x-service-cache')).toBe('HIT');
    expect(h.reached()).toBe(before + 1);
  });
});

describe('a replay and the limits', () => {
  it('counts each replay once, a general point only; a refused one is answered 429 by Fastify without counting it again', async () => {
    // email-security is expensive: the miss that measures takes an expensive point too; a replay
    // is a cached answer, which measures nothing (issue 31), so only the general budget counts it.
    const h = await start({
      rateLimitGeneral: { points: 4, seconds: 60 },
      rateLimitExpensive: { points: 3, seconds: 60 },
    });
    const path = '/api/email-security?domain=example.test';
    const answers = [];
    for (let i = 0; i < 4; i++) answers.push(await get(h.url, path));
    expect(answers.map((a) => a.get('ratelimit'))).toEqual([
      '"general";r=3;t=60, "expensive";r=2;t=60',
      '"general";r=2;t=60',
      '"general";r=1;t=60',
      '"general";r=0;t=60',
    ]);
    expect(answers.every((a) => a.status === 200)).toBe(true);
    const before = h.reached();
    const refused = await get(h.url, path);
    expect(refused.status).toBe(429);
    expect(h.reached()).toBe(before + 1);
    expect(refused.get('retry-after')).toMatch(/^\d+$/);
    // The replay counted this request once: the general budget at 0, not below it twice.
    expect(refused.get('ratelimit')).toBe('"general";r=0;t=60');
    expect(JSON.parse(refused.body.toString())).toMatchObject({ error: expect.stringMatching(/rate limit/) });
    const rejections = await h.app.ctx.metrics.registry.metrics();
    expect(rejections).toMatch(/netdiag_rate_limit_rejections_total\{group="general"\} 1\n/);
  });

  it('keeps each forwarded client its own budget behind a trusted proxy', async () => {
    const h = await start({ trustProxy: true, rateLimitGeneral: { points: 5, seconds: 60 } });
    const path = '/api/dns?target=example.test&type=A';
    const as = (ip: string) => ({ 'x-forwarded-for': ip });
    await get(h.url, path, as('198.51.100.1'));
    await get(h.url, path, as('198.51.100.1'));
    const before = h.reached();
    const a = await get(h.url, path, as('198.51.100.1'));
    const b = await get(h.url, path, as('198.51.100.2'));
    expect(h.reached()).toBe(before);
    expect(remaining(a)).toBe(2);
    expect(remaining(b)).toBe(4);
    expect(h.lines().filter((l) => l.ip === '198.51.100.2')).toHaveLength(1);
  });
});

describe('a replay and the challenge gate', () => {
  let gated: FixtureUpstreams;
  beforeAll(async () => {
    gated = await startFixtureUpstreams({ challenge: true });
  }, 60_000);
  afterAll(async () => gated.close());

  it('replays a gated answer to a session holder only, private and varying by Cookie', async () => {
    const h = await start({}, gated);
    const verify = await fetch(`${h.url}/api/challenge/verify`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ token: 'pass:replay' }),
    });
    expect(verify.status).toBe(200);
    const cookie = verify.headers.get('set-cookie')?.split(';')[0] ?? '';
    const path = '/api/dns?target=example.test&type=A';
    await get(h.url, path, { cookie });
    const hit = await get(h.url, path, { cookie });
    expect(hit.get('cache-control')).toMatch(/^private, max-age=\d+$/);
    const before = h.reached();
    const replay = await get(h.url, path, { cookie });
    expect(h.reached()).toBe(before);
    expect(replay.get('cache-control')).toBe(hit.get('cache-control'));
    expect(replay.get('vary')).toBe('Cookie');
    const anonymous = await get(h.url, path);
    expect(anonymous.status).toBe(403);
    expect(h.reached()).toBe(before + 1);
    const forged = await get(h.url, path, { cookie: `${cookie.slice(0, -2)}xx` });
    expect(forged.status).toBe(403);
  });
});

describe('what a replay leaves to Fastify', () => {
  const path = '/api/dns?target=example.test&type=A';

  it('a connection over the per-address cap: Fastify answers it 429 and closes it', async () => {
    const h = await start({ maxConnectionsPerIp: 1 });
    await get(h.url, path);
    await get(h.url, path);
    // One connection held open (keep-alive, idle) uses the address's one allowed connection.
    const held = await new Promise<Socket>((resolve) => {
      const socket = connect(Number(new URL(h.url).port), '127.0.0.1', () => resolve(socket));
    });
    try {
      const before = h.reached();
      const refused = await get(h.url, path);
      expect(refused.status).toBe(429);
      expect(JSON.parse(refused.body.toString()).code).toBe('too_many_connections');
      expect(h.reached()).toBe(before + 1);
    } finally {
      held.destroy();
    }
  });

  it('an HTTP/1.1 request without Host: Fastify answers it 400 {error}', async () => {
    const h = await start();
    await get(h.url, path);
    await get(h.url, path);
    const raw = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(new URL(h.url).port), '127.0.0.1', () => {
        socket.write(`GET ${path} HTTP/1.1\r\nConnection: close\r\n\r\n`);
      });
      let text = '';
      socket.on('data', (d) => (text += d.toString()));
      socket.on('end', () => resolve(text));
      socket.on('error', reject);
    });
    expect(raw).toMatch(/^HTTP\/1\.1 400 /);
    expect(raw).toMatch(/"error":"the Host header is required"/);
  });

  it('while the event loop is saturated: the load-shedding check refuses it, and Fastify answers 503', async () => {
    const h = await start({ loadShedEventLoopDelayMs: 200 }, fx, { loadSampleIntervalMs: 20 });
    // Until a replay answers: samples taken while the app (or a busy machine) was starting
    // may shed the first requests.
    let replayed = false;
    for (let i = 0; i < 100 && !replayed; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      const before = h.reached();
      replayed = (await get(h.url, path)).status === 200 && h.reached() === before;
    }
    expect(replayed).toBe(true);
    const before = h.reached();
    // Saturate, let the overdue sampling timer run, ask at once; a few rounds on a busy machine.
    let shed = 0;
    for (let i = 0; i < 5 && shed !== 503; i++) {
      const end = performance.now() + 600;
      while (performance.now() < end) {
        // Busy-wait on purpose: the saturation being simulated.
      }
      await new Promise((resolve) => setTimeout(resolve, 1));
      shed = (await get(h.url, path)).status;
    }
    expect(shed).toBe(503);
    expect(h.reached()).toBeGreaterThan(before);
  });
});

describe.skipIf(!redisBinary)('a replay with the limits in Redis', () => {
  let redis: RedisProcess;
  beforeAll(async () => {
    redis = await startRedis();
  }, 60_000);
  afterAll(async () => redis.stop());

  it('counts every replay in Redis once, and a refused one once, answered 429 by Fastify', async () => {
    const config = {
      redisUrl: redis.url,
      sessionSecret: 'replay-test-session-secret-0123456789',
      rateLimitGeneral: { points: 3, seconds: 60 },
    };
    const [a, b] = [await start(config), await start(config)];
    const path = '/api/dns?target=example.test&type=SOA';
    await get(a.url, path);
    await get(a.url, path);
    const before = a.reached();
    const replay = await get(a.url, path);
    expect(a.reached()).toBe(before);
    expect(replay.get('ratelimit')).toBe('"general";r=0;t=60');
    // The budget is the one both instances count in.
    const elsewhere = await get(b.url, path);
    expect(elsewhere.status).toBe(429);
    const refused = await get(a.url, path);
    expect(refused.status).toBe(429);
    expect(a.reached()).toBe(before + 1);
    const client = new Redis(redis.url);
    try {
      // Five requests from 127.0.0.1, each counted once.
      expect(await client.get('netdiag:rl:general:127.0.0.1')).toBe('5');
    } finally {
      client.disconnect();
    }
  });

  it('costs one Redis command per replay, for a route with two budgets too', async () => {
    const h = await start({ redisUrl: redis.url, sessionSecret: 'replay-test-session-secret-0123456789' });
    const redisClient = h.app.ctx.redis;
    if (redisClient === undefined) throw new Error('no Redis client');
    for (const path of ['/api/dns?target=example.test&type=CAA', '/api/email-security?domain=example.test']) {
      await get(h.url, path);
      await get(h.url, path);
      const sent = vi.spyOn(redisClient, 'sendCommand');
      const before = h.reached();
      for (let i = 0; i < 3; i++) expect((await get(h.url, path)).status).toBe(200);
      expect(h.reached()).toBe(before);
      expect(sent.mock.calls.map(([command]) => command.name)).toEqual(['evalsha', 'evalsha', 'evalsha']);
      sent.mockRestore();
    }
  });
});
