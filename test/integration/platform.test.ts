import { Type } from 'typebox';
import { describe, expect, it } from 'vitest';
import { deepFreeze } from '../../src/cache/frozen.js';
import { answer } from '../../src/plugins/response-cache.js';
import { buildTestApp, capturingLogger } from '../helper.js';
import { ProbeProvider, probeRoutes } from '../probe-routes.js';

describe('cache headers through the provider chain', () => {
  it('marks a cacheable success MISS then HIT with public max-age', async () => {
    const provider = new ProbeProvider('p');
    const app = await buildTestApp({ extend: probeRoutes([provider]) });
    const first = await app.inject('/api/probe/cached?q=a');
    expect(first.statusCode).toBe(200);
    expect(first.headers['x-service-cache']).toBe('MISS');
    expect(first.headers['cache-control']).toBe('public, max-age=120');
    expect(first.json()).toMatchObject({
      echo: 'a',
      source: 'Probe p',
      source_id: 'p',
      providers_tried: [{ id: 'p', name: 'Probe p', status: 'ok' }],
    });
    const second = await app.inject('/api/probe/cached?q=a');
    expect(second.headers['x-service-cache']).toBe('HIT');
    expect(second.headers['cache-control']).toMatch(/^public, max-age=(119|120)$/);
    expect(provider.calls).toBe(1);
  });

  it('answers 502 with providers_tried and no-store when every provider fails, and does not cache it', async () => {
    const primary = new ProbeProvider('primary');
    const fallback = new ProbeProvider('fallback');
    primary.fail = true;
    fallback.fail = true;
    const app = await buildTestApp({ extend: probeRoutes([primary, fallback]) });
    const res = await app.inject('/api/probe/cached?q=b');
    expect(res.statusCode).toBe(502);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.headers['x-service-cache']).toBeUndefined();
    expect(res.json()).toMatchObject({
      error: expect.any(String),
      providers_tried: [
        { id: 'primary', status: 'failed', error: expect.stringMatching(/503/) },
        { id: 'fallback', status: 'failed' },
      ],
    });
    fallback.fail = false;
    const retry = await app.inject('/api/probe/cached?q=b');
    expect(retry.statusCode).toBe(200);
    expect(retry.json().providers_tried.map((a: { status: string }) => a.status)).toEqual(['failed', 'ok']);
  });
});

