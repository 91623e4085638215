/**
 * Challenge protection end to end: GET /api/challenge/status, POST
 * /api/challenge/verify against a fake siteverify on loopback HTTPS, and the
 * gate in front of every diagnostic /api route. Time is a fake clock.
 */
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { getTestPki } from '../fakes/test-ca.js';
import { buildTestApp } from '../helper.js';
import { ProbeProvider, probeRoutes } from '../probe-routes.js';
import {
  activeConfig,
  type FakeSiteverify,
  SECRET_KEY,
  SITE_KEY,
  startFakeSiteverify,
} from './challenge-fake-siteverify.js';

const T0 = Date.parse('2026-03-01T12:00:00Z');
const CLIENT = '203.0.113.9';

let ca: string;
let siteverify: FakeSiteverify;

beforeAll(async () => {
  ca = (await getTestPki()).caPem;
  siteverify = await startFakeSiteverify();
});
afterAll(async () => {
  await siteverify?.close();
});
beforeEach(() => siteverify.reset());

interface Clocked {
  app: FastifyInstance;
  clock: { now: number };
}

async function activeApp(config: Record<string, unknown> = {}): Promise<Clocked> {
  const clock = { now: T0 };
  const app = await buildTestApp({
    ca,
    clock: () => clock.now,
    config: activeConfig(siteverify, config),
    extend: probeRoutes([new ProbeProvider('p')]),
  });
  return { app, clock };
}

async function inactiveApp(config: Record<string, unknown> = {}): Promise<FastifyInstance> {
  return buildTestApp({
    ca,
    config: {
      ...activeConfig(siteverify),
      turnstileSiteKey: undefined,
      turnstileSecretKey: undefined,
      ...config,
    },
    extend: probeRoutes([new ProbeProvider('p')]),
  });
}

function verify(
  app: FastifyInstance,
  token: unknown,
  opts: { ip?: string; headers?: Record<string, string> } = {},
) {
  return app.inject({
    method: 'POST',
    url: '/api/challenge/verify',
    remoteAddress: opts.ip ?? CLIENT,
    headers: opts.headers ?? {},
    payload: { token },
  });
}

/** The cookie pair (`nd_session=...`) from a Set-Cookie header. */
function cookieOf(res: { headers: Record<string, unknown> }): string {
  const header = res.headers['set-cookie'];
  expect(typeof header, 'a single Set-Cookie header').toBe('string');
  return String(header).split(';')[0] ?? '';
}

function probe(app: FastifyInstance, cookie?: string, ip = CLIENT) {
  return app.inject({
    url: '/api/probe?target=x',
    remoteAddress: ip,
    headers: cookie ? { cookie } : {},
  });
}

describe('protection inactive', () => {
  it.each([
    ['only the site key set', { turnstileSiteKey: SITE_KEY }],
    ['only the secret key set', { turnstileSecretKey: SECRET_KEY }],
    ['neither key set', {}],
  ])('with %s: nothing is gated and verify needs no session', async (_name, keys) => {
    const app = await inactiveApp(keys);
    expect((await probe(app)).statusCode).toBe(200);
    expect((await app.inject({ url: '/api/dns?target=', remoteAddress: CLIENT })).statusCode).toBe(400);

    const status = (await app.inject({ url: '/api/challenge/status', remoteAddress: CLIENT })).json();
    expect(status.protection).toEqual({ active: false, provider: 'turnstile' });
    expect(status.session).toEqual({ required: false, valid: false });

    const res = await verify(app, 'pass:inactive');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({
      verified: false,
      protection_active: false,
      message: expect.any(String),
    });
    expect(res.headers['set-cookie']).toBeUndefined();
    expect(siteverify.count()).toBe(0);
  });
});

