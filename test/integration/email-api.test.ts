/**
 * GET /api/email-security over HTTP: input errors, the 502 when every
 * resolver fails, cache headers, the expensive rate limit and the OpenAPI
 * document. The DNS is the fake server over DoH with the fixture zones.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type FakeDnsServer, startFakeDnsServer } from '../fakes/dns-server.js';
import { getTestPki } from '../fakes/test-ca.js';
import { scenario, sharedZones } from '../fixtures/email/zones.js';
import { buildTestApp } from '../helper.js';

let dns: FakeDnsServer;
let ca: string;

beforeAll(async () => {
  ca = (await getTestPki()).caPem;
  dns = await startFakeDnsServer({
    zones: [...sharedZones(), scenario('mx-only').zone, scenario('dmarc-none-softfail').zone],
  });
});
afterAll(async () => {
  await dns?.close();
});
beforeEach(() => dns.reset());

const unlimited = {
  rateLimitExpensive: { points: 1000, seconds: 60 },
  rateLimitGeneral: { points: 1000, seconds: 60 },
};
const app = (config: Record<string, unknown> = unlimited) =>
  buildTestApp({
    ca,
    dnsOptions: { udpRetryAfterMs: 100 },
    config: { dnsResolvers: [dns.doh], providerTimeoutMs: 5_000, ...config },
  });

describe('GET /api/email-security input', () => {
  it.each([
    ['', 'domain is required'],
    ['domain=', 'domain must not be empty'],
    ['domain=foo..bar', 'domain has an empty label'],
    ['domain=-bad.example', 'domain has an invalid label "-bad" (letters, digits and inner hyphens only)'],
    [
      'domain=example.com&selector=bad%20one',
      'selector "bad one" may only contain letters, digits, ".", "_" and "-", with no empty label',
    ],
    ['domain=example.com&selector=a,b,c,d,e,f', 'selector lists more than 5 selectors'],
    [`domain=example.com&selector=${'x'.repeat(64)}`, 'selector needs 1–63 characters per selector'],
  ])('%s → 400 %s', async (query, error) => {
    const res = await (await app()).inject(`/api/email-security?${query}`);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ error });
    expect(res.headers['cache-control']).toBe('no-store');
    expect(dns.queries).toEqual([]);
  });
});

describe('GET /api/email-security upstream failure', () => {
  it('every resolver failing is a 502 with providers_tried, not cached', async () => {
    dns.set({ rcode: 'SERVFAIL' });
    const a = await app();
    const res = await a.inject('/api/email-security?domain=mx-only.email.test');
    expect(res.statusCode).toBe(502);
    expect(res.json()).toMatchObject({
      error: expect.stringContaining('every provider failed'),
      providers_tried: [{ status: 'failed', error: expect.stringContaining('SERVFAIL') }],
    });
    expect(res.headers['cache-control']).toBe('no-store');
    dns.reset();
    const recovered = await a.inject('/api/email-security?domain=mx-only.email.test');
    expect(recovered.statusCode).toBe(200);
    expect(recovered.headers['x-service-cache']).toBe('MISS');
  });
});

describe('GET /api/email-security caching', () => {
  it('caches the whole answer 300 s: MISS, then HIT without a DNS question', async () => {
    const a = await app();
    const first = await a.inject('/api/email-security?domain=monitor.email.test');
    expect(first.statusCode).toBe(200);
    expect(first.headers['x-service-cache']).toBe('MISS');
    expect(first.headers['cache-control']).toBe('public, max-age=300');
    const asked = dns.queries.length;
    expect(asked).toBeGreaterThan(30);
    const second = await a.inject('/api/email-security?domain=Monitor.Email.Test.');
    expect(second.headers['x-service-cache']).toBe('HIT');
    expect(second.json()).toEqual(first.json());
    expect(dns.queries.length).toBe(asked);
  });
});

describe('GET /api/email-security selectors', () => {
  it('issue 29: one set of selectors in any order or case is one cache entry, tried in alphabetical order', async () => {
    const a = await app();
    const first = await a.inject('/api/email-security?domain=monitor.email.test&selector=zz1,aa2');
    expect(first.headers['x-service-cache']).toBe('MISS');
    expect(first.json().tested_dkim_selectors.slice(0, 3)).toEqual(['aa2', 'zz1', 'google']);
    const asked = dns.queries.length;
    for (const spelling of ['aa2,zz1', 'ZZ1,aa2,zz1', 'aa2, Zz1']) {
      const again = await a.inject(`/api/email-security?domain=monitor.email.test&selector=${spelling}`);
      expect(again.headers['x-service-cache'], spelling).toBe('HIT');
      expect(again.json(), spelling).toEqual(first.json());
    }
    expect(dns.queries.length).toBe(asked);
  });
});

describe('GET /api/email-security rate limit', () => {
  it('is an expensive request: the 7th measurement in a minute is a 429 with Retry-After', async () => {
    const a = await app({ rateLimitGeneral: { points: 1000, seconds: 60 } });
    const statuses: number[] = [];
    for (let i = 0; i < 7; i++)
      statuses.push((await a.inject(`/api/email-security?domain=m${i}.mx-only.email.test`)).statusCode);
    expect(statuses).toEqual([200, 200, 200, 200, 200, 200, 429]);
    // A cached answer measures nothing: it still passes (issue 31).
    expect((await a.inject('/api/email-security?domain=m0.mx-only.email.test')).statusCode).toBe(200);
    const limited = await a.inject('/api/email-security?domain=m7.mx-only.email.test');
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expect(limited.json()).toMatchObject({ error: expect.stringContaining('expensive') });
  });
});

describe('OpenAPI', () => {
  it('documents the endpoint with the full response schema', async () => {
    const doc = (await (await app()).inject('/openapi.json')).json();
    const op = doc.paths['/api/email-security'].get;
    expect(
      op.parameters.map((p: { name: string; required?: boolean }) => [p.name, p.required ?? false]),
    ).toEqual([
      ['domain', true],
      ['selector', false],
    ]);
    const schema = op.responses['200'].content['application/json'].schema;
    expect(schema.required).toEqual(
      expect.arrayContaining([
        'domain',
        'score',
        'grade',
        'scoring',
        'checks',
        'details',
        'mx',
        'tested_dkim_selectors',
        'recommendations',
        'source',
        'source_id',
        'providers_tried',
      ]),
    );
    expect(schema.properties.checks.items.properties.id.enum).toEqual([
      'mx',
      'spf',
      'dmarc',
      'dkim',
      'mta_sts',
      'tls_rpt',
      'bimi',
      'dnssec',
    ]);
    expect(Object.keys(schema.properties.details.properties)).toEqual([
      'mx',
      'spf',
      'dmarc',
      'dkim',
      'mta_sts',
      'tls_rpt',
      'bimi',
      'dnssec',
    ]);
    // Regression: no anyOf anywhere in the response schema. fast-json-stringify compiles an Ajv validator per
    // anyOf branch on first use, which cost ~0.6 s on the first email-security response of every process.
    expect(JSON.stringify(schema)).not.toContain('anyOf');
    expect(schema.properties.details.properties.spf.properties.effective_all.type).toEqual([
      'string',
      'null',
    ]);
    expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(['200', '400', '429', '502']));
  });
});
