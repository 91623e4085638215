/**
 * POST /api/global-dns end to end: the real app (validation, limits, chain,
 * cache, Globalping adapter over TLS) against a fake Globalping on loopback
 * serving the composed scenario fixtures. Polling here runs at the production
 * pace (500 ms before a poll), so each measured scenario finishes on its first
 * poll; the pacing rules themselves are pinned in global-dns-globalping.test.ts
 * with virtual time.
 */
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Config } from '../../src/config/index.js';
import { type FakeGlobalping, startGlobalping } from '../fakes/globalping.js';
import { type FakeReply, fixture } from '../fakes/https-upstream.js';
import { getTestPki } from '../fakes/test-ca.js';
import { buildTestApp } from '../helper.js';

const COUNTRIES = ['US', 'BR', 'GB', 'DE', 'ZA', 'IN', 'SG', 'JP', 'AU', 'CA'];
const scenario = (name: string): FakeReply => ({ json: fixture(`globalping/scenarios/${name}`) });
const CREATED: FakeReply = { status: 202, json: { id: 'gdApiTest0000001', probesCount: 10 } };

let gp: FakeGlobalping;
let ca: string;

beforeAll(async () => {
  ca = (await getTestPki()).caPem;
  gp = await startGlobalping({ createReply: CREATED });
});
afterAll(async () => {
  await gp.close();
});
beforeEach(() => {
  gp.reset();
});

function app(config: Partial<Config> = {}) {
  return buildTestApp({ ca, config: { globalpingUrl: gp.url, ...config } });
}

