/**
 * GET /api/inspect end to end: the real DNS client against the fake DNS
 * server, real HTTP/1.1 and HTTP/2 connections to fake targets on
 * 127.0.0.x:80/443 with test-CA certificates, real TLS evidence, and RIPEstat
 * as a fake HTTPS upstream serving its real sample answers. Team Cymru is
 * answered by the fake DNS server, through the same DNS client production uses.
 *
 * Every refusal is also asserted from the target's side: the refused
 * destination saw no connection at all.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeDnsServer, startFakeDnsServer } from '../fakes/dns-server.js';
import { type FakeRecord, testZone } from '../fakes/dns-zones.js';
import {
  type HttpTarget,
  startHttpTarget,
  type TargetReply,
  type TargetRequest,
} from '../fakes/http-targets.js';
import { type FakeUpstream, startFakeUpstream } from '../fakes/https-upstream.js';
import { getTestPki } from '../fakes/test-ca.js';
import { buildTestApp } from '../helper.js';
import { hasShared, sharedFixture } from '../shared-data.js';

/** Outside the allowed 127.0.0.0/24: a name pointing here must be refused without a connection. */
const CANARY = '127.8.4.1';
/** The chain deadline in these tests; the slow target answers long after it. */
const TIMEOUT_MS = 1_500;

/** An http and an https target on one address, as one site. */
interface Site {
  address: string;
  http: HttpTarget;
  https: HttpTarget;
  close(): Promise<void>;
}

type Handler = (req: TargetRequest) => TargetReply;
/** Host → path → reply, per scheme; unknown hosts and paths answer 200 "ok". */
type Scenarios = Record<
  string,
  { http?: Record<string, TargetReply | Handler>; https?: Record<string, TargetReply | Handler> }
>;

const BEST_HEADERS = {
  'strict-transport-security': 'max-age=63072000; includeSubDomains; preload',
  'content-security-policy': "default-src 'self'; object-src 'none'; base-uri 'self'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'strict-origin-when-cross-origin',
  'permissions-policy': 'camera=(), microphone=(), geolocation=()',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
  'alt-svc': 'h3=":443"; ma=86400',
  server: 'fake-target',
  'set-cookie': 'session=s3cret; Secure; HttpOnly',
  'x-internal-token': 'do-not-copy',
};

const scenarios: Scenarios = {
  'good.inspect.test': {
    http: { '/': { status: 301, redirect: 'https://good.inspect.test/' } },
    https: {
      '/': {
        status: 302,
        redirect: '/home',
        headers: { 'strict-transport-security': BEST_HEADERS['strict-transport-security'] },
      },
      '/home': { headers: BEST_HEADERS, body: '<h1>home</h1>' },
    },
  },
  'weak.inspect.test': {
    http: { '/': { body: 'plain' } },
    https: {
      '/': {
        headers: {
          'content-security-policy': "script-src 'self' 'unsafe-inline' 'unsafe-eval'",
          'x-frame-options': 'ALLOW-FROM https://other.example',
          'referrer-policy': 'unsafe-url',
          'strict-transport-security': 'max-age=0',
        },
      },
    },
  },
  'slow.inspect.test': {
    http: { '/': { body: 'quick', headers: { 'x-content-type-options': 'nosniff' } } },
    // Far past the deadline, so a bound that holds on a loaded machine still tells the two apart.
    https: { '/': { delayMs: 60_000, body: 'late' } },
  },
  'huge.inspect.test': {
    http: { '/': { status: 301, redirect: 'https://huge.inspect.test/' } },
    https: { '/': { streamBytes: 50 * 1024 * 1024 } },
  },
  'evilredirect.inspect.test': {
    http: { '/': { status: 301, redirect: 'https://evilredirect.inspect.test/' } },
    https: { '/': { status: 302, redirect: 'https://evil.inspect.test/' } },
  },
};

