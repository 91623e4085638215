/**
 * GET /api/dns end to end: the app's real DNS client over DoH/UDP/TCP against
 * fake resolvers on loopback serving the fixture zones.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type FakeDnsServer, startFakeDnsServer } from '../fakes/dns-server.js';
import { DEFAULT_ZONES, type FakeZone, ip6ArpaName, LONG_TXT_STRINGS, testZone } from '../fakes/dns-zones.js';
import { getTestPki } from '../fakes/test-ca.js';
import { buildTestApp } from '../helper.js';

let primary: FakeDnsServer;
let fallback: FakeDnsServer;
let ca: string;

// PTR needs public addresses (special-use ones are refused), so the reverse zones hold Cloudflare's resolver.
const REVERSE_ZONES: FakeZone[] = [
  testZone('1.1.1.in-addr.arpa', [{ name: '1.1.1.1.in-addr.arpa', type: 'PTR', data: 'one.one.one.one' }], {
    ttl: 1800,
  }),
  testZone(
    '0.0.7.4.0.0.7.4.6.0.6.2.ip6.arpa',
    [{ name: ip6ArpaName('2606:4700:4700::1111'), type: 'PTR', data: 'one.one.one.one' }],
    { ttl: 1800 },
  ),
];

beforeAll(async () => {
  ca = (await getTestPki()).caPem;
  const zones = [...DEFAULT_ZONES, ...REVERSE_ZONES];
  [primary, fallback] = await Promise.all([startFakeDnsServer({ zones }), startFakeDnsServer({ zones })]);
});
afterAll(async () => {
  await Promise.all([primary?.close(), fallback?.close()]);
});
beforeEach(() => {
  primary.reset();
  fallback.reset();
});

function app(opts: { resolvers?: string[]; clock?: () => number } = {}) {
  return buildTestApp({
    ca,
    clock: opts.clock,
    dnsOptions: { udpRetryAfterMs: 100 },
    config: { dnsResolvers: opts.resolvers ?? [primary.doh, fallback.doh], providerTimeoutMs: 5_000 },
  });
}

async function dns(a: Awaited<ReturnType<typeof app>>, query: string) {
  const res = await a.inject(`/api/dns?${query}`);
  return { res, body: res.json() };
}

describe('GET /api/dns record types', () => {
  it('A', async () => {
    const { res, body } = await dns(await app(), 'target=example.test&type=A');
    expect(res.statusCode).toBe(200);
    expect(body).toMatchObject({
      target: 'example.test',
      type: 'A',
      rcode: 'NOERROR',
      authenticated_data: false,
      flags: { ad: false, tc: false, rd: true, ra: true },
      answers: [{ name: 'example.test', type: 'A', ttl: 300, data: '192.0.2.10' }],
      records: [{ address: '192.0.2.10', ttl: 300 }],
      source_id: expect.stringMatching(/^doh-127\.0\.0\.1-\d+$/),
      providers_tried: [{ status: 'ok' }],
    });
    expect(primary.dohProtocols).toEqual(['2.0']);
    expect(fallback.counts.doh).toBe(0);
  });

  it('AAAA', async () => {
    const { body } = await dns(await app(), 'target=example.test&type=AAAA');
    expect(body.records).toEqual([{ address: '2001:db8::10', ttl: 300 }]);
  });

  it('MX, with names free of trailing dots', async () => {
    const { body } = await dns(await app(), 'target=example.test&type=MX');
    expect(body.records).toEqual(
      expect.arrayContaining([
        { priority: 10, exchange: 'mail.example.test', ttl: 300 },
        { priority: 20, exchange: 'mail2.example.test', ttl: 300 },
      ]),
    );
    expect(body.answers.map((a: { data: string }) => a.data).sort()).toEqual([
      '10 mail.example.test',
      '20 mail2.example.test',
    ]);
  });

  it('TXT longer than 255 bytes: strings as sent, text joined', async () => {
    const { body } = await dns(await app(), 'target=long.example.test&type=TXT');
    expect(LONG_TXT_STRINGS.length).toBeGreaterThan(1);
    expect(body.records).toEqual([{ text: LONG_TXT_STRINGS.join(''), strings: LONG_TXT_STRINGS, ttl: 300 }]);
    expect(body.answers[0].data).toBe(LONG_TXT_STRINGS.map((s) => `"${s}"`).join(' '));
  });

  it('NS', async () => {
    const { body } = await dns(await app(), 'target=example.test&type=NS');
    expect(body.records.map((r: { host: string }) => r.host).sort()).toEqual([
      'ns1.example.test',
      'ns2.example.test',
    ]);
  });

  it('SOA', async () => {
    const { body } = await dns(await app(), 'target=example.test&type=SOA');
    expect(body.records).toEqual([
      {
        mname: 'ns1.example.test',
        rname: 'hostmaster.example.test',
        serial: 2024060101,
        refresh: 7200,
        retry: 3600,
        expire: 1209600,
        minimum: 60,
        ttl: 3600,
      },
    ]);
  });

  it('CAA, with the issuer-critical flag', async () => {
    const { body } = await dns(await app(), 'target=example.test&type=CAA');
    expect(body.records).toEqual(
      expect.arrayContaining([
        { flags: 0, tag: 'issue', value: 'letsencrypt.org', critical: false, ttl: 300 },
        { flags: 128, tag: 'tbs', value: 'unknown', critical: true, ttl: 300 },
      ]),
    );
  });

  it('SRV under _service._proto', async () => {
    const { body } = await dns(await app(), 'target=_sip._tcp.example.test&type=SRV');
    expect(body.records).toEqual(
      expect.arrayContaining([
        { priority: 10, weight: 60, port: 5060, target: 'sip.example.test', ttl: 600 },
      ]),
    );
  });

  it('PTR for IPv4 and IPv6 addresses, via their reverse names', async () => {
    const a = await app();
    const v4 = await dns(a, 'target=1.1.1.1&type=PTR');
    expect(v4.res.statusCode).toBe(200);
    expect(v4.body).toMatchObject({
      target: '1.1.1.1',
      query_name: '1.1.1.1.in-addr.arpa',
      records: [{ host: 'one.one.one.one', ttl: 1800 }],
    });
    const v6 = await dns(a, `target=${encodeURIComponent('2606:4700:4700::1111')}&type=PTR`);
    expect(v6.body.query_name).toBe(ip6ArpaName('2606:4700:4700::1111'));
    expect(v6.body.query_name).toBe(`1.1.1.1.${'0.'.repeat(16)}0.0.7.4.0.0.7.4.6.0.6.2.ip6.arpa`);
    expect(v6.body.records).toEqual([{ host: 'one.one.one.one', ttl: 1800 }]);
    // Special-use addresses are refused before any query: documentation space included.
    expect((await dns(a, 'target=192.0.2.10&type=PTR')).res.statusCode).toBe(400);
  });

  it('CNAME chain: the answer section keeps the chain, records only the asked type', async () => {
    const { body } = await dns(await app(), 'target=www.example.test&type=A');
    expect(body.answers).toEqual([
      { name: 'www.example.test', type: 'CNAME', ttl: 600, data: 'alias.example.test' },
      { name: 'alias.example.test', type: 'A', ttl: 120, data: '192.0.2.20' },
    ]);
    expect(body.records).toEqual([{ address: '192.0.2.20', ttl: 120 }]);
    const cname = await dns(await app(), 'target=www.example.test&type=CNAME');
    expect(cname.body.records).toEqual([{ target: 'alias.example.test', ttl: 600 }]);
  });
});

describe('GET /api/dns answers that are not records', () => {
  it('NXDOMAIN is an answer: 200, no fallback, cached for the SOA minimum', async () => {
    const { res, body } = await dns(await app(), 'target=nothing.example.test&type=A');
    expect(res.statusCode).toBe(200);
    expect(body).toMatchObject({
      rcode: 'NXDOMAIN',
      answers: [],
      records: [],
      providers_tried: [{ status: 'ok' }],
    });
    expect(res.headers['cache-control']).toBe('public, max-age=60');
    expect(fallback.counts.doh).toBe(0);
  });

  it('NODATA is NOERROR with no records', async () => {
    const { body } = await dns(await app(), 'target=www.example.com&type=MX');
    expect(body).toMatchObject({ rcode: 'NOERROR', records: [] });
  });

  it('reports the AD flag', async () => {
    expect((await dns(await app(), 'target=example.com&type=A')).body.authenticated_data).toBe(true);
    expect((await dns(await app(), 'target=example.test&type=A')).body.authenticated_data).toBe(false);
  });

  it('surfaces Extended DNS Errors', async () => {
    primary.set({ ede: [{ code: 18, text: 'blocked by policy' }] });
    const { body } = await dns(await app(), 'target=example.test&type=A');
    expect(body.extended_errors).toEqual([{ code: 18, name: 'Prohibited', text: 'blocked by policy' }]);
  });
});

describe('GET /api/dns transports and failures', () => {
  it('retries over TCP when the UDP answer is truncated', async () => {
    const udp = await startFakeDnsServer();
    try {
      udp.set({ truncateUdp: true });
      const { body } = await dns(await app({ resolvers: [udp.udp] }), 'target=big.example.test&type=TXT');
      expect(body.records).toHaveLength(24);
      expect(udp.counts.udp).toBe(1);
      expect(udp.counts.tcp).toBe(1);
    } finally {
      await udp.close();
    }
  });

  it('uses the fallback after the primary answers SERVFAIL: providers_tried [failed, ok]', async () => {
    primary.set({ rcode: 'SERVFAIL' });
    const { res, body } = await dns(await app(), 'target=example.test&type=A');
    expect(res.statusCode).toBe(200);
    expect(body.providers_tried.map((a: { status: string }) => a.status)).toEqual(['failed', 'ok']);
    expect(body.providers_tried[0].error).toMatch(/SERVFAIL/);
    expect(body.source_id).toBe(body.providers_tried[1].id);
  });

  it('answers 502 when both resolvers fail, and does not cache the failure', async () => {
    primary.set({ rcode: 'REFUSED' });
    fallback.set({ drop: true });
    const a = await app();
    const first = await dns(a, 'target=example.test&type=AAAA');
    expect(first.res.statusCode).toBe(502);
    expect(first.res.headers['cache-control']).toBe('no-store');
    expect(first.body.providers_tried.map((p: { status: string }) => p.status)).toEqual(['failed', 'failed']);
    primary.reset();
    fallback.reset();
    const second = await dns(a, 'target=example.test&type=AAAA');
    expect(second.res.statusCode).toBe(200);
    expect(primary.counts.doh).toBe(1);
  });

  it('caches no longer than the smallest TTL', async () => {
    let now = Date.now();
    const a = await app({ clock: () => now });
    const first = await dns(a, 'target=short.example.test&type=A');
    expect(first.res.headers['x-service-cache']).toBe('MISS');
    expect(first.res.headers['cache-control']).toBe('public, max-age=5');
    now += 3000;
    const second = await dns(a, 'target=short.example.test&type=A');
    expect(second.res.headers['x-service-cache']).toBe('HIT');
    expect(second.res.headers['cache-control']).toBe('public, max-age=2');
    now += 2500;
    const third = await dns(a, 'target=short.example.test&type=A');
    expect(third.res.headers['x-service-cache']).toBe('MISS');
    expect(primary.counts.doh).toBe(2);
  });
});

describe('GET /api/dns bodies of cached answers', () => {
  it('are the same for every spelling that reaches one cache entry', async () => {
    const a = await app();
    const short = await dns(a, `target=${encodeURIComponent('2606:4700:4700::1111')}&type=PTR`);
    const long = await dns(a, `target=${encodeURIComponent('2606:4700:4700:0:0:0:0:1111')}&type=PTR`);
    expect(long.res.headers['x-service-cache']).toBe('HIT');
    // The target is shown in canonical form (RFC 5952), so both read the same.
    expect(short.body.target).toBe('2606:4700:4700::1111');
    expect(long.body).toEqual(short.body);
    expect(primary.counts.doh).toBe(1);
  });

  it('follow the cache entry: after expiry the new answer is shown, not the body of the old one', async () => {
    let now = Date.now();
    const a = await app({ clock: () => now });
    const first = await dns(a, 'target=short.example.test&type=A');
    const hit = await dns(a, 'target=short.example.test&type=A');
    expect(hit.res.headers['x-service-cache']).toBe('HIT');
    expect(hit.body).toEqual(first.body);
    expect(hit.body.source_id).toBe(first.body.providers_tried[0].id);
    now += 6000;
    primary.set({ rcode: 'SERVFAIL' });
    const renewed = await dns(a, 'target=short.example.test&type=A');
    expect(renewed.res.headers['x-service-cache']).toBe('MISS');
    expect(renewed.body.providers_tried.map((t: { status: string }) => t.status)).toEqual(['failed', 'ok']);
    expect(renewed.body.source_id).not.toBe(first.body.source_id);
  });
});

describe('GET /api/dns input', () => {
  it.each([
    ['type=A', 'target is required'],
    ['target=example.test&type=TXT1', 'type must be one of A, AAAA, CNAME, MX, TXT, NS, SOA, CAA, SRV, PTR'],
    ['target=', 'target must not be empty'],
    ['target=example.test&type=PTR', /target must be an IPv4 or IPv6 address/],
    ['target=10.0.0.1&type=PTR', /not a public address \(private-use\)/],
    ['target=127.0.0.1&type=PTR', /not a public address \(loopback\)/],
    ['target=%3A%3Affff%3A10.0.0.1&type=PTR', /not a public address/],
    ['target=_x.example.test&type=A', /target has "_"/],
    ['target=-bad.example.test', /target has an invalid label/],
    ['target=a..b', /empty label/],
    ['target=192.0.2.1', /for an IP address use type=PTR/],
    [`target=${'a'.repeat(64)}.test`, /longer than 63/],
    [`target=${Array.from({ length: 60 }, () => 'abcd').join('.')}`, /at most 253/],
    ['target=exa mple.test', /target/],
  ])('rejects %s with a 400 naming the parameter', async (query, message) => {
    const { res, body } = await dns(await app(), query);
    expect(res.statusCode).toBe(400);
    expect(body.error).toMatch(message);
    expect(primary.counts.doh).toBe(0);
  });

  it('accepts case-insensitive types, a trailing dot, upper case and IDNs', async () => {
    const a = await app();
    const mx = await dns(a, 'target=EXAMPLE.test.&type=mx');
    expect(mx.body).toMatchObject({ target: 'example.test', type: 'MX' });
    const idn = await dns(a, `target=${encodeURIComponent('bücher.example.test')}`);
    expect(idn.body).toMatchObject({ target: 'xn--bcher-kva.example.test', rcode: 'NXDOMAIN' });
    expect(primary.queries.at(-1)?.name).toBe('xn--bcher-kva.example.test');
  });

  it('never answers 500, whatever the target and type (property test)', async () => {
    const a = await buildTestApp({
      ca,
      config: { dnsResolvers: [primary.doh], rateLimitGeneral: { points: 10_000, seconds: 60 } },
    });
    const types = fc.oneof(
      fc.constantFrom('A', 'aaaa', 'PTR', 'ptr', 'SRV', 'TXT', 'CNAME', ''),
      fc.string({ maxLength: 8 }),
    );
    const targets = fc.oneof(
      fc.string({ maxLength: 300 }),
      fc.webUrl(),
      fc.domain(),
      fc.ipV4(),
      fc.ipV6(),
      fc.ipV4Extended(),
      fc.stringMatching(/^[a-z0-9_.\-[\]:%]{0,80}$/),
    );
    await fc.assert(
      fc.asyncProperty(targets, types, async (target, type) => {
        const res = await a.inject({ url: '/api/dns', query: { target, type } });
        // 502 is the honest answer here (the resolver is unreachable); 500 never is.
        expect([200, 400, 429, 502]).toContain(res.statusCode);
        expect(typeof res.json()).toBe('object');
      }),
      { numRuns: 150 },
    );
  }, 60_000);
});
