/**
 * GET /api/spf end to end: the real app and resolver client against the fake
 * DNS server. Beside the openspf suite (test/conformance), these check what
 * the suite does not: the trace, the matched mechanism, the paste-ready
 * headers, input errors, attribution, caching, and the line between the SPF
 * result temperror and the service's own 502. Every result is also asked of
 * mailauth (a peer implementation, strict RFC 7208 mode) over the same zones,
 * and the two must agree.
 */
import { hostname } from 'node:os';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type FakeDnsServer, startFakeDnsServer } from '../fakes/dns-server.js';
import { type FakeRecord, testZone } from '../fakes/dns-zones.js';
import { buildTestApp } from '../helper.js';
import { mailauthSpf } from '../unit/features/spf/mailauth-spf-peer.js';

const txt = (name: string, text: string): FakeRecord => ({ name, type: 'TXT', data: [text] });
const a = (name: string, address: string): FakeRecord => ({ name, type: 'A', data: address });
const aaaa = (name: string, address: string): FakeRecord => ({ name, type: 'AAAA', data: address });
const mx = (name: string, exchange: string, preference = 10): FakeRecord => ({
  name,
  type: 'MX',
  data: { preference, exchange },
});

/** A chain of includes that needs `n` DNS-querying terms before it ends in `-all`. */
function includeChain(prefix: string, n: number): FakeRecord[] {
  return Array.from({ length: n }, (_, i) =>
    txt(
      `${prefix}${i}.spf.test`,
      i === n - 1 ? 'v=spf1 ip4:203.0.113.0/24 -all' : `v=spf1 include:${prefix}${i + 1}.spf.test -all`,
    ),
  );
}

const ZONE = testZone('spf.test', [
  txt('include.spf.test', 'v=spf1 include:_spf.vendor.spf.test -all'),
  txt('_spf.vendor.spf.test', 'v=spf1 ip4:192.0.2.0/24 ip6:2001:db8:1::/48 ~all'),
  txt('explain.spf.test', 'v=spf1 a mx -all exp=why.explain.spf.test'),
  txt('why.explain.spf.test', "%{i} is not one of %{d}'s designated mail servers."),
  a('explain.spf.test', '198.51.100.1'),
  mx('explain.spf.test', 'mx.explain.spf.test'),
  a('mx.explain.spf.test', '198.51.100.2'),
  aaaa('mx.explain.spf.test', '2001:db8:2::25'),
  txt('cidr.spf.test', 'v=spf1 mx/24//64 -all'),
  mx('cidr.spf.test', 'mx.explain.spf.test'),
  txt('soft.spf.test', 'v=spf1 ip4:192.0.2.1 ~all'),
  txt('neutral.spf.test', 'v=spf1 ip4:192.0.2.1'),
  txt('redirect.spf.test', 'v=spf1 ip4:198.51.100.200 redirect=_spf.vendor.spf.test'),
  txt('two.spf.test', 'v=spf1 -all'),
  txt('two.spf.test', 'v=spf1 +all'),
  txt('syntax.spf.test', 'v=spf1 ip4:192.0.2.1 foo:bar -all'),
  txt('macro.spf.test', 'v=spf1 exists:%{l}.%{i}.users.spf.test -all'),
  a('alice.192.0.2.77.users.spf.test', '127.0.0.2'),
  txt('voids.spf.test', 'v=spf1 a:n1.spf.test a:n2.spf.test a:n3.spf.test +all'),
  txt('mail.helo.spf.test', 'v=spf1 a -all'),
  a('mail.helo.spf.test', '192.0.2.25'),
  txt('nospf.spf.test', 'not an spf record'),
  txt('long.spf.test', 'v=spf1 include:l0.spf.test -all'),
  ...includeChain('l', 11),
  txt('fits.spf.test', 'v=spf1 include:f0.spf.test -all'),
  ...includeChain('f', 10),
]);

let dns: FakeDnsServer;

beforeAll(async () => {
  dns = await startFakeDnsServer({ zones: [ZONE] });
});
afterAll(async () => dns?.close());
beforeEach(() => dns.reset());

function app(config: Record<string, unknown> = {}) {
  return buildTestApp({
    config: { dnsResolvers: [dns.udp], rateLimitGeneral: { points: 1000, seconds: 60 }, ...config },
  });
}