function router(scheme: 'http' | 'https'): Handler {
  return (req) => {
    const host = (req.host ?? '').replace(/:\d+$/, '').toLowerCase();
    const route = scenarios[host]?.[scheme]?.[req.path];
    if (!route) return { body: 'ok' };
    return typeof route === 'function' ? route(req) : route;
  };
}

async function startSite(names: string[], fixedAddress?: string): Promise<Site> {
  const pki = await getTestPki();
  const candidates = fixedAddress
    ? [fixedAddress]
    : Array.from({ length: 250 }, (_, i) => `127.0.0.${2 + ((process.pid * 7 + 97 + i) % 253)}`);
  let lastError: unknown;
  for (const address of candidates) {
    let https: HttpTarget | undefined;
    try {
      const cert = await pki.issue({ dnsNames: names, ips: [address] });
      https = await startHttpTarget({
        protocol: 'https',
        address,
        h2: true,
        cert,
        fallback: router('https'),
      });
      const http = await startHttpTarget({ address, fallback: router('http') });
      const site = https;
      return {
        address,
        http,
        https: site,
        close: async () => void (await Promise.all([http.close(), site.close()])),
      };
    } catch (err) {
      lastError = err;
      await https?.close();
    }
  }
  throw lastError;
}

function reverseV4(address: string): string {
  return address.split('.').reverse().join('.');
}

/** RIPEstat routing-status for a prefix: the real sample's envelope, sightings and visibility, with
 * the prefix-only fields (origins, less/more specifics) the data call documents for a prefix resource. */
function routingStatusForPrefix(): unknown {
  const sample = sharedFixture('ripestat/routing-status.json') as { data: Record<string, unknown> };
  const { announced_space: _a, observed_neighbours: _o, ...data } = sample.data;
  return {
    ...sample,
    data: {
      ...data,
      resource: '193.0.0.0/21',
      origins: [{ origin: 3333, route_objects: ['RIPE'] }],
      less_specifics: [],
      more_specifics: [{ prefix: '193.0.6.0/24', origin: '3333' }],
    },
  };
}

let dns: FakeDnsServer;
let ripestat: FakeUpstream;
let site: Site;
let plain: HttpTarget;
let canary: Site;
let caPem: string;

beforeAll(async () => {
  caPem = (await getTestPki()).caPem;
  site = await startSite([...Object.keys(scenarios)]);
  plain = await startHttpTarget({ fallback: { body: 'plain only', headers: { 'x-frame-options': 'DENY' } } });
  canary = await startSite(['evil.inspect.test'], CANARY);
  ripestat = await startFakeUpstream({
    // RIPEstat's real answers (../shared); without it the tests that need them are skipped.
    routes: hasShared
      ? {
          '/data/prefix-overview/data.json': { json: sharedFixture('ripestat/prefix-overview.json') },
          '/data/routing-status/data.json': { json: routingStatusForPrefix() },
        }
      : {},
  });
  const names: FakeRecord[] = Object.keys(scenarios).map((name) => ({ name, type: 'A', data: site.address }));
  dns = await startFakeDnsServer({
    zones: [
      testZone('inspect.test', [
        ...names,
        { name: 'plain.inspect.test', type: 'A', data: plain.address },
        { name: 'evil.inspect.test', type: 'A', data: CANARY },
      ]),
      testZone('127.in-addr.arpa', [
        { name: `${reverseV4(site.address)}.in-addr.arpa`, type: 'PTR', data: 'good.inspect.test' },
      ]),
      testZone('asn.cymru.com', [
        {
          name: `${reverseV4(site.address)}.origin.asn.cymru.com`,
          type: 'TXT',
          data: ['64500 | 127.0.0.0/8 | ZZ | test | 2024-01-01'],
        },
        {
          name: 'as64500.asn.cymru.com',
          type: 'TXT',
          data: ['64500 | ZZ | test | 2024-01-01 | TEST-AS Example, ZZ'],
        },
        // A CNAME loop: the resolver answers SERVFAIL, an operational failure of the Cymru lookup.
        {
          name: `${reverseV4(plain.address)}.origin.asn.cymru.com`,
          type: 'CNAME',
          data: `${reverseV4(plain.address)}.origin.asn.cymru.com`,
        },
      ]),
    ],
  });
});