describe('the gate (protection active)', () => {
  it('answers a diagnostic request without a session with 403 {error, code: challenge_required}', async () => {
    const { app } = await activeApp();
    for (const res of [
      await probe(app),
      await app.inject({
        method: 'POST',
        url: '/api/probe',
        remoteAddress: CLIENT,
        payload: { target: 'x', type: 'A' },
      }),
      await app.inject({ method: 'HEAD', url: '/api/probe?target=x', remoteAddress: CLIENT }),
      // A real feature route: refused before it does any DNS work.
      await app.inject({ url: '/api/dns?target=example.com', remoteAddress: CLIENT }),
    ]) {
      expect(res.statusCode).toBe(403);
      if (res.body) expect(res.json()).toEqual({ error: expect.any(String), code: 'challenge_required' });
      expect(res.headers['cache-control']).toBe('no-store');
    }
    expect(siteverify.count()).toBe(0);
  });

  it('lets the addresses CHALLENGE_EXEMPT_CIDRS names through without a session, still rate limited', async () => {
    const { app } = await activeApp({
      challengeExemptCidrs: ['198.51.100.0/24', '2001:db8::/32'],
      rateLimitGeneral: { points: 2, seconds: 60 },
    });
    const from = (remoteAddress: string) => app.inject({ url: '/api/probe?target=x', remoteAddress });
    expect((await from('198.51.100.20')).statusCode).toBe(200);
    expect((await from('2001:db8::5')).statusCode).toBe(200);
    // Everyone else still needs the session.
    expect((await from(CLIENT)).statusCode).toBe(403);
    const status = async (remoteAddress: string) =>
      (await app.inject({ url: '/api/challenge/status', remoteAddress })).json().session.required;
    expect(await status('198.51.100.20')).toBe(false);
    expect(await status(CLIENT)).toBe(true);
    // The exemption is from the challenge, not from the limits (status itself counted one point).
    expect((await from('198.51.100.20')).statusCode).toBe(429);
  });

  it('never gates passive endpoints', async () => {
    const { app } = await activeApp();
    const passive = [
      '/api/challenge/status',
      '/api/providers',
      '/openapi.json',
      '/healthz',
      '/readyz',
      '/docs',
    ];
    // /api/my-ip is passive by contract; checked whenever its feature is registered.
    if (app.routeTable.some((r) => r.url === '/api/my-ip')) passive.push('/api/my-ip');
    for (const url of passive) {
      const res = await app.inject({ url, remoteAddress: CLIENT });
      expect(res.statusCode, url).toBeLessThan(400);
    }
    expect(
      (await app.inject({ method: 'HEAD', url: '/api/providers', remoteAddress: CLIENT })).statusCode,
    ).toBe(200);
    // The verify endpoint itself answers (here: bad input), never "challenge required".
    const res = await verify(app, '');
    expect(res.statusCode).toBe(400);
  });

  // Issue 16: gated answers carried `Cache-Control: public` and no `Vary: Cookie`, so a shared
  // cache would have served them to clients without a session.
  it('marks a gated answer private and varying by Cookie; public answers stay public', async () => {
    const { app } = await activeApp();
    const cookie = cookieOf(await verify(app, 'pass:cache'));
    const res = await app.inject({
      url: '/api/probe/cached?q=c',
      remoteAddress: CLIENT,
      headers: { cookie },
    });
    expect(res.statusCode).toBe(200);
    expect(res.headers['cache-control']).toMatch(/^private, max-age=\d+$/);
    expect(String(res.headers.vary).split(/,\s*/)).toContain('Cookie');
    const refused = await app.inject({ url: '/api/probe/cached?q=c', remoteAddress: CLIENT });
    expect(refused.statusCode).toBe(403);
    expect(refused.headers['cache-control']).toBe('no-store');
    // Passive routes and the document need no session and may be shared.
    const doc = await app.inject({ url: '/openapi.json', remoteAddress: CLIENT });
    expect(doc.headers.vary ?? '').not.toContain('Cookie');
    // Without protection, answers are public as before.
    const open = await (await inactiveApp()).inject({ url: '/api/probe/cached?q=c', remoteAddress: CLIENT });
    expect(open.headers['cache-control']).toMatch(/^public, max-age=\d+$/);
    expect(open.headers.vary ?? '').not.toContain('Cookie');
  });

  it('answers an unknown /api path with 404, not 403', async () => {
    const { app } = await activeApp();
    const res = await app.inject({ url: '/api/no-such-thing', remoteAddress: CLIENT });
    expect(res.statusCode).toBe(404);
    expect(res.json().code).toBe('not_found');
  });

  it('lets a 429 take precedence over the 403, so an unverified flood is still limited', async () => {
    const { app } = await activeApp();
    for (let i = 0; i < 30; i++) expect((await probe(app)).statusCode).toBe(403);
    const res = await probe(app);
    expect(res.statusCode).toBe(429);
    expect(res.json().code).toBe('rate_limited');
    expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
  });

  // Regression: the router decodes the path, so /%61pi/probe reaches /api/probe while
  // the raw URL does not start with /api/; both the gate and the limiter once keyed on the raw URL.
  it('gates and limits a percent-encoded path to an /api route like the plain one', async () => {
    const { app } = await activeApp();
    const res = await app.inject({ url: '/%61pi/probe?target=x', remoteAddress: CLIENT });
    expect(res.statusCode).toBe(403);
    expect(res.json().code).toBe('challenge_required');
    for (let i = 0; i < 29; i++) {
      await app.inject({
        method: 'POST',
        url: '/api/challenge/%76erify',
        remoteAddress: CLIENT,
        payload: {},
      });
    }
    const limited = await app.inject({
      method: 'POST',
      url: '/api/challenge/%76erify',
      remoteAddress: CLIENT,
      payload: { token: 'pass:encoded' },
    });
    expect(limited.statusCode).toBe(429);
    expect(siteverify.count()).toBe(0);
  });

  it('documents the 403 on every gated route in /openapi.json, and not on passive ones', async () => {
    const { app } = await activeApp();
    const doc = (await app.inject('/openapi.json')).json();
    expect(doc.paths['/api/dns'].get.responses['403']).toBeDefined();
    expect(doc.paths['/api/providers'].get.responses['403']).toBeUndefined();
    expect(doc.paths['/api/challenge/status'].get.responses['403']).toBeUndefined();
    expect(doc.paths['/api/challenge/verify'].post.responses['403']).toBeDefined();
    expect(doc.info.description).toMatch(/challenge_required/);
    // The same document whether or not this deployment has protection on.
    const inactiveDoc = (await (await inactiveApp()).inject('/openapi.json')).json();
    expect(inactiveDoc.paths['/api/dns'].get.responses['403']).toBeDefined();
  });
});