function post(a: FastifyInstance, body: unknown, headers: Record<string, string> = {}) {
  return a.inject({
    method: 'POST',
    url: '/api/global-dns',
    headers: { 'content-type': 'application/json', ...headers },
    payload: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

const createdBody = (i = 0) => JSON.parse(gp.creations()[i]?.body.toString() ?? 'null');

describe('POST /api/global-dns: measuring', () => {
  it('answers a finished measurement: ten results in order, a consistent summary, attribution, no-store', async () => {
    const res = await post(await app(), { target: 'cdn.jsdelivr.net', type: 'A' });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({
      target: 'cdn.jsdelivr.net',
      type: 'A',
      measurement_id: 'gdApiTest0000001',
      reused: false,
      complete: true,
      countries_requested: COUNTRIES,
      source: 'Globalping',
      source_id: 'globalping',
      providers_tried: [{ id: 'globalping', name: 'Globalping', status: 'ok' }],
      summary: {
        measured: 10,
        answered: 10,
        unmeasured: [],
        distinct_answer_sets: 1,
        consistent: true,
        answer_sets: [
          {
            rcode: 'NOERROR',
            values: ['151.101.1.229', '151.101.129.229', '151.101.193.229', '151.101.65.229'],
            countries: COUNTRIES,
          },
        ],
      },
    });
    expect(Date.parse(body.measured_at)).not.toBeNaN();
    expect(body.results.map((r: { country: string }) => r.country)).toEqual(COUNTRIES);
    expect(body.results[0]).toEqual({
      country: 'US',
      city: 'Ashburn',
      continent: 'NA',
      asn: 14618,
      network: 'Amazon.com, Inc.',
      resolver: '8.8.8.8',
      status: 'finished',
      rcode: 'NOERROR',
      answers: [
        { name: 'cdn.jsdelivr.net', type: 'CNAME', ttl: 180, value: 'jsdelivr.map.fastly.net' },
        { name: 'jsdelivr.map.fastly.net', type: 'A', ttl: 23, value: '151.101.1.229' },
        { name: 'jsdelivr.map.fastly.net', type: 'A', ttl: 23, value: '151.101.65.229' },
        { name: 'jsdelivr.map.fastly.net', type: 'A', ttl: 23, value: '151.101.129.229' },
        { name: 'jsdelivr.map.fastly.net', type: 'A', ttl: 23, value: '151.101.193.229' },
      ],
      time_ms: 20,
    });
    // A POST is never cached at the edge; the measurement went to the ten configured countries.
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.headers['x-service-cache']).toBeUndefined();
    expect(createdBody().locations).toEqual(COUNTRIES.map((country) => ({ country, limit: 1 })));
  });

  it('polls while in progress, then answers the finished measurement', async () => {
    gp.pollReplies = [scenario('ten-in-progress.json'), scenario('ten-finished-consistent.json')];
    const res = await post(await app(), { target: 'cdn.jsdelivr.net', type: 'A' });
    expect(res.json()).toMatchObject({ complete: true, summary: { answered: 10, consistent: true } });
    expect(gp.polls()).toHaveLength(2);
  });

  it('reports a country without a probe as no_probe (unmeasured), not as a failure', async () => {
    gp.pollReplies = [scenario('nine-finished-no-probe-za.json')];
    const res = await post(await app(), { target: 'cdn.jsdelivr.net', type: 'A' });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.results[4]).toMatchObject({ country: 'ZA', status: 'no_probe', city: null, answers: [] });
    expect(body.results[8]).toMatchObject({ country: 'AU', status: 'failed', rcode: null });
    expect(body.summary).toMatchObject({
      measured: 9,
      answered: 8,
      unmeasured: ['ZA'],
      distinct_answer_sets: 1,
      consistent: true,
    });
  });

  it('answers 200 with every country unmeasured when Globalping has no probe anywhere (422)', async () => {
    gp.createReply = { status: 422, json: fixture('globalping/scenarios/error-422-no-probes-found.json') };
    const res = await post(await app(), { target: 'cdn.jsdelivr.net', type: 'A' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({
      measurement_id: null,
      complete: true,
      summary: { measured: 0, answered: 0, unmeasured: COUNTRIES, consistent: false },
    });
    expect(res.json().results.every((r: { status: string }) => r.status === 'no_probe')).toBe(true);
  });

  it('shows an inconsistent answer: two countries see different A records', async () => {
    gp.pollReplies = [scenario('ten-finished-inconsistent.json')];
    const body = (await post(await app(), { target: 'cdn.jsdelivr.net', type: 'A' })).json();
    expect(body.summary).toMatchObject({
      measured: 10,
      answered: 10,
      distinct_answer_sets: 2,
      consistent: false,
    });
    expect(body.summary.answer_sets).toEqual([
      {
        rcode: 'NOERROR',
        values: ['151.101.1.229', '151.101.129.229', '151.101.193.229', '151.101.65.229'],
        countries: ['US', 'BR', 'GB', 'DE', 'ZA', 'JP', 'AU', 'CA'],
      },
      { rcode: 'NOERROR', values: ['104.16.85.20', '104.16.86.20'], countries: ['IN', 'SG'] },
    ]);
  });

  it('answers 502 with providers_tried when creation fails with 503, and caches nothing', async () => {
    const a = await app();
    gp.fault = '503';
    const failed = await post(a, { target: 'cdn.jsdelivr.net', type: 'A' });
    expect(failed.statusCode).toBe(502);
    expect(failed.headers['cache-control']).toBe('no-store');
    expect(failed.json()).toMatchObject({
      error: expect.any(String),
      code: 'upstream_failed',
      providers_tried: [
        {
          id: 'globalping',
          name: 'Globalping',
          status: 'failed',
          error: expect.stringMatching(/^http_status: HTTP 503/),
        },
      ],
    });
    // Not cached: the same question goes upstream again, and now succeeds.
    gp.fault = 'none';
    const retried = await post(a, { target: 'cdn.jsdelivr.net', type: 'A' });
    expect(retried.statusCode).toBe(200);
    expect(retried.json().reused).toBe(false);
    expect(gp.creations()).toHaveLength(2);
  });

  it("answers 503 with Retry-After at the reset while Globalping's hourly quota is spent, without asking it again", async () => {
    const a = await app();
    // Earlier measurements (this instance's or another's behind the same address) left 5 tests.
    gp.spend(245);
    const refused = await post(a, { target: 'cdn.jsdelivr.net', type: 'A' });
    expect(refused.statusCode).toBe(503);
    expect(refused.headers['cache-control']).toBe('no-store');
    const retryAfter = Number(refused.headers['retry-after']);
    expect(retryAfter).toBeGreaterThan(3500);
    expect(retryAfter).toBeLessThanOrEqual(3600);
    const body = refused.json();
    expect(body).toEqual({
      error: expect.stringMatching(
        /^global DNS measurements are paused until \d{4}-\d\d-\d\d \d\d:\d\d UTC: the measurement quota of this service is spent \(Globalping: 5 of 250 tests left this hour, a measurement needs 10; resets at \d{4}-\d\d-\d\d \d\d:\d\d UTC\)$/,
      ),
      code: 'unavailable',
      providers_tried: [
        {
          id: 'globalping',
          name: 'Globalping',
          status: 'failed',
          error: expect.stringMatching(
            /^rate_limited: Globalping refused the measurement \(rate_limit_exceeded: /,
          ),
        },
      ],
    });
    // The message says the minute (the one date format of the API's sentences); Retry-After the second.
    const said = /until (\d{4}-\d\d-\d\d) (\d\d:\d\d) UTC:/.exec(body.error);
    const resetAt = Date.parse(`${said?.[1]}T${said?.[2]}:00Z`);
    expect(Math.abs(resetAt - (Date.now() + retryAfter * 1000))).toBeLessThan(65_000);

    // Another question: answered at once, Globalping not asked.
    const again = await post(a, { target: 'example.com', type: 'MX' });
    expect(again.statusCode).toBe(503);
    expect(again.json().providers_tried[0].error).toMatch(
      /^rate_limited: hourly test quota spent .*; not asked$/,
    );
    expect(gp.requests).toHaveLength(1);

    const listed = (await a.inject('/api/providers'))
      .json()
      .providers.find((p: { id: string }) => p.id === 'globalping');
    expect(listed.quota).toEqual({
      limit: 250,
      remaining: 5,
      reset_at: expect.any(String),
      observed_at: expect.any(String),
    });
    // The listing keeps the instant to the second, the minute the message says.
    expect(listed.quota?.reset_at.slice(0, 16)).toBe(new Date(resetAt).toISOString().slice(0, 16));
  });

  it("a 429 without Globalping's limit headers (something in front of it) stays an ordinary 502", async () => {
    gp.createReply = {
      status: 429,
      json: fixture('globalping/scenarios/error-429-create-rate-limit-exceeded.json'),
    };
    const res = await post(await app(), { target: 'cdn.jsdelivr.net', type: 'A' });
    expect(res.statusCode).toBe(502);
    expect(res.json().providers_tried[0].error).toMatch(/^rate_limited: .*rate_limit_exceeded/);
  });

  it('accepts CAA and asks Globalping; while Globalping refuses that type, a 502 carries its reason', async () => {
    gp.createReply = { status: 400, json: fixture('globalping/scenarios/error-400-validation-caa.json') };
    const res = await post(await app(), { target: 'example.com', type: 'CAA' });
    expect(createdBody().measurementOptions).toEqual({ query: { type: 'CAA' } });
    expect(res.statusCode).toBe(502);
    expect(res.json().providers_tried[0].error).toMatch(/^upstream_error: .*HTTP 400: validation_error/);
  });

  it('reuses an identical measurement within 60 s (reused: true), never re-creating it upstream', async () => {
    const a = await app();
    const first = (await post(a, { target: 'cdn.jsdelivr.net', type: 'A' })).json();
    const again = (await post(a, { target: 'CDN.jsdelivr.net.', type: 'a' })).json();
    expect(first.reused).toBe(false);
    expect(again).toMatchObject({
      reused: true,
      measurement_id: first.measurement_id,
      measured_at: first.measured_at,
    });
    expect(gp.creations()).toHaveLength(1);
    // Concurrent identical requests for another question share one new measurement.
    const both = await Promise.all([
      post(a, { target: 'cdn.jsdelivr.net', type: 'AAAA' }),
      post(a, { target: 'cdn.jsdelivr.net', type: 'AAAA' }),
    ]);
    expect(both.map((r) => r.json().reused).sort()).toEqual([false, true]);
    expect(gp.creations()).toHaveLength(2);
  });

  it('sends the question normalized: IDN as A-labels, type upper case', async () => {
    await post(await app(), { target: 'Bücher.Example.', type: 'mx' });
    expect(createdBody()).toMatchObject({
      target: 'xn--bcher-kva.example',
      measurementOptions: { query: { type: 'MX' } },
    });
  });

  it('sends GLOBALPING_TOKEN as a Bearer token, and no Authorization without one', async () => {
    await post(await app({ globalpingToken: 'secret-gp-token' }), { target: 'cdn.jsdelivr.net', type: 'A' });
    expect(gp.requests.map((r) => r.headers.authorization)).toEqual([
      'Bearer secret-gp-token',
      'Bearer secret-gp-token',
    ]);
    gp.reset();
    await post(await app(), { target: 'cdn.jsdelivr.net', type: 'A' });
    expect(gp.requests.some((r) => r.headers.authorization !== undefined)).toBe(false);
  });

  it('is an expensive measurement: the 7th measurement in a minute answers 429; a reused answer costs none', async () => {
    const a = await app();
    for (let i = 1; i <= 6; i++) {
      const res = await post(a, { target: 'cdn.jsdelivr.net', type: 'A' });
      expect(res.statusCode, `call ${i}`).toBe(200);
      expect(res.headers['ratelimit-policy']).toContain('"expensive";q=6;w=60');
    }
    // Reuse kept the upstream at one measurement for all of them, and only that one was paid (issue 31).
    expect(gp.creations()).toHaveLength(1);
    const types = ['AAAA', 'MX', 'TXT', 'NS', 'SOA'];
    for (const type of types)
      expect((await post(a, { target: 'cdn.jsdelivr.net', type })).statusCode, type).toBe(200);
    const seventh = await post(a, { target: 'cdn.jsdelivr.net', type: 'CAA' });
    expect(seventh.statusCode).toBe(429);
    expect(Number(seventh.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(seventh.json()).toMatchObject({ error: expect.stringContaining('expensive') });
    // Refused before it measured.
    expect(gp.creations()).toHaveLength(1 + types.length);
  });
});

describe('POST /api/global-dns: input', () => {
  // A generous expensive budget, so that each row reaches validation rather than the limit.
  const roomy = () =>
    app({
      rateLimitExpensive: { points: 1_000, seconds: 60 },
      rateLimitGeneral: { points: 1_000, seconds: 60 },
    });
  const json = { 'content-type': 'application/json' };

  const rows: [string, unknown, RegExp][] = [
    ['missing target', { type: 'A' }, /^target is required$/],
    ['missing type', { target: 'example.com' }, /^type is required$/],
    [
      'SRV',
      { target: '_sip._tcp.example.com', type: 'SRV' },
      /^type must be one of A, AAAA, CNAME, MX, TXT, NS, SOA, CAA$/,
    ],
    ['PTR', { target: '192.0.2.1', type: 'PTR' }, /^type must be one of /],
    ['an unknown type', { target: 'example.com', type: 'HINFO' }, /^type must be one of /],
    [
      'an unknown field',
      { target: 'example.com', type: 'A', resolver: '8.8.8.8' },
      /^resolver is not an accepted field$/,
    ],
    ['a non-string target', { target: ['example.com'], type: 'A' }, /^target must be of type string$/],
    ['an empty target', { target: '', type: 'A' }, /^target must not be empty$/],
    ['an IP address target', { target: '192.0.2.1', type: 'A' }, /^target must be a domain name/],
    ['an invalid domain', { target: 'exa mple.com', type: 'A' }, /^target /],
    ['a JSON array', [], /^body must be a JSON object$/],
    ['malformed JSON', '{"target": "example.com",', /^body is not valid JSON$/],
  ];

  it('400 for each bad body, naming what is wrong, without reaching Globalping', async () => {
    const a = await roomy();
    for (const [name, body, error] of rows) {
      const res = await post(a, body);
      expect(res.statusCode, name).toBe(400);
      expect(res.json(), name).toMatchObject({ code: 'bad_request', error: expect.stringMatching(error) });
    }
    expect(gp.requests).toHaveLength(0);
  });

  it('400 for a body that is not JSON, or over 16 KiB', async () => {
    const a = await roomy();
    const form = await post(a, 'target=example.com&type=A', {
      'content-type': 'application/x-www-form-urlencoded',
    });
    expect(form.statusCode).toBe(400);
    expect(form.json().error).toBe('Content-Type must be application/json');
    const text = await post(a, '{"target":"example.com","type":"A"}', { 'content-type': 'text/plain' });
    expect(text.statusCode).toBe(400);
    const huge = await post(a, { target: 'example.com', type: 'A', pad: 'x'.repeat(17_000) }, json);
    expect(huge.statusCode).toBe(400);
    expect(huge.json().error).toMatch(/at most 16384 bytes/);
    expect(gp.requests).toHaveLength(0);
  });

  it('only POST is served', async () => {
    const res = await (await roomy()).inject('/api/global-dns?target=example.com&type=A');
    expect(res.statusCode).toBe(405);
    expect(res.headers.allow).toBe('POST');
  });
});

describe('POST /api/global-dns: documentation and inventory', () => {
  it('is in /openapi.json with its body, its responses and the ten countries explained', async () => {
    const doc = (await (await app()).inject('/openapi.json')).json();
    const op = doc.paths['/api/global-dns'].post;
    expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(['200', '400', '429', '502', '503']));
    expect(op.description).toMatch(/503, not 429, because the quota is the service's/);
    expect(op.description).toContain('US, BR, GB, DE, ZA, IN, SG, JP, AU, CA');
    expect(op.description).toMatch(/every inhabited continent/);
    const body = op.requestBody.content['application/json'].schema;
    expect(body.required.sort()).toEqual(['target', 'type']);
    expect(body.additionalProperties).toBe(false);
    const result = op.responses['200'].content['application/json'].schema;
    expect(Object.keys(result.properties)).toEqual(
      expect.arrayContaining([
        'measurement_id',
        'complete',
        'countries_requested',
        'results',
        'summary',
        'reused',
      ]),
    );
  });

  it('lists Globalping as the primary global-dns provider in /api/providers', async () => {
    const a = await app();
    const { providers } = (await a.inject('/api/providers')).json();
    const globalping = providers.find((p: { id: string }) => p.id === 'globalping');
    expect(globalping).toMatchObject({ roles: { 'global-dns': 'primary' }, endpoint: gp.url });
    await post(a, { target: 'cdn.jsdelivr.net', type: 'A' });
    const after = (await a.inject('/api/providers'))
      .json()
      .providers.find((p: { id: string }) => p.id === 'globalping');
    expect(after.status.last_success_at).not.toBeNull();
    // Globalping's own account of the quota, from the create's headers: one measurement spent ten tests.
    expect(globalping.quota).toBeUndefined();
    expect(after.quota).toMatchObject({ limit: 250, remaining: 240 });
    expect(Date.parse(after.quota.reset_at) - Date.now()).toBeGreaterThan(3_500_000);
  });
});