afterAll(async () => {
  await Promise.all([site?.close(), plain?.close(), canary?.close(), ripestat?.close(), dns?.close()]);
});

async function app() {
  site.http.reset();
  site.https.reset();
  canary.http.reset();
  canary.https.reset();
  ripestat.reset();
  return buildTestApp({
    ca: caPem,
    config: {
      dnsResolvers: [dns.doh],
      unsafeAllowTargetCidrs: ['127.0.0.0/24'],
      ripestatUrl: ripestat.url,
      providerTimeoutMs: TIMEOUT_MS,
      rateLimitExpensive: { points: 1000, seconds: 60 },
      rateLimitGeneral: { points: 1000, seconds: 60 },
    },
  });
}

async function inspect(query: string) {
  const a = await app();
  const res = await a.inject(`/api/inspect?${query}`);
  return { app: a, res, body: res.json() };
}

describe('GET /api/inspect: HTTP evidence', () => {
  it('follows both redirect chains hop by hop, over HTTP/2 where ALPN chose it', async () => {
    const { res, body } = await inspect('target=good.inspect.test');
    expect(res.statusCode).toBe(200);
    expect(body).toMatchObject({
      target: 'good.inspect.test',
      target_type: 'domain',
      addresses: [site.address],
    });
    const { http } = body;
    expect(http.status).toBe('ok');
    expect(
      http.chains.http.hops.map((h: Record<string, unknown>) => [
        h.url,
        h.status,
        h.location,
        h.http_version,
      ]),
    ).toEqual([
      ['http://good.inspect.test/', 301, 'https://good.inspect.test/', '1.1'],
      ['https://good.inspect.test/', 302, 'https://good.inspect.test/home', '2'],
      ['https://good.inspect.test/home', 200, null, '2'],
    ]);
    expect(http.chains.https).toMatchObject({ status: 'ok', final_url: 'https://good.inspect.test/home' });
    expect(http.chains.https.hops).toHaveLength(2);
    for (const hop of [...http.chains.http.hops, ...http.chains.https.hops]) {
      expect(hop.remote_address).toBe(site.address);
      for (const phase of ['dns', 'connect', 'tls', 'ttfb', 'total'])
        expect(hop.timings[phase]).toBeGreaterThanOrEqual(0);
    }
    expect(http.chains.https.hops[0].tls).toMatchObject({
      alpn: 'h2',
      authorized: true,
      authorization_error: null,
    });
    expect(http.redirects_to_https).toBe(true);
    expect(http.http2).toEqual({ negotiated: true });
    expect(http.http3).toEqual({
      advertised: true,
      clear: false,
      alternatives: [{ protocol: 'h3', authority: ':443', max_age: 86400 }],
    });
    expect(http.timings.total).toBeGreaterThan(0);
    // The name went out as SNI and Host.
    expect(site.https.tlsServernames.every((n) => n === 'good.inspect.test')).toBe(true);
    expect(site.https.requests.map((r) => r.host)).toContain('good.inspect.test');
  });

  it('reports an allow-listed header set: cookies and unknown headers by name only', async () => {
    const { body } = await inspect('target=good.inspect.test');
    const final = body.http.final;
    expect(final).toMatchObject({ url: 'https://good.inspect.test/home', status: 200, http_version: '2' });
    expect(final.headers).toMatchObject({
      server: 'fake-target',
      'x-content-type-options': 'nosniff',
      'alt-svc': 'h3=":443"; ma=86400',
    });
    expect(final.headers['set-cookie']).toBeUndefined();
    expect(final.other_headers).toEqual(expect.arrayContaining(['set-cookie', 'x-internal-token']));
    expect(JSON.stringify(body)).not.toMatch(/s3cret|do-not-copy/);
  });

  it('keeps the HTTP evidence when HTTPS is slower than the deadline (slow server → timeout)', async () => {
    const started = Date.now();
    const { res, body } = await inspect('target=slow.inspect.test&include_tls=false');
    // Long before the 60 s the target takes: the deadline ended the wait.
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(res.statusCode).toBe(200);
    expect(body.http.chains.https).toMatchObject({ status: 'error', stage: 'response headers', hops: [] });
    expect(body.http.chains.https.error).toMatch(new RegExp(`no answer within ${TIMEOUT_MS} ms`));
    expect(body.http.final).toMatchObject({ url: 'http://slow.inspect.test/', status: 200 });
    // Headers read from plain HTTP: HSTS cannot count there, and the grade is capped.
    expect(body.security_headers).toMatchObject({ status: 'ok', https: false, grade: 'F' });
    expect(body.security_headers.x_content_type_options.verdict).toBe('good');
  });

  it('stops reading a huge body at the cap', async () => {
    const { res, body } = await inspect('target=huge.inspect.test&include_tls=false');
    expect(res.statusCode).toBe(200);
    // 50 MiB on offer: without the cap the chain would run into its deadline and fail.
    expect(body.http.chains.https.status).toBe('ok');
    expect(body.http.final.body).toEqual({ bytes: 256 * 1024, truncated: true });
  });

  it('reports a refused redirect as that chain’s error, keeping the hops before it; the canary sees nothing', async () => {
    const { res, body } = await inspect('target=evilredirect.inspect.test&include_tls=false');
    expect(res.statusCode).toBe(200);
    expect(body.http.chains.https).toMatchObject({ status: 'error', stage: 'refused' });
    expect(body.http.chains.https.error).toMatch(/not a public address/);
    expect(body.http.chains.https.hops.map((h: { status: number }) => h.status)).toEqual([302]);
    expect(body.http).toMatchObject({ status: 'error', final: null });
    expect(body.security_headers.status).toBe('error');
    expect(canary.http.connections + canary.https.connections).toBe(0);
  });

  it('accepts an IP literal target and sends no SNI', async () => {
    const { res, body } = await inspect(`target=${site.address}`);
    expect(res.statusCode).toBe(200);
    expect(body).toMatchObject({ target: site.address, target_type: 'ip', addresses: [site.address] });
    expect(body.http.chains.https.status).toBe('ok');
    expect(body.tls).toMatchObject({ status: 'ok', host: site.address, connection: { sni: null } });
    expect(site.https.tlsServernames.length).toBeGreaterThan(0);
    expect(site.https.tlsServernames.every((n) => n === false)).toBe(true);
  });
});

