/**
 * GET /api/subdomains end to end: the real CT chain against the fake crt.sh,
 * and the app's real DNS client over DoH against fake resolvers on loopback:
 * the shared fake DNS server for ordinary zones, and for the DNS-wildcard
 * zone a small DoH responder here that synthesizes wildcard answers (the
 * shared fake answers exact names only).
 */
import * as packet from 'dns-packet';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type FakeCrtsh, startCrtsh } from '../fakes/crtsh.js';
import { type FakeDnsServer, lookup, startFakeDnsServer } from '../fakes/dns-server.js';
import { type FakeRecord, type FakeZone, testZone } from '../fakes/dns-zones.js';
import {
  type FakeReply,
  type FakeRequest,
  type FakeUpstream,
  fixture,
  startFakeUpstream,
} from '../fakes/https-upstream.js';
import { getTestPki } from '../fakes/test-ca.js';
import { buildTestApp } from '../helper.js';

const NOW = Date.parse('2025-06-01T00:00:00Z');
const SEVENTY = fixture('ct/crtsh-scenario-corp.test-70-names.json') as unknown[];
const WILD = fixture('ct/crtsh-scenario-wild.test.json') as unknown[];
const AT_CAP = fixture('ct/crtsh-scenario-big.test-at-cap.json') as unknown[];

const host = (i: number) => `host${String(i).padStart(2, '0')}.corp.test`;

/**
 * corp.test: of host01…host70 (newest certificate first), host01–10 have A
 * records, host11–15 a CNAME to host01, host16 only AAAA, host17 a dangling
 * CNAME; host55 has an A record but is beyond the 50 resolved.
 */
const CORP = testZone(
  'corp.test',
  [
    { name: 'corp.test', type: 'NS', data: 'ns.corp.test' },
    ...Array.from({ length: 10 }, (_, i) => ({ name: host(i + 1), type: 'A', data: `192.0.2.${i + 1}` })),
    ...Array.from({ length: 5 }, (_, i) => ({ name: host(i + 11), type: 'CNAME', data: host(1) })),
    { name: host(16), type: 'AAAA', data: '2001:db8::16' },
    { name: host(17), type: 'CNAME', data: 'gone.corp.test' },
    { name: host(55), type: 'A', data: '192.0.2.55' },
  ],
  { ttl: 300 },
);

/** wild.test has `*.wild.test` (RFC 4592): every name below it that does not exist answers 192.0.2.99. */
const WILD_ZONE = testZone(
  'wild.test',
  [
    { name: 'wild.test', type: 'A', data: '192.0.2.99' },
    { name: '*.wild.test', type: 'A', data: '192.0.2.99' },
    { name: '*.wild.test', type: 'AAAA', data: '2001:db8::99' },
    { name: 'www.wild.test', type: 'A', data: '192.0.2.10' },
    // Its own record, but the same address as the wildcard: indistinguishable from it.
    { name: 'same.wild.test', type: 'A', data: '192.0.2.99' },
    { name: 'alias.wild.test', type: 'CNAME', data: 'target.example.net' },
  ],
  { ttl: 300 },
);

/**
 * The shared fake's exact-match answer, or, for a name that does not exist,
 * the answer synthesized from `*.<parent>` with the owner renamed (RFC 4592
 * §3.3.1; the one-level case is all these tests need).
 */
function wildcardLookup(zones: readonly FakeZone[], name: string, type: string) {
  const direct = lookup(zones, name, type);
  if (direct.rcode !== 'NXDOMAIN' || direct.answers.length > 0) return direct;
  const source = `*.${name.slice(name.indexOf('.') + 1)}`;
  if (!zones.some((z) => z.records.some((r) => r.name === source))) return direct;
  const synthesized = lookup(zones, source, type);
  return {
    ...synthesized,
    answers: synthesized.answers.map((r: FakeRecord) => (r.name === source ? { ...r, name } : r)),
  };
}

/** RFC 8484 POST handler answering from `zones` with wildcard synthesis. */
function dohResponder(zones: readonly FakeZone[], log: string[]) {
  return (req: FakeRequest): FakeReply => {
    const query = packet.decode(req.body);
    const question = query.questions?.[0];
    if (!question) return { status: 400, body: 'no question' };
    log.push(question.name.toLowerCase());
    const res = wildcardLookup(zones, question.name.toLowerCase(), question.type);
    const rcode = res.rcode === 'NXDOMAIN' ? 3 : res.rcode === 'NOERROR' ? 0 : 2;
    const wire = packet.encode({
      type: 'response',
      id: query.id,
      flags: packet.RECURSION_DESIRED | packet.RECURSION_AVAILABLE | rcode,
      questions: [question],
      answers: res.answers,
      authorities: res.authorities,
    } as unknown as packet.Packet);
    return { headers: { 'content-type': 'application/dns-message' }, body: wire };
  };
}

