/**
 * Scale-out proof (issue 12): a real redis-server and two real netdiag
 * processes (src/server.ts, as an operator starts it) on different ports,
 * sharing REDIS_URL and SESSION_SECRET, behind a trusted proxy (TRUST_PROXY),
 * with every upstream a loopback fake: DNS over DoH (trusted through
 * NODE_EXTRA_CA_CERTS), crt.sh, and Turnstile siteverify.
 *
 * Each scenario speaks for its own client address (X-Forwarded-For), so the
 * per-address budgets of one scenario do not leak into another. Then the same
 * with one process running WEB_CONCURRENCY=2 workers.
 *
 * Runs when redis-server is on PATH (CI installs it); skipped with a printed
 * reason otherwise (see test/fakes/redis.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeDnsServer, startFakeDnsServer } from '../fakes/dns-server.js';
import { type FakeUpstream, startFakeUpstream } from '../fakes/https-upstream.js';
import { type RedisProcess, redisBinary, startRedis } from '../fakes/redis.js';
import { getTestPki } from '../fakes/test-ca.js';
import {
  EXPECTED_HOST,
  type FakeSiteverify,
  SECRET_KEY,
  SITE_KEY,
  startFakeSiteverify,
} from '../integration/challenge-fake-siteverify.js';
import {
  cookieOf,
  eventually,
  type HttpAnswer,
  metricValue,
  type NetdiagProcess,
  startNetdiag,
} from './netdiag-process.js';

const SESSION_SECRET = 'scale-out-shared-session-secret-0123456789';

describe.skipIf(!redisBinary)('two netdiag processes sharing one Redis', () => {
  let redis: RedisProcess;
  let dns: FakeDnsServer;
  let crtsh: FakeUpstream;
  let siteverify: FakeSiteverify;
  let a: NetdiagProcess;
  let b: NetdiagProcess;

  beforeAll(async () => {
    const pki = await getTestPki();
    [redis, dns, crtsh, siteverify] = await Promise.all([
      startRedis(),
      startFakeDnsServer(),
      // Every CT search answers an empty history: the expensive budget is what is measured.
      startFakeUpstream({ prefix: '/crtsh', handler: () => ({ json: [] }) }),
      startFakeSiteverify(),
    ]);
    const env = {
      REDIS_URL: redis.url,
      SESSION_SECRET,
      NODE_EXTRA_CA_CERTS: pki.caFile,
      // The test client stands in for a load balancer on loopback that sets X-Forwarded-For.
      TRUST_PROXY: '127.0.0.1',
      DNS_RESOLVERS: dns.doh,
      CRTSH_URL: crtsh.url,
      TURNSTILE_SITE_KEY: SITE_KEY,
      TURNSTILE_SECRET_KEY: SECRET_KEY,
      TURNSTILE_VERIFY_URL: `${siteverify.url}/turnstile/v0/siteverify`,
      TURNSTILE_EXPECTED_HOSTNAME: EXPECTED_HOST,
      // Nothing in this suite may reach the internet.
      RELAY_RANGES_URL: 'https://127.0.0.1:9/egress-ip-ranges.csv',
      TOR_EXIT_LIST_URL: 'https://127.0.0.1:9/torbulkexitlist',
      RDAP_AGGREGATOR_URL: 'https://127.0.0.1:9',
      RDAP_BOOTSTRAP_URL: 'https://127.0.0.1:9',
      GLOBALPING_URL: 'https://127.0.0.1:9',
      RIPESTAT_URL: 'https://127.0.0.1:9',
      PROVIDER_TIMEOUT_MS: '2000',
      LOAD_SHED_EVENT_LOOP_DELAY_MS: '0',
      METRICS_PORT: '0',
    };
    [a, b] = await Promise.all([startNetdiag(env), startNetdiag(env)]);
  }, 60_000);

  afterAll(async () => {
    const codes = await Promise.all([a?.stop(), b?.stop()]);
    await Promise.all([redis?.stop(), dns?.close(), crtsh?.close(), siteverify?.close()]);
    // Both shut down cleanly on SIGTERM, having kept serving through a Redis outage.
    expect(codes).toEqual([0, 0]);
  }, 30_000);

  /** A session for `client`, opened on `via` with a fresh single-use token. */
  async function sessionFor(via: NetdiagProcess, client: string): Promise<string> {
    const res = await via.post(
      '/api/challenge/verify',
      { token: `pass:${client}:${Math.random()}` },
      { 'x-forwarded-for': client },
    );
    expect(res.status, res.text).toBe(200);
    return cookieOf(res);
  }

  it('listens on two different ports', () => {
    expect(a.base).not.toBe(b.base);
  });

  it('a Turnstile token accepted by one instance is refused by the other (shared replay set)', async () => {
    const client = '198.51.100.1';
    const token = 'pass:scale-replay';
    const first = await a.post('/api/challenge/verify', { token }, { 'x-forwarded-for': client });
    expect(first.status).toBe(200);
    const calls = siteverify.calls().length;
    const replay = await b.post('/api/challenge/verify', { token }, { 'x-forwarded-for': client });
    expect(replay.status).toBe(403);
    expect(replay.json().code).toBe('challenge_failed');
    // Refused from the shared set, without asking siteverify again.
    expect(siteverify.calls().length).toBe(calls);
  });

  it('a session cookie issued by one instance is accepted by the other', async () => {
    const client = '198.51.100.2';
    const without = await b.get('/api/dns?target=example.com', { 'x-forwarded-for': client });
    expect(without.status).toBe(403);
    expect(without.json().code).toBe('challenge_required');
    const cookie = await sessionFor(a, client);
    const withCookie = await b.get('/api/dns?target=example.com', { 'x-forwarded-for': client, cookie });
    expect(withCookie.status, withCookie.text).toBe(200);
    const status = await b.get('/api/challenge/status', { 'x-forwarded-for': client, cookie });
    expect(status.json<{ session: { valid: boolean } }>().session.valid).toBe(true);
  });

  it('an answer cached by one instance is a HIT on the other, without another upstream query', async () => {
    const client = '198.51.100.3';
    const cookie = await sessionFor(a, client);
    const url = '/api/dns?target=www.example.com&type=A';
    const miss = await a.get(url, { 'x-forwarded-for': client, cookie });
    expect(miss.status, miss.text).toBe(200);
    expect(miss.headers['x-service-cache']).toBe('MISS');
    const queries = dns.counts.doh;
    const hit = await b.get(url, { 'x-forwarded-for': client, cookie });
    expect(hit.status).toBe(200);
    expect(hit.headers['x-service-cache']).toBe('HIT');
    expect(hit.json()).toEqual(miss.json());
    expect(dns.counts.doh).toBe(queries);
  });

  it('shares the general budget (30 / 60 s): requests split across both instances get 429 at the 31st', async () => {
    const client = '198.51.100.4';
    // The verify POST is request 1 of the 30.
    const cookie = await sessionFor(a, client);
    const statuses: number[] = [];
    let last: HttpAnswer | undefined;
    for (let i = 2; i <= 31; i++) {
      last = await (i % 2 === 0 ? a : b).get('/api/dns?target=example.com', {
        'x-forwarded-for': client,
        cookie,
      });
      statuses.push(last.status);
    }
    expect(statuses.slice(0, 29)).toEqual(Array(29).fill(200));
    expect(statuses[29]).toBe(429);
    expect(Number(last?.headers['retry-after'])).toBeGreaterThan(0);
    expect(last?.json().error).toMatch(/rate limit/);
    // The other instance agrees: the budget is spent everywhere.
    expect((await a.get('/api/dns?target=example.com', { 'x-forwarded-for': client, cookie })).status).toBe(
      429,
    );
  });

  it('shares the expensive budget (6 / 60 s): the 7th expensive request across both instances is a 429', async () => {
    const client = '198.51.100.5';
    const cookie = await sessionFor(b, client);
    const statuses: number[] = [];
    for (let i = 1; i <= 7; i++) {
      const res = await (i % 2 === 0 ? a : b).get(`/api/subdomains?domain=example${i}.com`, {
        'x-forwarded-for': client,
        cookie,
      });
      statuses.push(res.status);
      if (i === 7) expect(res.json().error).toMatch(/expensive/);
    }
    expect(statuses).toEqual([200, 200, 200, 200, 200, 200, 429]);
  });

  it('Redis killed mid-run: both keep answering, /readyz says 503, /metrics counts cache errors; Redis back → ready again without a restart', async () => {
    const client = '198.51.100.6';
    const cookie = await sessionFor(a, client);
    await redis.kill();

    for (const instance of [a, b]) {
      // Cache misses (never errors) and in-process insurance limits.
      const res = await instance.get('/api/dns?target=shop.example.com&type=A', {
        'x-forwarded-for': client,
        cookie,
      });
      expect(res.status, res.text).toBe(200);
      expect(res.headers['x-service-cache']).toBe('MISS');
      const ready = await instance.get('/readyz');
      expect(ready.status).toBe(503);
      expect(ready.json().error).toMatch(/redis/);
      const metrics = (await instance.metrics()).text;
      expect(metricValue(metrics, 'netdiag_cache_operations_total', { result: 'error' })).toBeGreaterThan(0);
      expect((await instance.get('/healthz')).status).toBe(200);
    }
    // A fresh session still opens (sessions need no shared state; the replay check reads as a miss).
    await sessionFor(b, '198.51.100.7');

    await redis.restart();
    for (const instance of [a, b]) {
      const back = await eventually(async () => (await instance.get('/readyz')).status === 200, 15_000);
      expect(back, `${instance.base} reconnected to Redis`).toBe(true);
    }
    // Shared again: a fresh answer cached through one is a HIT on the other.
    const url = '/api/dns?target=example.com&type=AAAA';
    expect((await b.get(url, { 'x-forwarded-for': client, cookie })).headers['x-service-cache']).toBe('MISS');
    expect((await a.get(url, { 'x-forwarded-for': client, cookie })).headers['x-service-cache']).toBe('HIT');
  }, 40_000);
});