describe('GET /api/inspect: security headers', () => {
  it('grades a site with every header right A+; preload needs its registrable domain', async () => {
    const { body } = await inspect('target=good.inspect.test');
    const sh = body.security_headers;
    expect(sh).toMatchObject({
      status: 'ok',
      url: 'https://good.inspect.test/home',
      https: true,
      score: 100,
      grade: 'A+',
    });
    expect(sh.strict_transport_security).toMatchObject({
      present: true,
      verdict: 'good',
      max_age: 63072000,
      include_subdomains: true,
      preload: true,
    });
    expect(sh.content_security_policy).toMatchObject({
      verdict: 'good',
      unsafe_inline: false,
      unsafe_eval: false,
    });
    expect(sh.frame_ancestors.verdict).toBe('good');
    expect(sh.permissions_policy.features).toEqual({ camera: [], microphone: [], geolocation: [] });
    expect(sh.cross_origin_embedder_policy.verdict).toBe('missing');
    // The 302 on https://good.inspect.test/ carries HSTS itself, as hstspreload.org requires; every rule
    // passes but one: the host is a subdomain, and only its registrable domain can be submitted.
    expect(sh.hsts_preload.eligible).toBe(false);
    expect(sh.hsts_preload.checks.filter((c: { status: string }) => c.status === 'fail')).toEqual([
      {
        requirement: 'registrable domain',
        status: 'fail',
        detail:
          'good.inspect.test is a subdomain: only registrable domains can be submitted, so submit inspect.test (its policy then covers good.inspect.test through includeSubDomains)',
      },
    ]);
  });

  it('flags unsafe-inline and unsafe-eval and grades a weak header set low', async () => {
    const { body } = await inspect('target=weak.inspect.test&include_tls=false');
    const sh = body.security_headers;
    expect(sh.content_security_policy).toMatchObject({
      present: true,
      verdict: 'weak',
      unsafe_inline: true,
      unsafe_eval: true,
    });
    expect(sh.content_security_policy.flags.map((f: { keyword: string }) => f.keyword)).toEqual([
      "'unsafe-inline'",
      "'unsafe-eval'",
    ]);
    expect(sh.x_frame_options.verdict).toBe('bad');
    expect(sh.referrer_policy).toMatchObject({ verdict: 'bad', policy: 'unsafe-url' });
    expect(sh.strict_transport_security.verdict).toBe('bad');
    expect(sh.x_content_type_options.verdict).toBe('missing');
    expect(sh).toMatchObject({ score: 12, grade: 'F' });
    expect(sh.hsts_preload.eligible).toBe(false);
    expect(body.http.redirects_to_https).toBe(false);
  });
});