describe('answer()', () => {
  it("sends a hit's body, frozen and shared between routes, through each route's own schema", async () => {
    const shared = deepFreeze({ a: 1, b: 'two', secret: 'never serialized' });
    const app = await buildTestApp({
      extend: (app) => {
        for (const [path, schema] of [
          ['/api/shared-a', Type.Object({ a: Type.Integer() })],
          ['/api/shared-b', Type.Object({ b: Type.String() })],
        ] as const) {
          app.get(path, { schema: { response: { 200: schema } } }, async (_request, reply) =>
            answer(reply, {
              body: shared,
              cache: { hit: true, maxAge: 60, expiresAt: Date.now() + 60_000 },
            }),
          );
        }
      },
    });
    for (let i = 0; i < 2; i++) {
      const a = await app.inject('/api/shared-a');
      expect(a.body).toBe('{"a":1}');
      expect(a.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(a.headers['content-security-policy']).toBe("default-src 'none'; frame-ancestors 'none'");
      expect(a.headers['cache-control']).toBe('public, max-age=60');
      expect(a.headers['x-service-cache']).toBe('HIT');
      expect((await app.inject('/api/shared-b')).body).toBe('{"b":"two"}');
    }
  });
});

describe('GET /api/providers', () => {
  it('lists providers with roles and runtime status, never cached', async () => {
    const primary = new ProbeProvider('primary');
    const fallback = new ProbeProvider('fallback');
    primary.fail = true;
    const app = await buildTestApp({ extend: probeRoutes([primary, fallback]) });
    await app.inject('/api/probe/cached?q=c');
    const res = await app.inject('/api/providers');
    expect(res.statusCode).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    const byId = Object.fromEntries(res.json().providers.map((p: { id: string }) => [p.id, p]));
    expect(byId.primary).toMatchObject({
      name: 'Probe primary',
      capabilities: ['probe'],
      docs_url: 'https://example.test',
      access: 'none',
      configured: true,
      roles: { probe: 'primary' },
      status: { consecutive_failures: 1, last_error: expect.stringMatching(/503/), last_success_at: null },
    });
    expect(byId.fallback).toMatchObject({
      roles: { probe: 'fallback' },
      status: { consecutive_failures: 0 },
    });
    expect(byId.fallback.status.last_success_at).toEqual(expect.any(String));
  });
});

describe('GET /api/providers publishes no secret', () => {
  // Issue 16: a resolver URL with a password, API keys in query strings and the machine's
  // file paths appeared verbatim as `endpoint`.
  it('shows scheme://host[:port] of a URL and the base name of a file, nothing more', async () => {
    const app = await buildTestApp({
      config: {
        dnsResolvers: ['https://doh.example:8443/dns-query?key=S3cretKey', 'udp://192.0.2.53:53'],
        rdapAggregatorUrl: 'https://rdap.example/prefix?token=S3cretToken',
        relayRangesFile: '/srv/private/netdiag/egress.csv',
        geoipDb: '/opt/secret-layout/city-v4.mmdb,/opt/secret-layout/city-v6.mmdb',
      },
    });
    const res = await app.inject('/api/providers');
    expect(res.body).not.toMatch(/S3cret|secret-layout|\/srv\/private/);
    const endpoints = Object.fromEntries(
      res.json().providers.map((p: { id: string; endpoint: string }) => [p.id, p.endpoint]),
    );
    expect(Object.values(endpoints)).toEqual(
      expect.arrayContaining([
        'https://doh.example:8443',
        'udp://192.0.2.53:53',
        'https://rdap.example',
        'egress.csv',
        'city-v4.mmdb, city-v6.mmdb',
      ]),
    );
  });
});

describe('operations', () => {
  it('serves liveness and readiness', async () => {
    // Readiness warns of stale GeoIP data by the app clock: set in the bundled data's release month, not the day the suite runs.
    const app = await buildTestApp({ clock: () => Date.parse('2026-06-20T00:00:00Z') });
    expect((await app.inject('/healthz')).json()).toEqual({ status: 'ok' });
    expect((await app.inject('/readyz')).json()).toEqual({ status: 'ready', cache: 'memory' });
  });

  it('counts Prometheus metrics: requests by route and status, cache, provider attempts, rejections', async () => {
    const provider = new ProbeProvider('p');
    const app = await buildTestApp({
      config: { rateLimitGeneral: { points: 3, seconds: 60 } },
      extend: probeRoutes([provider]),
    });
    await app.inject('/api/probe/cached?q=m');
    await app.inject('/api/probe/cached?q=m');
    await app.inject('/api/probe/cached?q=m');
    await app.inject('/api/probe/cached?q=m');
    const text = await app.ctx.metrics.registry.metrics();
    expect(text).toContain(
      'netdiag_http_requests_total{route="/api/probe/cached",method="GET",status="200"} 3',
    );
    expect(text).toContain(
      'netdiag_http_requests_total{route="/api/probe/cached",method="GET",status="429"} 1',
    );
    expect(text).toContain('netdiag_cache_operations_total{result="miss"} 1');
    expect(text).toContain('netdiag_cache_operations_total{result="hit"} 2');
    expect(text).toContain('netdiag_provider_attempts_total{provider="p",outcome="ok",kind="none"} 1');
    expect(text).toContain('netdiag_rate_limit_rejections_total{group="general"} 1');
    expect(text).toContain('netdiag_http_request_duration_seconds_bucket');
  });

  // Issue 16: /metrics was served on the public port; it has a listener of its own (METRICS_PORT).
  it('serves no /metrics on the public port', async () => {
    const app = await buildTestApp();
    expect((await app.inject('/metrics')).statusCode).toBe(404);
    expect(app.routeTable.some((r) => r.url === '/metrics')).toBe(false);
  });

  it('sends baseline security headers and no X-Powered-By', async () => {
    const app = await buildTestApp();
    const res = await app.inject('/api/providers');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['content-security-policy']).toBe("default-src 'none'; frame-ancestors 'none'");
    expect(res.headers['x-powered-by']).toBeUndefined();
  });

  it('allows any origin to read GET API responses, without credentials', async () => {
    const app = await buildTestApp();
    const res = await app.inject({ url: '/api/providers', headers: { origin: 'https://elsewhere.example' } });
    expect(res.headers['access-control-allow-origin']).toBe('*');
    expect(res.headers['access-control-allow-credentials']).toBeUndefined();
    expect((await app.inject('/healthz')).headers['access-control-allow-origin']).toBeUndefined();
  });

  it('echoes a well-formed X-Request-Id and replaces a malformed one', async () => {
    const app = await buildTestApp();
    expect(
      (await app.inject({ url: '/healthz', headers: { 'x-request-id': 'abc-123' } })).headers['x-request-id'],
    ).toBe('abc-123');
    const replaced = (await app.inject({ url: '/healthz', headers: { 'x-request-id': 'bad id\n{"x":1}' } }))
      .headers['x-request-id'];
    expect(replaced).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('logs one line per request with method, URL, status, time and request id', async () => {
    const { logger, lines } = capturingLogger();
    const app = await buildTestApp({ logger });
    await app.inject({ url: '/healthz', headers: { 'x-request-id': 'one-line' } });
    const mine = lines().filter((l) => l.reqId === 'one-line');
    expect(mine).toHaveLength(1);
    expect(mine[0]).toMatchObject({ msg: 'request', method: 'GET', url: '/healthz', statusCode: 200 });
    expect(typeof mine[0]?.ms).toBe('number');
    // Every field, in the order operators' log pipelines have parsed since the first release.
    expect(Object.keys(mine[0] ?? {})).toEqual([
      'level',
      'time',
      'pid',
      'hostname',
      'reqId',
      'method',
      'url',
      'statusCode',
      'ms',
      'ip',
      'msg',
    ]);
  });

  it("binds a route's own log lines to the request id, redacted as every line is", async () => {
    const { logger, lines } = capturingLogger('debug');
    const app = await buildTestApp({
      logger,
      extend: (a) => {
        a.get('/probe/log', { schema: { hide: true } }, async (request) => {
          request.log.warn({ body: { token: 'turnstile-tok' } }, 'route line');
          request.log.trace('below the level: dropped');
          request.log.child({ part: 'inner' }).debug('child line');
          return { ok: true };
        });
      },
    });
    await app.inject({ url: '/probe/log', headers: { 'x-request-id': 'route-lines' } });
    const mine = lines().filter((l) => l.reqId === 'route-lines');
    expect(mine.map((l) => l.msg)).toEqual(['route line', 'child line', 'request']);
    expect(mine[0]).toMatchObject({ level: 40, body: { token: '[redacted]' } });
    expect(mine[1]).toMatchObject({ level: 20, part: 'inner' });
  });

  it('redacts secrets (cookies, authorization, tokens, keys) from log lines', async () => {
    const { logger, lines } = capturingLogger();
    logger.info(
      {
        req: { headers: { cookie: 'nd_session=supersecret', authorization: 'Bearer tok123' } },
        body: { token: 'turnstile-tok' },
      },
      'probe',
    );
    logger.info({ provider: { apiKey: 'cs-key-1' } }, 'probe');
    const text = JSON.stringify(lines());
    expect(text).toContain('[redacted]');
    for (const secret of ['supersecret', 'tok123', 'turnstile-tok', 'cs-key-1'])
      expect(text).not.toContain(secret);
  });
});