let ca: string;
let crtsh: FakeCrtsh;
let dns: FakeDnsServer;
let wildDoh: FakeUpstream;
const wildQueries: string[] = [];

beforeAll(async () => {
  ca = (await getTestPki()).caPem;
  [crtsh, dns, wildDoh] = await Promise.all([
    startCrtsh({
      answers: { 'corp.test': SEVENTY, 'wild.test': WILD, 'big.test': AT_CAP },
      clock: () => NOW,
    }),
    startFakeDnsServer({ zones: [CORP] }),
    startFakeUpstream({ http2: true, routes: { 'POST /dns-query': dohResponder([WILD_ZONE], wildQueries) } }),
  ]);
});
afterAll(async () => {
  await Promise.all([crtsh?.close(), dns?.close(), wildDoh?.close()]);
});
beforeEach(() => {
  crtsh.reset();
  dns.reset();
  wildDoh.reset();
  wildQueries.length = 0;
});

function app(opts: { resolver?: string; expensive?: number } = {}) {
  return buildTestApp({
    ca,
    clock: () => NOW,
    config: {
      crtshUrl: crtsh.url,
      dnsResolvers: [opts.resolver ?? dns.doh],
      providerTimeoutMs: 2000,
      rateLimitExpensive: { points: opts.expensive ?? 100, seconds: 60 },
    },
  });
}

interface Host {
  name: string;
  status: string;
  addresses: string[];
  cname?: string;
  certificate_count: number;
  wildcard: boolean;
}