describe('GET /api/inspect: TLS part', () => {
  it('embeds the /api/tls evidence, from the same handshake cache', async () => {
    const a = await app();
    const tls = (await a.inject('/api/tls?target=good.inspect.test')).json().tls;
    // TCP accepts, counted when the connection arrives (the server's TLS-done event can lag the client's).
    const before = site.https.connections;
    expect(before).toBe(1);
    const body = (await a.inject('/api/inspect?target=good.inspect.test')).json();
    expect(body.tls).toEqual({ status: 'ok', ...tls });
    // No second handshake for the tls part; the HTTPS fetches connected once per hop:
    // https://good/ and /home in the http:// chain, the same two in the https:// chain.
    expect(site.https.connections - before).toBe(4);
  });

  it('include_tls=false omits tls and makes no TLS connection beyond what HTTPS needs', async () => {
    const { body } = await inspect('target=good.inspect.test&include_tls=false');
    expect(body.tls).toBeUndefined();
    // One connection per HTTPS hop: two in the http:// chain (after the 301), two in the https:// chain.
    expect(site.https.connections).toBe(4);
    const withTls = await inspect('target=good.inspect.test');
    expect(withTls.body.tls.status).toBe('ok');
    expect(site.https.connections).toBe(5);
  });

  it('reports a failed handshake as the tls part’s error, not the request’s', async () => {
    const { res, body } = await inspect('target=plain.inspect.test');
    expect(res.statusCode).toBe(200);
    expect(body.tls).toMatchObject({ status: 'error', stage: 'connect' });
    expect(body.http.final).toMatchObject({ url: 'http://plain.inspect.test/', status: 200 });
  });
});