describe('POST /api/challenge/verify (protection active)', () => {
  it('checks the token with siteverify and sets the session cookie', async () => {
    const { app } = await activeApp();
    const res = await verify(app, 'pass:one');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      verified: true,
      protection_active: true,
      expires_at: new Date(T0 + 900_000).toISOString(),
    });
    expect(res.headers['set-cookie']).toMatch(
      /^nd_session=[A-Za-z0-9._-]+; Max-Age=900; Path=\/; HttpOnly; SameSite=Lax$/,
    );
    expect(res.headers['cache-control']).toBe('no-store');

    const [call] = siteverify.calls();
    expect(siteverify.requests[0]?.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(call?.get('secret')).toBe(SECRET_KEY);
    expect(call?.get('response')).toBe('pass:one');
    expect(call?.get('remoteip')).toBe(CLIENT);
    expect(call?.get('idempotency_key')).toMatch(
      /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    );

    const cookie = cookieOf(res);
    expect((await probe(app, cookie)).statusCode).toBe(200);
    const status = (
      await app.inject({ url: '/api/challenge/status', remoteAddress: CLIENT, headers: { cookie } })
    ).json();
    expect(status.session).toEqual({
      required: true,
      valid: true,
      expires_at: new Date(T0 + 900_000).toISOString(),
    });
  });

  it('marks the cookie Secure when the request came over HTTPS through a trusted proxy, only then', async () => {
    const { app } = await activeApp({ trustProxy: ['10.0.0.0/8'] });
    const viaProxy = await verify(app, 'pass:proxied', {
      ip: '10.1.2.3',
      headers: { 'x-forwarded-for': '198.51.100.20', 'x-forwarded-proto': 'https' },
    });
    expect(viaProxy.headers['set-cookie']).toMatch(/; Secure$/);
    // The client address the proxy vouched for is what siteverify hears.
    expect(siteverify.calls()[0]?.get('remoteip')).toBe('198.51.100.20');

    const spoofed = await verify(app, 'pass:spoofed', {
      ip: '192.0.2.44',
      headers: { 'x-forwarded-proto': 'https' },
    });
    expect(spoofed.statusCode).toBe(200);
    expect(spoofed.headers['set-cookie']).not.toMatch(/Secure/);
  });

  it('accepts the session for 15 minutes and refuses it after', async () => {
    const { app, clock } = await activeApp();
    const cookie = cookieOf(await verify(app, 'pass:fifteen'));
    clock.now = T0 + 14 * 60_000;
    expect((await probe(app, cookie)).statusCode).toBe(200);
    clock.now = T0 + 900_000 - 1;
    expect((await probe(app, cookie)).statusCode).toBe(200);
    clock.now = T0 + 900_000;
    const expired = await probe(app, cookie);
    expect(expired.statusCode).toBe(403);
    expect(expired.json().code).toBe('challenge_required');
  });

  it('refuses a cookie altered by one byte, or signed with another secret', async () => {
    const { app } = await activeApp({ sessionSecret: 's'.repeat(40) });
    const cookie = cookieOf(await verify(app, 'pass:tamper'));
    expect((await probe(app, cookie)).statusCode).toBe(200);

    const [name, value = ''] = cookie.split('=');
    for (const at of [4, Math.floor(value.length / 2), value.length - 1]) {
      const ch = value[at] === 'A' ? 'B' : 'A';
      const altered = `${name}=${value.slice(0, at)}${ch}${value.slice(at + 1)}`;
      const res = await probe(app, altered);
      expect(res.statusCode, `byte ${at}`).toBe(403);
      expect(res.json().code).toBe('challenge_required');
    }

    const { app: other } = await activeApp({ sessionSecret: 'o'.repeat(40) });
    expect((await probe(other, cookie)).statusCode).toBe(403);
  });

  it('rejects a replayed token locally, without a second upstream call', async () => {
    const { app } = await activeApp();
    expect((await verify(app, 'pass:replay')).statusCode).toBe(200);
    expect(siteverify.count()).toBe(1);
    const again = await verify(app, 'pass:replay');
    expect(again.statusCode).toBe(403);
    expect(again.json()).toEqual({ error: expect.any(String), code: 'challenge_failed' });
    expect(again.headers['set-cookie']).toBeUndefined();
    expect(siteverify.count()).toBe(1);
  });

  it.each([
    ['invalid-input-response', 'invalid'],
    ['a hostname other than TURNSTILE_EXPECTED_HOSTNAME', 'other-host:1'],
  ])('answers 403 challenge_failed when siteverify says %s', async (_why, token) => {
    const { app } = await activeApp();
    const res = await verify(app, token);
    expect(res.statusCode).toBe(403);
    expect(res.json().code).toBe('challenge_failed');
    expect(res.headers['set-cookie']).toBeUndefined();
  });

  it('accepts any hostname when TURNSTILE_EXPECTED_HOSTNAME is unset', async () => {
    const { app } = await activeApp({ turnstileExpectedHostname: undefined });
    expect((await verify(app, 'other-host:2')).statusCode).toBe(200);
  });

  it('answers 403 for a token siteverify already consumed (timeout-or-duplicate)', async () => {
    const a = await activeApp();
    const b = await activeApp();
    // Two instances without a shared replay set: the second asks upstream, which refuses the duplicate.
    expect((await verify(a.app, 'pass:dup')).statusCode).toBe(200);
    const res = await verify(b.app, 'pass:dup');
    expect(res.statusCode).toBe(403);
    expect(res.json().error).toMatch(/timeout-or-duplicate/);
    expect(siteverify.count()).toBe(2);
  });

  it.each([
    ['HTTP 503', () => (siteverify.fault = '503'), 'pass:down-503'],
    ['an unparseable body', () => (siteverify.fault = 'garbage'), 'pass:down-garbage'],
    ['a reset connection', () => (siteverify.fault = 'reset'), 'pass:down-reset'],
    ['no answer (timeout)', () => (siteverify.fault = 'timeout'), 'pass:down-timeout'],
  ])('answers 503 when siteverify gives %s, and leaves the token usable', async (_why, breakIt, token) => {
    const { app } = await activeApp();
    breakIt();
    const res = await verify(app, token);
    expect(res.statusCode).toBe(503);
    expect(res.json()).toEqual({ error: expect.any(String), code: 'unavailable' });
    expect(res.headers['set-cookie']).toBeUndefined();

    siteverify.fault = 'none';
    expect((await verify(app, token)).statusCode).toBe(200);
  });

  it.each([
    ['HTTP 500', '500'],
    ['never answering', 'hang'],
    ['that our secret is wrong (invalid-input-secret)', 'bad-secret'],
  ])('answers 503 when siteverify reports %s, and records the failure', async (_why, token) => {
    const { app } = await activeApp();
    const res = await verify(app, token);
    expect(res.statusCode).toBe(503);
    expect(res.json().code).toBe('unavailable');
    const providers = (await app.inject({ url: '/api/providers', remoteAddress: CLIENT })).json().providers;
    const turnstile = providers.find((p: { id: string }) => p.id === 'turnstile');
    expect(turnstile.status.consecutive_failures).toBe(1);
    expect(turnstile.status.last_error).toEqual(expect.any(String));
  });

  it('lists Turnstile in /api/providers as the configured primary for "challenge", with its status', async () => {
    const { app } = await activeApp();
    await verify(app, 'pass:listed');
    const providers = (await app.inject({ url: '/api/providers', remoteAddress: CLIENT })).json().providers;
    const turnstile = providers.find((p: { id: string }) => p.id === 'turnstile');
    expect(turnstile).toMatchObject({
      configured: true,
      access: 'api_key',
      roles: { challenge: 'primary' },
      status: { last_success_at: new Date(T0).toISOString(), consecutive_failures: 0 },
    });
    expect(JSON.stringify(providers)).not.toContain(SECRET_KEY);
  });

  it.each([
    ['no token', {}],
    ['an empty token', { token: '' }],
    ['a token over 2048 characters', { token: 'x'.repeat(2049) }],
    ['a token that is not a string', { token: 42 }],
    ['an unknown field', { token: 'pass:x', extra: 1 }],
  ])('answers 400 for %s, without calling upstream', async (_why, payload) => {
    const { app } = await activeApp();
    const res = await app.inject({
      method: 'POST',
      url: '/api/challenge/verify',
      remoteAddress: CLIENT,
      payload,
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().code).toBe('bad_request');
    expect(siteverify.count()).toBe(0);
  });

  it('accepts a token of exactly 2048 characters', async () => {
    const { app } = await activeApp();
    expect((await verify(app, `pass:${'x'.repeat(2043)}`)).statusCode).toBe(200);
  });

  it('answers 400 for a body that is not JSON', async () => {
    const { app } = await activeApp();
    const res = await app.inject({
      method: 'POST',
      url: '/api/challenge/verify',
      remoteAddress: CLIENT,
      headers: { 'content-type': 'application/json' },
      payload: '{"token":',
    });
    expect(res.statusCode).toBe(400);
  });

  it('counts against the general limit (the 31st verify is a 429, not an upstream call)', async () => {
    const { app } = await activeApp();
    for (let i = 0; i < 30; i++) await verify(app, 'invalid');
    const calls = siteverify.count();
    const res = await verify(app, 'pass:late');
    expect(res.statusCode).toBe(429);
    expect(siteverify.count()).toBe(calls);
  });
});