describe.skipIf(!redisBinary)('WEB_CONCURRENCY=2 with Redis', () => {
  let redis: RedisProcess;
  let dns: FakeDnsServer;
  let server: NetdiagProcess;

  beforeAll(async () => {
    [redis, dns] = await Promise.all([startRedis(), startFakeDnsServer()]);
    server = await startNetdiag(
      {
        WEB_CONCURRENCY: '2',
        REDIS_URL: redis.url,
        SESSION_SECRET,
        TRUST_PROXY: '127.0.0.1',
        DNS_RESOLVERS: dns.udp,
        RELAY_RANGES_URL: 'https://127.0.0.1:9/egress-ip-ranges.csv',
        TOR_EXIT_LIST_URL: 'https://127.0.0.1:9/torbulkexitlist',
        LOAD_SHED_EVENT_LOOP_DELAY_MS: '0',
        METRICS_PORT: '0',
      },
      { listeners: 2 },
    );
  }, 60_000);

  afterAll(async () => {
    const code = await server?.stop();
    await Promise.all([redis?.stop(), dns?.close()]);
    expect(code).toBe(0);
  }, 30_000);

  /** The pid of the worker that logged the completion of request `id`. */
  function workerOf(id: string): number | undefined {
    // Every request is logged with its id by the worker that served it (pino adds `pid`).
    const line = server.lines.find((l) => l.reqId === id && typeof l.pid === 'number');
    return typeof line?.pid === 'number' ? line.pid : undefined;
  }

  it('two workers share the port and both serve; the cache is shared between them', async () => {
    const ids: string[] = [];
    const caches: string[] = [];
    for (let i = 0; i < 8; i++) {
      const id = `wc-cache-${i}`;
      ids.push(id);
      const res = await server.get('/api/dns?target=www.example.com', {
        'x-request-id': id,
        'x-forwarded-for': '198.51.100.20',
      });
      expect(res.status, res.text).toBe(200);
      caches.push(String(res.headers['x-service-cache']));
    }
    expect(caches).toEqual(['MISS', ...Array(7).fill('HIT')]);
    // Log lines land a moment after the response.
    await eventually(async () => ids.every((id) => workerOf(id) !== undefined), 5_000);
    const workers = new Set(ids.map(workerOf));
    expect(workers.size).toBe(2);
    expect(workers.has(server.pid)).toBe(false);
  });

  it('the general budget holds across workers: the 31st request is a 429', async () => {
    const statuses: number[] = [];
    const ids: string[] = [];
    for (let i = 1; i <= 31; i++) {
      ids.push(`wc-limit-${i}`);
      const res = await server.get('/api/providers', {
        'x-forwarded-for': '198.51.100.21',
        'x-request-id': `wc-limit-${i}`,
      });
      statuses.push(res.status);
    }
    expect(statuses.slice(0, 30)).toEqual(Array(30).fill(200));
    expect(statuses[30]).toBe(429);
    await eventually(async () => ids.every((id) => workerOf(id) !== undefined), 5_000);
    expect(new Set(ids.map(workerOf)).size).toBe(2);
  });

  it("the primary serves every worker's metrics, summed, on the metrics listener only", async () => {
    for (let i = 0; i < 6; i++) {
      expect((await server.get('/healthz', { 'x-request-id': `wc-metrics-${i}` })).status).toBe(200);
    }
    await eventually(async () => server.metricsUrl() !== undefined, 5_000);
    // Served by the primary, which serves no HTTP API itself.
    const announced = server.lines.find((l) => l.msg === 'metrics listening');
    expect(announced?.pid).toBe(server.pid);
    const res = await server.metrics();
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain/);
    // Both workers' counts, summed: at least the six requests above.
    expect(
      metricValue(res.text, 'netdiag_http_requests_total', {
        route: '/healthz',
        method: 'GET',
        status: '200',
      }),
    ).toBeGreaterThanOrEqual(6);
    expect((await server.get('/metrics')).status).toBe(404);
  });
});