describe('GET /api/inspect: network and routing', () => {
  it.skipIf(!hasShared)(
    'gives every address its reverse DNS and origin from RIPEstat, with attribution',
    async () => {
      const { body } = await inspect('target=good.inspect.test&include_tls=false');
      expect(body.network).toMatchObject({ status: 'ok', truncated: false });
      expect(body.network.addresses).toEqual([
        {
          address: site.address,
          family: 4,
          reverse_dns: { status: 'ok', names: ['good.inspect.test'] },
          status: 'ok',
          announced: true,
          prefix: '193.0.0.0/21',
          asn: 3333,
          holder: 'RIPE-NCC-AS - Reseaux IP Europeens Network Coordination Centre (RIPE NCC)',
          origins: [
            {
              asn: 3333,
              holder: 'RIPE-NCC-AS - Reseaux IP Europeens Network Coordination Centre (RIPE NCC)',
            },
          ],
          source: 'RIPEstat Data API',
          source_id: 'ripestat',
          providers_tried: [{ id: 'ripestat', name: 'RIPEstat Data API', status: 'ok' }],
        },
      ]);
      const call = ripestat.requests.find((r) => r.path === '/data/prefix-overview/data.json');
      expect(call?.query.get('resource')).toBe(site.address);
      expect(call?.query.get('sourceapp')).toBe('netdiag');
    },
  );

  it('falls back to Team Cymru over DNS when RIPEstat is down: providers_tried [failed, ok]', async () => {
    const a = await app();
    ripestat.fault = '503';
    const body = (await a.inject('/api/inspect?target=good.inspect.test&include_tls=false')).json();
    const [entry] = body.network.addresses;
    expect(entry).toMatchObject({
      status: 'ok',
      announced: true,
      prefix: '127.0.0.0/8',
      asn: 64500,
      holder: 'TEST-AS Example, ZZ',
      source: 'Team Cymru IP to ASN mapping (DNS)',
      source_id: 'cymru',
    });
    expect(entry.providers_tried).toEqual([
      { id: 'ripestat', name: 'RIPEstat Data API', status: 'failed', error: expect.stringMatching(/503/) },
      { id: 'cymru', name: 'Team Cymru IP to ASN mapping (DNS)', status: 'ok' },
    ]);
    expect(dns.queries.map((q) => q.name)).toContain(`${reverseV4(site.address)}.origin.asn.cymru.com`);
  });

  it('reports a failed origin lookup in the network part, and does not cache the answer', async () => {
    const a = await app();
    ripestat.fault = '503';
    const first = await a.inject('/api/inspect?target=plain.inspect.test&include_tls=false');
    expect(first.statusCode).toBe(200);
    const body = first.json();
    expect(body.network.status).toBe('error');
    expect(body.network.addresses[0]).toMatchObject({ status: 'error', asn: null, source: null });
    expect(body.network.addresses[0].providers_tried.map((p: { status: string }) => p.status)).toEqual([
      'failed',
      'failed',
    ]);
    // The rest of the evidence stands.
    expect(body.http.final.status).toBe(200);
    expect(first.headers['cache-control']).toBe('public, max-age=0');
    const second = await a.inject('/api/inspect?target=plain.inspect.test&include_tls=false');
    expect(second.headers['x-service-cache']).toBe('MISS');
  });

  it.skipIf(!hasShared)(
    'adds RIPEstat routing status for `ip`, looked up and never connected to',
    async () => {
      const { res, body } = await inspect('target=good.inspect.test&include_tls=false&ip=193.0.6.139');
      expect(res.statusCode).toBe(200);
      expect(body.routing).toMatchObject({
        status: 'ok',
        ip: '193.0.6.139',
        prefix: '193.0.0.0/21',
        origins: [3333],
        visibility: { v4: { ris_peers_seeing: 343, total_ris_peers: 344 } },
        first_seen: { time: '2000-08-18T08:00:00.000Z', prefix: '193.0.0.0/22', origin: 3333 },
        last_seen: { time: '2025-06-11T08:00:00.000Z', prefix: '193.0.20.0/23', origin: 3333 },
        more_specifics: [{ prefix: '193.0.6.0/24', origin: 3333 }],
        source_id: 'ripestat',
      });
      const call = ripestat.requests.find((r) => r.path === '/data/routing-status/data.json');
      expect(call?.query.get('resource')).toBe('193.0.6.139');
    },
  );

  it('keeps the other parts when routing fails', async () => {
    const a = await app();
    ripestat.fault = '503';
    const res = await a.inject('/api/inspect?target=good.inspect.test&include_tls=false&ip=193.0.6.139');
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.routing).toMatchObject({ status: 'error', ip: '193.0.6.139', source: null });
    expect(body.routing.providers_tried).toEqual([
      { id: 'ripestat', name: 'RIPEstat Data API', status: 'failed', error: expect.stringMatching(/503/) },
    ]);
    expect(body.network.addresses[0].source_id).toBe('cymru');
    expect(body.http.status).toBe('ok');
    expect(body.security_headers.grade).toBe('A+');
  });

  it('answers 400 for a private `ip` before looking anything up or connecting', async () => {
    const { res, body } = await inspect('target=good.inspect.test&ip=10.0.0.1');
    expect(res.statusCode).toBe(400);
    expect(body.error).toMatch(/^ip 10\.0\.0\.1 is not a public address/);
    expect(site.http.connections + site.https.connections).toBe(0);
    expect(ripestat.requests).toHaveLength(0);
  });
});