async function spf(query: Record<string, string>) {
  const res = await (await app()).inject({ url: '/api/spf', query });
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}

/** mailauth's answer over the same fake DNS server. */
function peer(ip: string, sender: string, helo: string) {
  return mailauthSpf(dns.udp, { ip, sender, helo });
}

describe('GET /api/spf agrees with mailauth (strict RFC 7208) on the same zones', () => {
  it.each([
    ['192.0.2.10', 'bob@include.spf.test', 'pass'],
    ['2001:db8:1::9', 'bob@include.spf.test', 'pass'],
    ['203.0.113.9', 'bob@include.spf.test', 'fail'],
    ['198.51.100.1', 'bob@explain.spf.test', 'pass'],
    ['198.51.100.2', 'bob@explain.spf.test', 'pass'],
    ['198.51.100.9', 'bob@explain.spf.test', 'fail'],
    ['198.51.100.99', 'x@cidr.spf.test', 'pass'],
    ['2001:db8:2::99', 'x@cidr.spf.test', 'pass'],
    ['2001:db8:3::1', 'x@cidr.spf.test', 'fail'],
    ['192.0.2.2', 'x@soft.spf.test', 'softfail'],
    ['192.0.2.2', 'x@neutral.spf.test', 'neutral'],
    ['203.0.113.9', 'x@redirect.spf.test', 'softfail'],
    ['198.51.100.200', 'x@redirect.spf.test', 'pass'],
    ['192.0.2.1', 'x@two.spf.test', 'permerror'],
    ['192.0.2.1', 'x@syntax.spf.test', 'permerror'],
    ['192.0.2.77', 'alice@macro.spf.test', 'pass'],
    ['192.0.2.77', 'bob@macro.spf.test', 'fail'],
    ['192.0.2.1', 'x@voids.spf.test', 'permerror'],
    ['192.0.2.1', 'x@nospf.spf.test', 'none'],
    ['192.0.2.1', 'x@absent.spf.test', 'none'],
    ['203.0.113.5', 'x@fits.spf.test', 'pass'],
    ['203.0.113.5', 'x@long.spf.test', 'permerror'],
  ])('%s as %s: %s', async (ip, sender, expected) => {
    const ours = await spf({ ip, sender, helo: 'client.example' });
    expect(ours.result).toBe(expected);
    expect((await peer(ip, sender, 'client.example')).result).toBe(ours.result);
  });
});