describe('GET /api/challenge/status', () => {
  it('reports protection, session and the limit tiers, never cached', async () => {
    const { app } = await activeApp();
    const res = await app.inject({ url: '/api/challenge/status', remoteAddress: CLIENT });
    expect(res.statusCode).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.headers['x-service-cache']).toBeUndefined();
    const body = res.json();
    expect(body.protection).toEqual({
      active: true,
      provider: 'turnstile',
      site_key: SITE_KEY,
      script_url: 'https://challenges.cloudflare.com/turnstile/v0/api.js',
    });
    expect(body.session).toEqual({ required: true, valid: false });
    expect(body.tiers).toEqual([
      { name: 'general', limit: 30, window_seconds: 60 },
      { name: 'expensive', limit: 6, window_seconds: 60, endpoints: expect.any(Array) },
    ]);
    // Collected from the routes' `expensive` flag: the probe's, and no cheap route.
    const expensive: string[] = body.tiers[1].endpoints;
    expect(expensive).toContain('/api/probe/expensive');
    expect(expensive).not.toContain('/api/probe');
    expect(expensive).not.toContain('/api/challenge/status');
    // A fresh caller: this request is the only one counted.
    expect(body.rate_limit).toEqual({
      general: { limit: 30, remaining: 29, reset_seconds: 60 },
      expensive: { limit: 6, remaining: 6, reset_seconds: 0 },
    });
  });

  it("reads the caller's budget without consuming anything beyond its own request", async () => {
    const app = await inactiveApp();
    for (let i = 0; i < 3; i++) await probe(app);
    for (let i = 0; i < 2; i++) await app.inject({ url: '/api/probe/expensive', remoteAddress: CLIENT });
    const first = (await app.inject({ url: '/api/challenge/status', remoteAddress: CLIENT })).json();
    expect(first.rate_limit.general).toMatchObject({ limit: 30, remaining: 24 });
    expect(first.rate_limit.expensive).toMatchObject({ limit: 6, remaining: 4 });
    expect(first.rate_limit.expensive.reset_seconds).toBeGreaterThanOrEqual(1);
    expect(first.rate_limit.expensive.reset_seconds).toBeLessThanOrEqual(60);
    const second = (await app.inject({ url: '/api/challenge/status', remoteAddress: CLIENT })).json();
    expect(second.rate_limit.general.remaining).toBe(23);
    expect(second.rate_limit.expensive.remaining).toBe(4);
    // Another address has its own budget.
    const other = (await app.inject({ url: '/api/challenge/status', remoteAddress: '198.51.100.3' })).json();
    expect(other.rate_limit.general.remaining).toBe(29);
  });

  it('is itself rate limited', async () => {
    const app = await inactiveApp();
    for (let i = 0; i < 30; i++) {
      expect((await app.inject({ url: '/api/challenge/status', remoteAddress: CLIENT })).statusCode).toBe(
        200,
      );
    }
    const res = await app.inject({ url: '/api/challenge/status', remoteAddress: CLIENT });
    expect(res.statusCode).toBe(429);
  });
});