describe('GET /api/inspect: outbound safety and input', () => {
  it.each([
    ['evil.inspect.test', /resolves to 127\.8\.4\.1, which is not a public address/],
    ['0x7f.8.0x401', /127\.8\.4\.1 is not a public address/],
    ['[::ffff:127.8.4.1]', /is not a public address/],
    ['169.254.169.254', /is not a public address/],
  ])('refuses %s with 400 and no connection', async (target, message) => {
    const { res, body } = await inspect(`target=${encodeURIComponent(target)}`);
    expect(res.statusCode).toBe(400);
    expect(body.error).toMatch(message);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(canary.http.connections + canary.https.connections).toBe(0);
  });

  it.each([
    ['target=https://good.inspect.test/', /not a URL/],
    ['target=good.inspect.test:8443', /port/],
    ['target=nothing.inspect.test', /does not exist/],
    ['target=good.inspect.test&ip=good.inspect.test', /ip must be an IPv4 or IPv6 address/],
    ['target=good.inspect.test&include_tls=maybe', /include_tls/],
    ['', /target/],
  ])('answers 400 for %s', async (query, message) => {
    const { res, body } = await inspect(query);
    expect(res.statusCode).toBe(400);
    expect(body.error).toMatch(message);
  });
});

describe('GET /api/inspect: caching', () => {
  it('caches a complete answer 120 s and serves the repeat without touching the target', async () => {
    const a = await app();
    const first = await a.inject('/api/inspect?target=good.inspect.test&include_tls=false');
    expect(first.headers['x-service-cache']).toBe('MISS');
    expect(first.headers['cache-control']).toBe('public, max-age=120');
    const requests = site.http.requests.length + site.https.requests.length;
    const second = await a.inject('/api/inspect?target=Good.Inspect.Test.&include_tls=false');
    expect(second.headers['x-service-cache']).toBe('HIT');
    expect(second.json()).toEqual(first.json());
    expect(site.http.requests.length + site.https.requests.length).toBe(requests);
  });

  it('counts as an expensive request', async () => {
    const a = await buildTestApp({
      ca: caPem,
      config: {
        dnsResolvers: [dns.doh],
        unsafeAllowTargetCidrs: ['127.0.0.0/24'],
        ripestatUrl: ripestat.url,
        rateLimitExpensive: { points: 1, seconds: 60 },
      },
    });
    expect((await a.inject('/api/inspect?target=good.inspect.test&include_tls=false')).statusCode).toBe(200);
    // The cached answer again costs no expensive point (issue 31); a new measurement does.
    expect((await a.inject('/api/inspect?target=good.inspect.test&include_tls=false')).statusCode).toBe(200);
    const limited = await a.inject('/api/inspect?target=good.inspect.test');
    expect(limited.statusCode).toBe(429);
  });
});