describe('GET /api/spf answers', () => {
  it("names the service's own name as receiver, never the machine's host name (issue 29)", async () => {
    const res = await (await app({ smtpHeloName: 'checker.netdiag.test' })).inject({
      url: '/api/spf',
      query: { ip: '203.0.113.9', sender: 'bob@explain.spf.test' },
    });
    const body = res.json();
    expect(body.received_spf).toContain('receiver=checker.netdiag.test;');
    expect(body.received_spf).toMatch(/^fail \(checker\.netdiag\.test: /);
    expect(body.received_spf).not.toContain(`receiver=${hostname()};`);
    expect(body.received_spf).not.toContain(`(${hostname()}:`);
  });

  it('names the mechanism that matched, where, and nests the include in the trace', async () => {
    const body = await spf({ ip: '192.0.2.10', sender: 'bob@include.spf.test', helo: 'mail.example.com' });
    expect(body).toMatchObject({
      domain: 'include.spf.test',
      ip: '192.0.2.10',
      sender: 'bob@include.spf.test',
      helo: 'mail.example.com',
      identity: 'mailfrom',
      result: 'pass',
      matched: { mechanism: 'ip4:192.0.2.0/24', record_domain: '_spf.vendor.spf.test', depth: 1 },
      lookups: 1,
      lookup_limit: 10,
      void_lookups: 0,
      void_lookup_limit: 2,
    });
    const steps = body.trace.map(
      (s: { step: string; depth: number; term?: string; outcome?: string; result?: string }) =>
        [s.depth, s.step, s.term ?? s.result ?? '', s.outcome ?? ''].join(' '),
    );
    expect(steps).toEqual([
      '0 record  ',
      '0 term include:_spf.vendor.spf.test match',
      '1 record  ',
      '1 term ip4:192.0.2.0/24 match',
      '1 term ip6:2001:db8:1::/48 not_reached',
      '1 term ~all not_reached',
      '1 result pass ',
      '0 term -all not_reached',
      '0 result pass ',
    ]);
    expect(body.trace[0].record).toBe('v=spf1 include:_spf.vendor.spf.test -all');
    expect(body.trace[2]).toMatchObject({ domain: '_spf.vendor.spf.test', via: 'include' });
    expect(body.received_spf).toMatch(
      /^pass \([^)]+: domain of bob@include\.spf\.test designates 192\.0\.2\.10 as permitted sender\) client-ip=192\.0\.2\.10; envelope-from=bob@include\.spf\.test; helo=mail\.example\.com; receiver=[^;]+; identity=mailfrom; mechanism=ip4:192\.0\.2\.0\/24;$/,
    );
    expect(body.authentication_results).toBe(
      'spf=pass (domain of bob@include.spf.test designates 192.0.2.10 as permitted sender) smtp.mailfrom=include.spf.test',
    );
    expect(body.source_id).toMatch(/./);
    expect(body.providers_tried).toEqual([expect.objectContaining({ status: 'ok' })]);
  });

  it('expands the exp= explanation on a fail, as mailauth does', async () => {
    const body = await spf({ ip: '198.51.100.9', sender: 'bob@explain.spf.test' });
    expect(body.result).toBe('fail');
    expect(body.explanation).toBe("198.51.100.9 is not one of explain.spf.test's designated mail servers.");
    expect((await peer('198.51.100.9', 'bob@explain.spf.test', 'client.example')).explanation).toBe(
      body.explanation,
    );
    expect(body.matched).toEqual({ mechanism: '-all', record_domain: 'explain.spf.test', depth: 0 });
  });

  it('says where the 11th DNS-querying term was reached', async () => {
    const body = await spf({ ip: '203.0.113.5', sender: 'x@long.spf.test' });
    expect(body.result).toBe('permerror');
    expect(body.lookups).toBe(11);
    expect(body.problem).toBe(
      'more than 10 DNS-querying terms: "include:l10.spf.test" at l9.spf.test is the 11th (§4.6.4)',
    );
    expect(body.received_spf).toContain('problem="more than 10 DNS-querying terms');
  });

  it('stops at the third void lookup', async () => {
    const body = await spf({ ip: '192.0.2.1', sender: 'x@voids.spf.test' });
    expect(body).toMatchObject({ result: 'permerror', void_lookups: 3 });
    expect(body.problem).toContain('more than 2 void lookups: "a:n3.spf.test"');
  });

  it('reports the full address in Authentication-Results when the policy used the local part', async () => {
    const body = await spf({ ip: '192.0.2.77', sender: 'alice@macro.spf.test' });
    expect(body.result).toBe('pass');
    expect(body.trace[1]).toMatchObject({ target: 'alice.192.0.2.77.users.spf.test', outcome: 'match' });
    expect(body.authentication_results).toMatch(/ smtp\.mailfrom=alice@macro\.spf\.test$/);
  });

  it('checks the HELO identity when MAIL FROM is empty (RFC 7208 §2.4)', async () => {
    const body = await spf({ ip: '192.0.2.25', sender: '', helo: 'mail.helo.spf.test' });
    expect(body).toMatchObject({
      domain: 'mail.helo.spf.test',
      sender: 'postmaster@mail.helo.spf.test',
      identity: 'helo',
      result: 'pass',
    });
    expect(body.received_spf).not.toContain('envelope-from');
    expect(body.authentication_results).toMatch(/ smtp\.helo=mail\.helo\.spf\.test$/);
  });

  it('checks the policy of `domain` when given, with postmaster as the local part of "@domain"', async () => {
    const body = await spf({ ip: '192.0.2.10', sender: '@other.example', domain: 'include.spf.test' });
    expect(body).toMatchObject({
      domain: 'include.spf.test',
      sender: 'postmaster@other.example',
      result: 'pass',
    });
  });

  it('compares an IPv4-mapped IPv6 client as IPv4 (RFC 7208 §5)', async () => {
    const body = await spf({ ip: '::ffff:192.0.2.10', sender: 'bob@include.spf.test' });
    expect(body).toMatchObject({ ip: '192.0.2.10', result: 'pass' });
  });

  it('caches an answer, and never a temperror', async () => {
    const server = await app();
    const ask = () =>
      server.inject({ url: '/api/spf', query: { ip: '192.0.2.10', sender: 'bob@include.spf.test' } });
    expect((await ask()).headers['x-service-cache']).toBe('MISS');
    expect((await ask()).headers['x-service-cache']).toBe('HIT');

    dns.set({ drop: true });
    const slow = await app({ providerTimeoutMs: 1_000 });
    const temp = () =>
      slow.inject({ url: '/api/spf', query: { ip: '192.0.2.10', sender: 'x@soft.spf.test' } });
    const first = await temp();
    expect(first.statusCode).toBe(200);
    expect(first.json()).toMatchObject({ result: 'temperror' });
    expect(first.json().providers_tried).toEqual([expect.objectContaining({ status: 'failed' })]);
    expect(first.json().problem).toContain('DNS lookup of TXT soft.spf.test failed: timeout');
    expect((await temp()).headers['x-service-cache']).toBe('MISS');
  });

  it("is a temperror when the domain's DNS answers SERVFAIL inside the evaluation (RFC 7208 §5)", async () => {
    const server = await app();
    dns.set({ rcode: 'SERVFAIL' });
    const res = await server.inject({
      url: '/api/spf',
      query: { ip: '192.0.2.10', sender: 'bob@include.spf.test' },
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ result: 'temperror' });
    expect(res.json().received_spf).toMatch(/^temperror \(/);
    expect(res.json().providers_tried[0].error).toMatch(/^upstream_error: .*SERVFAIL/);
  });

  it('is a 502 with providers_tried when no resolver can be reached at all', async () => {
    const res = await (await app({ dnsResolvers: ['https://127.0.0.1:9/dns-query'] })).inject({
      url: '/api/spf',
      query: { ip: '192.0.2.10', sender: 'bob@include.spf.test' },
    });
    expect(res.statusCode).toBe(502);
    expect(res.json().providers_tried).toEqual([expect.objectContaining({ status: 'failed' })]);
  });

  it('is in the general rate-limit group', async () => {
    const res = await (await buildTestApp({ config: { dnsResolvers: [dns.udp] } })).inject({
      url: '/api/spf',
      query: { ip: '192.0.2.10', sender: 'bob@include.spf.test' },
    });
    expect(res.headers['ratelimit-policy']).toMatch(/^"general";/);
    expect(res.headers['ratelimit-policy']).not.toContain('expensive');
  });
});

describe('GET /api/spf refuses bad input with a 400 naming the parameter', () => {
  it.each([
    [{}, 'ip'],
    [{ ip: '' }, 'ip'],
    [{ ip: '192.0.2', sender: 'a@b.example' }, 'ip'],
    [{ ip: '1.2.3.4.5', sender: 'a@b.example' }, 'ip'],
    [{ ip: 'fe80::1%eth0', sender: 'a@b.example' }, 'ip'],
    [{ ip: '192.0.2.1' }, 'sender'],
    [{ ip: '192.0.2.1', sender: '' }, 'sender'],
    [{ ip: '192.0.2.1', sender: 'user@' }, 'sender'],
    [{ ip: '192.0.2.1', sender: 'a\tb@example.com' }, 'sender'],
    [{ ip: '192.0.2.1', helo: 'bad\u0001helo' }, 'helo'],
    [{ ip: '192.0.2.1', domain: 'not a domain!' }, 'domain'],
  ])('%j → %s', async (query, param) => {
    const res = await (await app()).inject({ url: '/api/spf', query: query as Record<string, string> });
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json().error).toMatch(new RegExp(`\\b${param}\\b`));
  });

  it('answers none (not 400) for identities RFC 7208 §4.3 says have no policy: a domain literal, a bare name', async () => {
    expect((await spf({ ip: '192.0.2.1', sender: 'foo@[192.0.2.1]' })).result).toBe('none');
    expect((await spf({ ip: '192.0.2.1', sender: '', helo: 'OEMCOMPUTER' })).result).toBe('none');
  });
});
