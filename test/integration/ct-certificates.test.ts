/**
 * GET /api/certificates end to end: the app's real CT chain and adapters
 * against the fake crt.sh (test/fakes/crtsh.ts: one answer per search, its
 * result limit and error pages) and a fake Cert Spotter on loopback (real TLS
 * and HTTP), serving the fixtures in ../fixtures/ct/.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  CRTSH_RECOVERY_CONFLICT,
  CRTSH_STATEMENT_TIMEOUT,
  type FakeCrtsh,
  startCrtsh,
} from '../fakes/crtsh.js';
import { type FakeUpstream, fixture, startFakeUpstream } from '../fakes/https-upstream.js';
import { getTestPki } from '../fakes/test-ca.js';
import { buildTestApp } from '../helper.js';

const NOW = Date.parse('2025-06-01T00:00:00Z');
const KEY = 'cs_live_fixture_key';
const EXAMPLE = fixture('ct/crtsh-scenario-example.com.json') as unknown[];
const AT_CAP = fixture('ct/crtsh-scenario-big.test-at-cap.json') as unknown[];
const CS_PAGE1 = fixture('ct/certspotter-scenario-example.com-page1.json');
const CS_PAGE2 = fixture('ct/certspotter-scenario-example.com-page2.json');

let ca: string;
let crtsh: FakeCrtsh;
let certspotter: FakeUpstream;

beforeAll(async () => {
  ca = (await getTestPki()).caPem;
  [crtsh, certspotter] = await Promise.all([
    startCrtsh({ answers: { 'example.com': EXAMPLE, 'big.test': AT_CAP }, clock: () => NOW }),
    startFakeUpstream({
      routes: {
        '/v1/issuances': (req) => {
          // The fake checks the key the way the real API does: no key, no data.
          if (req.headers.authorization !== `Bearer ${KEY}`)
            return { status: 401, json: { code: 'unauthorized' } };
          const after = req.query.get('after');
          if (after === null) return { json: CS_PAGE1 };
          if (after === '7000000102') return { json: CS_PAGE2 };
          return { json: [] };
        },
      },
    }),
  ]);
});
afterAll(async () => {
  await Promise.all([crtsh?.close(), certspotter?.close()]);
});
beforeEach(() => {
  crtsh.reset();
  certspotter.reset();
});

const excludes = (value: string) => crtsh.searches(value).map((r) => r.query.get('exclude'));

function app(opts: { key?: boolean } = {}) {
  return buildTestApp({
    ca,
    clock: () => NOW,
    config: {
      crtshUrl: crtsh.url,
      certspotterUrl: certspotter.url,
      certspotterApiKey: opts.key ? KEY : undefined,
      // Nothing here resolves names; a dead resolver proves it.
      dnsResolvers: ['https://127.0.0.1:9/dns-query'],
    },
  });
}

describe('GET /api/certificates from crt.sh', () => {
  it('serves the merged, scoped, newest-first history of one search with attribution, cached one hour', async () => {
    const a = await app();
    const res = await a.inject('/api/certificates?domain=Example.COM.');
    expect(res.statusCode).toBe(200);
    expect(res.headers['x-service-cache']).toBe('MISS');
    expect(res.headers['cache-control']).toBe('public, max-age=3600');
    const body = res.json();
    expect(body).toMatchObject({
      domain: 'example.com',
      // 12 from the real capture, the scenario's precert/cert pair as one, and one more.
      total: 14,
      truncated: false,
      expired_excluded: false,
      gaps: [],
      source: 'crt.sh',
      source_id: 'crtsh',
      providers_tried: [{ id: 'crtsh', name: 'crt.sh', status: 'ok' }],
    });
    expect(body.issuances.map((i: { id: string }) => i.id).slice(0, 4)).toEqual([
      '15000000001',
      '14900000000',
      '8506962125',
      '8396709327',
    ]);
    expect(body.issuances[0]).toEqual({
      id: '15000000001',
      source_id: 'crtsh',
      serial: expect.stringMatching(/^[0-9a-f]+$/),
      issuer: { name: 'R3', organization: "Let's Encrypt" },
      common_name: 'api.example.com',
      dns_names: ['*.api.example.com', 'api.example.com'],
      not_before: '2025-05-20T08:00:00Z',
      not_after: '2025-08-18T07:59:59Z',
      entry_timestamp: '2025-05-20T09:00:00.500Z',
      expired: false,
    });
    // Emails, non-LDH names and upper case are cleaned; the IDN is an A-label; expiry is against the clock.
    expect(body.issuances[1]).toMatchObject({
      dns_names: ['shop.example.com', 'xn--bcher-kva.example.com'],
      expired: true,
    });
    expect(body.issuances[2]).toMatchObject({ id: '8506962125', expired: false });
    // crt.sh id 8913351873 is merged with its precertificate 8396709327.
    expect(body.issuances[3].dns_names).toEqual(['example.com', 'www.example.com', 'www.example.org']);
    expect(body.issuances.some((i: { id: string }) => i.id === '8913351873')).toBe(false);
    const text = res.body;
    expect(text).not.toContain('evil.net');
    expect(text).not.toContain('@');
    expect(text).not.toContain('jivesoftware');

    // One search, once; the second request is served from the cache.
    expect(crtsh.count()).toBe(1);
    expect(crtsh.requests[0]?.query.get('q')).toBe('example.com');
    const again = await a.inject('/api/certificates?domain=example.com');
    expect(again.headers['x-service-cache']).toBe('HIT');
    expect(again.json()).toEqual(body);
    expect(crtsh.count()).toBe(1);
  });

  it('a genuinely empty history is a 200 with issuances: [] (and cached)', async () => {
    const a = await app();
    const res = await a.inject('/api/certificates?domain=nothing.test');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ domain: 'nothing.test', total: 0, truncated: false, issuances: [] });
    expect((await a.inject('/api/certificates?domain=nothing.test')).headers['x-service-cache']).toBe('HIT');
    expect(crtsh.count()).toBe(1);
  });

  it('retries a crt.sh 502 once and answers', async () => {
    crtsh.failures['example.com'] = [{ status: 502, body: '<html>502 Bad Gateway</html>' }];
    const res = await (await app()).inject('/api/certificates?domain=example.com');
    expect(res.statusCode).toBe(200);
    expect(res.json().total).toBe(14);
    expect(crtsh.count()).toBe(2);
  });

  it('after a crt.sh statement timeout, asks again with exclude=expired and says expired history is missing', async () => {
    crtsh.failures['example.com'] = [CRTSH_STATEMENT_TIMEOUT];
    const res = await (await app()).inject('/api/certificates?domain=example.com');
    expect(res.statusCode).toBe(200);
    // Unexpired on 2025-06-01 and in scope: the api.example.com pair and 8506962125 (to 2033).
    expect(res.json()).toMatchObject({
      truncated: true,
      expired_excluded: true,
      total: 2,
      gaps: [{ reason: 'expired_excluded', detail: expect.stringMatching(/^crt\.sh ran out of time/) }],
      providers_tried: [{ id: 'crtsh', status: 'ok' }],
    });
    expect(excludes('example.com')).toEqual([null, 'expired']);
  });

  it("at crt.sh's 10 000-name limit, says the history is a partial, arbitrary subset", async () => {
    const res = await (await app()).inject('/api/certificates?domain=big.test');
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({
      truncated: true,
      expired_excluded: false,
      // 150 of the 160 issuances: what the 244 records returned cover.
      total: 150,
      gaps: [{ reason: 'result_cap', detail: expect.stringMatching(/10,000 matching names .*arbitrary/) }],
    });
    // Not the newest part: an issuance newer than others listed is missing (edge032, of 2025-04-30).
    const listed = new Set(body.issuances.map((i: { common_name: string }) => i.common_name));
    expect(listed.has('edge031.big.test') && listed.has('edge033.big.test')).toBe(true);
    expect(listed.has('edge032.big.test')).toBe(false);
  });
});

describe('GET /api/certificates when crt.sh fails', () => {
  it('without a Cert Spotter key: 502 naming crt.sh only, not cached, so the next request asks again', async () => {
    crtsh.fault = '503';
    const a = await app();
    const res = await a.inject('/api/certificates?domain=example.com');
    expect(res.statusCode).toBe(502);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.headers['x-service-cache']).toBeUndefined();
    const body = res.json();
    expect(body.error).toEqual(expect.any(String));
    expect(body.providers_tried).toEqual([
      {
        id: 'crtsh',
        name: 'crt.sh',
        status: 'failed',
        error: expect.stringMatching(/^http_status: HTTP 503/),
      },
    ]);
    expect(certspotter.count()).toBe(0);
    // The one search and its one retry.
    expect(crtsh.count()).toBe(2);

    const second = await a.inject('/api/certificates?domain=example.com');
    expect(second.statusCode).toBe(502);
    expect(crtsh.count()).toBe(4);

    // And once crt.sh is back, the real history is served, not an empty one.
    crtsh.fault = 'none';
    const third = await a.inject('/api/certificates?domain=example.com');
    expect(third.statusCode).toBe(200);
    expect(third.json().total).toBe(14);
  });

  it("names crt.sh's database error, retried once as it is, not with exclude=expired", async () => {
    crtsh.failures['example.com'] = [CRTSH_RECOVERY_CONFLICT, CRTSH_RECOVERY_CONFLICT];
    const res = await (await app()).inject('/api/certificates?domain=example.com');
    expect(res.statusCode).toBe(502);
    expect(res.json().providers_tried).toEqual([
      {
        id: 'crtsh',
        name: 'crt.sh',
        status: 'failed',
        error: expect.stringMatching(
          /^upstream_error: crt\.sh's database failed \(HTTP 503 from [^)]+\): FATAL: terminating connection due to conflict with recovery \(SQLSTATE 40001\)$/,
        ),
      },
    ]);
    expect(excludes('example.com')).toEqual([null, null]);
  });

  it('with a key: Cert Spotter answers, authenticated and paged with `after`, and the expired history is missing', async () => {
    crtsh.fault = '503';
    const res = await (await app({ key: true })).inject('/api/certificates?domain=example.com');
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({
      domain: 'example.com',
      total: 3,
      truncated: true,
      expired_excluded: true,
      gaps: [
        {
          reason: 'unexpired_only',
          detail:
            'crt.sh failed (see providers_tried), so the fallback answered. Cert Spotter lists unexpired ' +
            'certificates only: expired history is missing.',
        },
      ],
      source: 'Cert Spotter (SSLMate)',
      source_id: 'certspotter',
      providers_tried: [
        { id: 'crtsh', status: 'failed', error: expect.stringMatching(/^http_status/) },
        { id: 'certspotter', name: 'Cert Spotter (SSLMate)', status: 'ok' },
      ],
    });
    expect(body.issuances.map((i: { id: string }) => i.id)).toEqual([
      '7000000203',
      '7000000102',
      '7000000101',
    ]);
    expect(body.issuances[0]).toEqual({
      id: '7000000203',
      source_id: 'certspotter',
      serial: null,
      issuer: { name: 'DigiCert Global G2 TLS RSA SHA256 2020 CA1', organization: 'DigiCert Inc' },
      common_name: null,
      dns_names: ['mail.example.com'],
      not_before: '2025-05-15T00:00:00Z',
      not_after: '2025-08-13T00:00:00Z',
      expired: false,
      revoked: true,
    });
    expect(certspotter.requests.map((r) => r.headers.authorization)).toEqual([
      `Bearer ${KEY}`,
      `Bearer ${KEY}`,
      `Bearer ${KEY}`,
    ]);
    expect(certspotter.requests.map((r) => r.query.get('after'))).toEqual([null, '7000000102', '7000000203']);
    expect(certspotter.requests[0]?.query.getAll('expand')).toEqual(['dns_names', 'issuer']);
    expect(certspotter.requests[0]?.query.get('include_subdomains')).toBe('true');
  });

  it('issue 29: the fallback’s answer is cached 5 minutes, not the hour: then crt.sh is asked again', async () => {
    crtsh.fault = '503';
    let now = NOW;
    const a = await buildTestApp({
      ca,
      clock: () => now,
      config: { crtshUrl: crtsh.url, certspotterUrl: certspotter.url, certspotterApiKey: KEY },
    });
    const fallback = await a.inject('/api/certificates?domain=example.com');
    expect(fallback.json().source_id).toBe('certspotter');
    expect(fallback.headers['cache-control']).toBe('public, max-age=300');
    now += 299_000;
    const hit = await a.inject('/api/certificates?domain=example.com');
    expect(hit.headers['x-service-cache']).toBe('HIT');
    expect(hit.headers['cache-control']).toBe('public, max-age=1');
    crtsh.fault = 'none';
    now += 2_000;
    const again = await a.inject('/api/certificates?domain=example.com');
    expect(again.headers['x-service-cache']).toBe('MISS');
    expect(again.json().source_id).toBe('crtsh');
    expect(again.headers['cache-control']).toBe('public, max-age=3600');
  });

  it('with a key and both failing: 502 naming both, and nothing cached', async () => {
    crtsh.fault = '503';
    certspotter.fault = '429';
    const a = await app({ key: true });
    const res = await a.inject('/api/certificates?domain=example.com');
    expect(res.statusCode).toBe(502);
    expect(res.json().providers_tried).toEqual([
      expect.objectContaining({ id: 'crtsh', status: 'failed' }),
      expect.objectContaining({
        id: 'certspotter',
        status: 'failed',
        error: expect.stringMatching(/^rate_limited/),
      }),
    ]);
    await a.inject('/api/certificates?domain=example.com');
    expect(certspotter.count()).toBe(2);
  });
});

describe('GET /api/certificates input', () => {
  it.each([
    ['missing', ''],
    ['empty', '?domain='],
    ['not a name', '?domain=exa%20mple.com'],
    ['a bare TLD', '?domain=com'],
    ['an IP address', '?domain=192.0.2.1'],
  ])('400 for %s domain, before any upstream request', async (_why, query) => {
    const res = await (await app()).inject(`/api/certificates${query}`);
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toMatch(/domain/);
    expect(crtsh.count()).toBe(0);
  });
});

describe('OpenAPI', () => {
  it('documents both endpoints with what CT can and cannot tell', async () => {
    const doc = (await (await app()).inject('/openapi.json')).json();
    const certificates = doc.paths['/api/certificates'].get;
    expect(certificates.description).toMatch(/does not prove that the certificate is served now/);
    expect(Object.keys(certificates.responses)).toEqual(expect.arrayContaining(['200', '400', '429', '502']));
    const subdomains = doc.paths['/api/subdomains'].get;
    expect(subdomains.description).toMatch(/not a port scan and not a complete inventory/);
    expect(Object.keys(subdomains.responses)).toEqual(expect.arrayContaining(['200', '400', '429', '502']));
  });

  it('lists crt.sh as the CT primary and Cert Spotter as the fallback', async () => {
    const { providers } = (await (await app()).inject('/api/providers')).json() as {
      providers: { id: string; roles: Record<string, string>; configured: boolean }[];
    };
    expect(providers.find((p) => p.id === 'crtsh')).toMatchObject({
      roles: { ct: 'primary' },
      configured: true,
    });
    expect(providers.find((p) => p.id === 'certspotter')).toMatchObject({
      roles: { ct: 'fallback' },
      configured: false,
    });
  });
});