describe('GET /api/subdomains', () => {
  it('70 names: the 50 most recently valid resolved, counts and statuses exact', async () => {
    const res = await (await app()).inject('/api/subdomains?domain=corp.test');
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({
      domain: 'corp.test',
      discovered_count: 70,
      checked_count: 50,
      // host01–10 (A), host11–15 (CNAME), host16 (AAAA), host17 (a CNAME, even dangling).
      active_count: 17,
      truncated: true,
      gaps: [
        {
          reason: 'unchecked_names',
          detail:
            '20 of 70 names were not resolved (only the 50 most recently valid are): they are marked unchecked.',
        },
      ],
      dns_wildcard: { detected: false, addresses: [], cnames: [] },
      source: 'crt.sh',
      source_id: 'crtsh',
      providers_tried: [{ id: 'crtsh', status: 'ok' }],
    });
    const hosts = body.hosts as Host[];
    expect(hosts.map((h) => h.name)).toEqual(Array.from({ length: 70 }, (_, i) => host(i + 1)));
    const byName = Object.fromEntries(hosts.map((h) => [h.name, h]));
    expect(byName[host(1)]).toEqual({
      name: host(1),
      status: 'active',
      addresses: ['192.0.2.1'],
      first_seen: '2025-05-30T00:00:00Z',
      last_seen: '2025-05-30T00:00:00Z',
      last_not_after: '2025-08-27T23:59:59Z',
      certificate_count: 1,
      wildcard: false,
    });
    expect(byName[host(11)]).toMatchObject({ status: 'active', cname: host(1), addresses: ['192.0.2.1'] });
    expect(byName[host(16)]).toMatchObject({ status: 'active', addresses: ['2001:db8::16'] });
    expect(byName[host(17)]).toMatchObject({ status: 'active', cname: 'gone.corp.test', addresses: [] });
    expect(byName[host(18)]).toMatchObject({ status: 'historical', addresses: [] });
    expect(byName[host(18)]).not.toHaveProperty('cname');
    expect(hosts.filter((h) => h.status === 'historical')).toHaveLength(33);
    expect(hosts.slice(50).every((h) => h.status === 'unchecked')).toBe(true);
    // host55 has a record, but unchecked means not asked at all.
    expect(byName[host(55)]).toMatchObject({ status: 'unchecked', addresses: [] });
    expect(dns.queries.some((q) => q.name === host(55))).toBe(false);

    // Three random labels first (A and AAAA each), then A, AAAA and CNAME for each of the 50.
    const probes = [
      ...new Set(dns.queries.map((q) => q.name).filter((n) => !/^host\d\d\.corp\.test$/.test(n))),
    ];
    expect(probes).toHaveLength(3);
    for (const probe of probes) expect(probe).toMatch(/^netdiag-probe-[0-9a-f]{16}\.corp\.test$/);
    expect(dns.queries).toHaveLength(6 + 150);
    expect(new Set(dns.queries.slice(0, 6).map((q) => q.name))).toEqual(new Set(probes));
  });

  it('is cached 30 minutes: a second request asks neither crt.sh nor DNS', async () => {
    const a = await app();
    const first = await a.inject('/api/subdomains?domain=corp.test');
    expect(first.headers['x-service-cache']).toBe('MISS');
    expect(first.headers['cache-control']).toBe('public, max-age=1800');
    const upstream = { crtsh: crtsh.count(), dns: dns.queries.length };
    const second = await a.inject('/api/subdomains?domain=corp.test');
    expect(second.headers['x-service-cache']).toBe('HIT');
    expect(second.json()).toEqual(first.json());
    expect({ crtsh: crtsh.count(), dns: dns.queries.length }).toEqual(upstream);
  });

  it('shares the CT history with /api/certificates: one crt.sh round for both', async () => {
    const a = await app();
    expect((await a.inject('/api/certificates?domain=corp.test')).statusCode).toBe(200);
    expect(crtsh.count()).toBe(1);
    const res = await a.inject('/api/subdomains?domain=corp.test');
    expect(res.statusCode).toBe(200);
    expect(res.json().discovered_count).toBe(70);
    expect(crtsh.count()).toBe(1);
  });

  it('a DNS wildcard: hosts answering only with the wildcard are `wildcard`, not active', async () => {
    const res = await (await app({ resolver: `${wildDoh.url}/dns-query` })).inject(
      '/api/subdomains?domain=wild.test',
    );
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({
      domain: 'wild.test',
      discovered_count: 5,
      checked_count: 5,
      active_count: 3,
      truncated: false,
      gaps: [],
      dns_wildcard: { detected: true, addresses: ['192.0.2.99', '2001:db8::99'], cnames: [] },
    });
    const status = Object.fromEntries((body.hosts as Host[]).map((h) => [h.name, h.status]));
    expect(status).toEqual({
      // The domain itself is never wildcard-synthesized.
      'wild.test': 'active',
      'www.wild.test': 'active',
      'old.wild.test': 'wildcard',
      'same.wild.test': 'wildcard',
      'alias.wild.test': 'active',
    });
    expect((body.hosts as Host[]).find((h) => h.name === 'old.wild.test')?.addresses).toEqual([
      '192.0.2.99',
      '2001:db8::99',
    ]);
    expect(wildQueries.filter((n) => n.startsWith('netdiag-probe-'))).toHaveLength(6);
  });

  it('502 when the CT chain fails, not cached: the next request asks crt.sh again', async () => {
    crtsh.fault = '503';
    const a = await app();
    const res = await a.inject('/api/subdomains?domain=corp.test');
    expect(res.statusCode).toBe(502);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.json().providers_tried).toEqual([expect.objectContaining({ id: 'crtsh', status: 'failed' })]);
    expect(dns.queries).toHaveLength(0);
    const before = crtsh.count();
    crtsh.fault = 'none';
    const again = await a.inject('/api/subdomains?domain=corp.test');
    expect(again.statusCode).toBe(200);
    expect(crtsh.count()).toBe(before + 1);
  });

  it("at crt.sh's 10 000-name limit, says the names come from a partial, arbitrary subset", async () => {
    const res = await (await app()).inject('/api/subdomains?domain=big.test');
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.truncated).toBe(true);
    expect(body.gaps).toEqual([
      { reason: 'result_cap', detail: expect.stringMatching(/10,000 matching names .*arbitrary subset/) },
      expect.objectContaining({ reason: 'unchecked_names' }),
      expect.objectContaining({ reason: 'host_cap' }),
    ]);
    expect(crtsh.searches('big.test')).toHaveLength(1);
  });

  it('when DNS fails, hosts are lookup_failed (not historical) and the answer is not cached', async () => {
    dns.set({ rcode: 'SERVFAIL' });
    const a = await app();
    const res = await a.inject('/api/subdomains?domain=corp.test');
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.dns_wildcard.detected).toBeNull();
    expect(body.active_count).toBe(0);
    expect((body.hosts as Host[]).slice(0, 50).every((h) => h.status === 'lookup_failed')).toBe(true);
    expect(res.headers['cache-control']).toBe('public, max-age=0');

    dns.reset();
    const again = await a.inject('/api/subdomains?domain=corp.test');
    expect(again.headers['x-service-cache']).toBe('MISS');
    expect(again.json().active_count).toBe(17);
  });

  it('counts as expensive: the 7th measurement in a minute is 429 with Retry-After; a cached answer is not one', async () => {
    const a = await app({ expensive: 6 });
    for (let i = 0; i < 6; i++)
      expect((await a.inject('/api/subdomains?domain=corp.test')).statusCode).toBe(200);
    for (let i = 2; i <= 6; i++)
      expect((await a.inject(`/api/subdomains?domain=corp${i}.test`)).statusCode, `corp${i}`).toBe(200);
    const seventh = await a.inject('/api/subdomains?domain=corp7.test');
    expect(seventh.statusCode).toBe(429);
    expect(Number(seventh.headers['retry-after'])).toBeGreaterThan(0);
    // /api/certificates is not expensive.
    expect((await a.inject('/api/certificates?domain=corp.test')).statusCode).toBe(200);
  });

  it('400 for a bad domain, before any upstream request', async () => {
    const res = await (await app()).inject('/api/subdomains?domain=-bad-.test');
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toMatch(/^domain /);
    expect(crtsh.count()).toBe(0);
    expect(dns.queries).toHaveLength(0);
  });
});
