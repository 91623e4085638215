/**
 * The iterative engine (src/dns-engine/) against fake authoritative servers
 * at 127.0.0.x:53 (test/fixtures/dns-engine/hierarchy.ts): resolution from
 * the root zone cut by zone cut, glue and its bailiwick, name servers without
 * glue, CNAME chains, the limits that end a loop or an NXNS referral, TCP after
 * truncation, server selection by round-trip time, outbound safety for every
 * server address, and the infrastructure cache. Every assertion on cost is a
 * count of queries the fakes received, never a duration.
 *
 * Port 53: run in a network namespace (vitest.config.ts NEEDS_LOW_PORTS).
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { MemoryCache } from '../../src/cache/memory.js';
import { RedisCache } from '../../src/cache/redis.js';
import {
  IterativeResolver,
  type IterativeResolverOptions,
  type ResolveResult,
} from '../../src/dns-engine/index.js';
import { ProviderError } from '../../src/errors.js';
import { redisSuite } from '../conformance/redis-suite.js';
import { type FakeHierarchy, startAuthoritativeServers } from '../fakes/dns-authoritative.js';
import { redisBinary } from '../fakes/redis.js';
import { ADDR, ALLOW_CIDRS, HIERARCHY } from '../fixtures/dns-engine/hierarchy.js';

let h: FakeHierarchy;

beforeAll(async () => {
  h = await startAuthoritativeServers(HIERARCHY);
});
afterAll(() => h?.close());
beforeEach(() => {
  h.reset();
  h.server(ADDR.slowDead).set({ drop: false });
  h.server(ADDR.big).set({ truncateUdp: false });
});

/** A fresh engine and cache (so a fresh SRTT table); servers tried in the order listed among equals. */
function engine(opts: Partial<IterativeResolverOptions> = {}) {
  const cache = new MemoryCache();
  const resolver = new IterativeResolver({
    cache,
    rootHints: [ADDR.root],
    allowCidrs: ALLOW_CIDRS,
    // Loopback answers in microseconds; a second is far from any answer and keeps a busy CI honest.
    minTimeoutMs: 1000,
    maxTimeoutMs: 3000,
    // Fisher–Yates with j = i never swaps: equally fast servers keep the order the zone lists them in.
    random: () => 0.999_999,
    ...opts,
  });
  return { resolver, cache };
}

const received = (address: string) => h.server(address).queries.length;
const codes = (r: { findings: { code: string }[] }) => r.findings.map((f) => f.code);
const data = (r: ResolveResult, type: string) =>
  r.answer.filter((rr) => rr.type === type).map((rr) => rr.data);

describe('iterative resolution', () => {
  it('walks from the root through each zone cut with glue: 3 queries for www.example.test', async () => {
    const { resolver } = engine();
    const r = await resolver.resolve('www.example.test', 'A');
    expect(r).toMatchObject({ status: 'answer', rcode: 'NOERROR', aa: true });
    expect(data(r, 'A')).toEqual(['192.0.2.1']);
    // The RRSIG over the A RRset comes with it; the TXT at the same name does not.
    expect(r.answer.map((rr) => rr.type).sort()).toEqual(['A', 'RRSIG']);
    expect(r.path.map((c) => [c.zone, c.from])).toEqual([
      ['.', 'hints'],
      ['test', 'referral'],
      ['example.test', 'referral'],
    ]);
    expect(r.path[2]?.nameservers).toEqual([
      { name: 'ns1.example.test', addresses: [ADDR.example1] },
      { name: 'ns2.example.test', addresses: [ADDR.example2] },
    ]);
    expect(h.total()).toBe(3);
    expect(r.queries).toHaveLength(3);
    expect(r.queries.map((q) => [q.server, q.zone, q.transport, q.rcode])).toEqual([
      [ADDR.root, '.', 'udp', 'NOERROR'],
      [ADDR.tldTest, 'test', 'udp', 'NOERROR'],
      [ADDR.example1, 'example.test', 'udp', 'NOERROR'],
    ]);
    expect(r.findings).toEqual([]);
  });

  it('asks as a validating resolver: RD=0, CD=1, EDNS0 with a 1232-byte buffer and DO, random ids and source ports', async () => {
    const { resolver } = engine();
    await resolver.resolve('www.example.test', 'A');
    await resolver.resolve('www.glueless.test', 'A');
    const all = HIERARCHY.flatMap((s) => h.server(s.address).queries);
    expect(all.length).toBeGreaterThanOrEqual(6);
    for (const q of all) {
      expect(q).toMatchObject({ rd: false, cd: true, edns: { udpPayloadSize: 1232, do: true } });
    }
    expect(new Set(all.map((q) => q.port)).size).toBe(all.length);
    expect(new Set(all.map((q) => q.id)).size).toBeGreaterThan(all.length - 2);
  });

  it('looks the name server up when the referral has no glue, and caches its address', async () => {
    const { resolver } = engine();
    const r = await resolver.resolve('www.glueless.test', 'A');
    expect(r.status).toBe('answer');
    expect(data(r, 'A')).toEqual(['192.0.2.3']);
    // root, test (no glue), then ns1.hoster.alt: root, alt, hoster.alt; then the answer.
    expect(h.total()).toBe(6);
    expect(received(ADDR.tldAlt)).toBe(1);
    expect(r.path.at(-1)).toEqual({
      zone: 'glueless.test',
      nameservers: [{ name: 'ns1.hoster.alt', addresses: [ADDR.hoster] }],
      from: 'referral',
    });
    h.reset();
    await resolver.resolve('ftp.glueless.test', 'A');
    expect(h.total()).toBe(1);
  });

  it('ignores glue from outside the referring zone, reports it and never contacts that address', async () => {
    const { resolver } = engine();
    const r = await resolver.resolve('www.sub.evil.test', 'A');
    expect(r.status).toBe('answer');
    expect(data(r, 'A')).toEqual(['192.0.2.5']);
    expect(h.server(ADDR.attacker).packets).toBe(0);
    // root, test, evil.test; ns1.bank.test from test and bank.test; then the answer from bank's server.
    expect(h.total()).toBe(6);
    expect(r.findings).toContainEqual(
      expect.objectContaining({
        code: 'glue_out_of_bailiwick',
        severity: 'warning',
        zone: 'evil.test',
        server: ADDR.evil,
        name: 'ns1.bank.test',
      }),
    );
    // Nor did it enter the cache: the name server is where bank.test's own delegation says.
    const ns = await resolver.resolve('ns1.bank.test', 'A');
    expect(data(ns, 'A')).toEqual([ADDR.bank]);
    expect(h.server(ADDR.attacker).packets).toBe(0);
  });

  it('follows a CNAME chain from one zone into another', async () => {
    const { resolver } = engine();
    const r = await resolver.resolve('alias.example.test', 'A');
    expect(r.status).toBe('answer');
    expect(r.answer.map((rr) => [rr.name, rr.type, rr.data])).toEqual([
      ['alias.example.test', 'CNAME', 'www.glueless.test'],
      ['www.glueless.test', 'A', '192.0.2.3'],
    ]);
    expect(r.responses.map((z) => z.zone)).toEqual(['example.test', 'glueless.test']);
    // root, test, example.test; then test (cached root cut skipped), the hoster lookup (root, alt, hoster), the answer.
    expect(h.total()).toBe(8);
  });

  it('ends a CNAME loop with a finding', async () => {
    const { resolver } = engine();
    const r = await resolver.resolve('loop1.example.test', 'A');
    expect(r).toMatchObject({ status: 'failed', rcode: 'SERVFAIL' });
    expect(r.findings).toContainEqual(
      expect.objectContaining({ code: 'cname_loop', severity: 'error', name: 'loop1.example.test' }),
    );
    expect(h.total()).toBe(8);
  });

  it('ends a delegation loop (each zone served only by a name in the other) after 3 queries', async () => {
    const { resolver } = engine();
    const r = await resolver.resolve('www.loop-a.test', 'A');
    expect(r.status).toBe('failed');
    expect(codes(r)).toContain('delegation_loop');
    expect(r.findings.find((f) => f.code === 'delegation_loop')?.detail).toContain(
      'ns.loop-b.test → ns.loop-a.test → ns.loop-b.test',
    );
    expect(h.total()).toBe(3);
  });

  it('stops looking name servers up past the depth limit', async () => {
    const { resolver } = engine();
    const r = await resolver.resolve('www.d1.test', 'A');
    expect(r.status).toBe('failed');
    expect(r.findings).toContainEqual(
      expect.objectContaining({ code: 'depth_limit', zone: 'd5.test', name: 'ns.d6.test' }),
    );
    // root, test; then test once for each of ns.d2.test .. ns.d5.test; ns.d6.test is not looked up.
    expect(r.queries.map((q) => q.qname)).toEqual([
      'www.d1.test',
      'www.d1.test',
      'ns.d2.test',
      'ns.d3.test',
      'ns.d4.test',
      'ns.d5.test',
    ]);
    expect(h.total()).toBe(6);
  });

  it('ends an NXNS referral (30 name servers under a zone that does not exist) after 6 lookups', async () => {
    const { resolver } = engine();
    const r = await resolver.resolve('www.nxns.evil.test', 'A');
    expect(r.status).toBe('failed');
    expect(r.findings).toContainEqual(
      expect.objectContaining({ code: 'nxns_referral', zone: 'nxns.evil.test' }),
    );
    // root, test, evil.test (thirty NS records overflow 1232 bytes: UDP, then TCP); then one
    // NXDOMAIN from test per name looked up, and no more than 6.
    expect(received(ADDR.evil)).toBe(2);
    expect(received(ADDR.tldTest)).toBe(1 + 6);
    expect(h.total()).toBe(10);
    expect(r.queries).toHaveLength(10);
    expect(r.queries.filter((q) => q.rcode === 'NXDOMAIN').map((q) => q.qname)).toEqual(
      [1, 2, 3, 4, 5, 6].map((i) => `ns${i}.nowhere.test`),
    );
  });

  it('asks again over TCP when the UDP answer is truncated', async () => {
    h.server(ADDR.big).set({ truncateUdp: true });
    const { resolver } = engine();
    const r = await resolver.resolve('www.big.test', 'A');
    expect(data(r, 'A')).toEqual(['192.0.2.8']);
    expect(h.server(ADDR.big).queries.map((q) => q.transport)).toEqual(['udp', 'tcp']);
    expect(r.queries.slice(-2)).toEqual([
      expect.objectContaining({ server: ADDR.big, transport: 'udp', truncated: true }),
      expect.objectContaining({ server: ADDR.big, transport: 'tcp', rcode: 'NOERROR' }),
    ]);
  });

  it('retries a silent server at the next, and asks the fast one first from then on (smoothed RTT)', async () => {
    h.server(ADDR.slowDead).set({ drop: true });
    // First the listed order (the silent server first); then swaps, which would put the silent
    // server first again if it were still among the fast ones.
    let swap = false;
    const { resolver } = engine({ random: () => (swap ? 0 : 0.999_999) });
    const first = await resolver.resolve('www.slow.test', 'A');
    expect(data(first, 'A')).toEqual(['192.0.2.7']);
    expect(received(ADDR.slowDead)).toBe(1);
    expect(received(ADDR.slowLive)).toBe(1);
    expect(h.total()).toBe(4);
    expect(first.findings).toContainEqual(
      expect.objectContaining({ code: 'server_unresponsive', server: ADDR.slowDead, zone: 'slow.test' }),
    );
    expect(first.queries.find((q) => q.server === ADDR.slowDead)).toMatchObject({
      rcode: null,
      error: 'timeout',
    });

    swap = true;
    const second = await resolver.resolve('www2.slow.test', 'A');
    expect(data(second, 'A')).toEqual(['192.0.2.17']);
    expect(second.queries.map((q) => q.server)).toEqual([ADDR.slowLive]);
    expect(received(ADDR.slowDead)).toBe(1);
  });

  it('passes over a server that cannot be reached, reports it, and asks it last from then on', async () => {
    // Nothing listens at 127.0.0.9: the datagram comes back as a port unreachable (ECONNREFUSED).
    const { resolver } = engine({ rootHints: ['127.0.0.9', ADDR.root] });
    const first = await resolver.resolve('www.example.test', 'A');
    expect(first.status).toBe('answer');
    expect(first.queries[0]).toMatchObject({ server: '127.0.0.9', rcode: null, error: 'network' });
    expect(first.findings).toContainEqual(
      expect.objectContaining({ code: 'server_unresponsive', server: '127.0.0.9', zone: '.' }),
    );
    const second = await resolver.resolve('www.hoster.alt', 'A');
    expect(second.queries.map((q) => q.server)).not.toContain('127.0.0.9');
  });

  it('rejects when the caller’s signal aborts, without waiting for a silent server', async () => {
    h.server(ADDR.slowDead).set({ drop: true });
    const { resolver } = engine({ minTimeoutMs: 3000 });
    const controller = new AbortController();
    const pending = resolver.resolve('www.slow.test', 'A', { signal: controller.signal });
    await vi.waitFor(() => expect(received(ADDR.slowDead)).toBe(1));
    controller.abort(new ProviderError('timeout', 'the request deadline passed'));
    await expect(pending).rejects.toMatchObject({ name: 'ProviderError', kind: 'timeout' });
    expect(received(ADDR.slowLive)).toBe(0);
  });

  it('reports a lame server and gets the answer from the zone’s other server', async () => {
    const { resolver } = engine();
    const r = await resolver.resolve('www.lame.test', 'A');
    expect(data(r, 'A')).toEqual(['192.0.2.6']);
    expect(r.findings).toContainEqual(
      expect.objectContaining({
        code: 'lame_server',
        zone: 'lame.test',
        server: ADDR.lame,
        name: 'ns1.lame.test',
      }),
    );
    expect(received(ADDR.lame)).toBe(1);
  });

  it('refuses a referral to an address outside outbound safety: reported, never contacted', async () => {
    const { resolver } = engine();
    const r = await resolver.resolve('www.private.test', 'A');
    expect(r.status).toBe('failed');
    expect(r.findings).toContainEqual(
      expect.objectContaining({ code: 'address_refused', server: ADDR.private, name: 'ns1.private.test' }),
    );
    expect(codes(r)).toContain('no_usable_servers');
    expect(h.server(ADDR.private).packets).toBe(0);
    expect(h.total()).toBe(2);
  });

  it('resolves a sibling name with one query once the zone cut is cached', async () => {
    const { resolver } = engine();
    await resolver.resolve('www.example.test', 'A');
    h.reset();
    const r = await resolver.resolve('mail.example.test', 'A');
    expect(data(r, 'A')).toEqual(['192.0.2.2']);
    expect(h.total()).toBe(1);
    // The path still runs from the root: the cuts above come from the hints and the cache.
    expect(r.path.map((c) => [c.zone, c.from])).toEqual([
      ['.', 'hints'],
      ['test', 'cache'],
      ['example.test', 'cache'],
    ]);
  });

  it('shares the infrastructure cache between engines on one cache (as instances do through Redis)', async () => {
    const { resolver, cache } = engine();
    await resolver.resolve('www.example.test', 'A');
    h.reset();
    const other = engine({ cache }).resolver;
    await other.resolve('mail.example.test', 'A');
    expect(h.total()).toBe(1);
  });

  it('asks DS of the parent zone, where DS lives; DS and DNSKEY answers are then cached', async () => {
    const { resolver } = engine();
    await resolver.resolve('www.example.test', 'A');
    h.reset();
    const r = await resolver.resolve('example.test', 'DS');
    expect(r).toMatchObject({ status: 'answer', aa: true });
    expect(r.answer.map((rr) => rr.type)).toEqual(['DS']);
    expect(r.responses.map((z) => [z.zone, z.from])).toEqual([['test', 'server']]);
    expect(r.queries.map((q) => q.server)).toEqual([ADDR.tldTest]);
    const keys = await resolver.resolve('example.test', 'DNSKEY');
    expect(keys.responses.map((z) => [z.zone, z.from])).toEqual([['example.test', 'server']]);
    h.reset();
    const again = await resolver.resolve('example.test', 'DS');
    const keysAgain = await resolver.askZone('example.test', 'example.test', 'DNSKEY');
    expect(h.total()).toBe(0);
    expect(again.responses.map((z) => [z.zone, z.from])).toEqual([['test', 'cache']]);
    expect(keysAgain.response?.from).toBe('cache');
  });

  it('answers NXDOMAIN and NODATA with the zone’s SOA', async () => {
    const { resolver } = engine();
    const nx = await resolver.resolve('nope.example.test', 'A');
    expect(nx).toMatchObject({ status: 'nxdomain', rcode: 'NXDOMAIN', answer: [] });
    expect(nx.authority.map((rr) => [rr.name, rr.type])).toEqual([['example.test', 'SOA']]);
    const nodata = await resolver.resolve('www.example.test', 'MX');
    expect(nodata).toMatchObject({ status: 'nodata', rcode: 'NOERROR' });
  });

  it('stops at the query budget with a finding', async () => {
    const { resolver } = engine({ queryBudget: 2 });
    const r = await resolver.resolve('www.example.test', 'A');
    expect(r.status).toBe('failed');
    expect(codes(r)).toEqual(['budget_exhausted']);
    expect(h.total()).toBe(2);
  });
});

describe('askZone', () => {
  it('asks the zone’s own servers for its DNSKEY, and the parent’s for its DS; both cached whole', async () => {
    const { resolver } = engine();
    const keys = await resolver.askZone('example.test', 'example.test', 'DNSKEY');
    expect(keys.status).toBe('answer');
    expect(keys.response).toMatchObject({ zone: 'example.test', aa: true, from: 'server' });
    expect(keys.response?.answer.map((rr) => rr.type)).toEqual(['DNSKEY']);
    // Walking down to the cut costs root and test; then the question itself.
    expect(h.total()).toBe(3);
    expect([ADDR.example1, ADDR.example2]).toContain(keys.response?.server);

    const ds = await resolver.askZone('test', 'example.test', 'DS');
    expect(ds.response?.answer.map((rr) => rr.type)).toEqual(['DS']);
    expect(ds.queries.map((q) => q.server)).toEqual([ADDR.tldTest]);

    h.reset();
    const again = await resolver.askZone('example.test', 'example.test', 'DNSKEY');
    const dsAgain = await resolver.askZone('test', 'example.test', 'DS');
    expect(h.total()).toBe(0);
    expect(again.response?.from).toBe('cache');
    const key = again.response?.answer[0] as { data: { key: Buffer; flags: number } };
    expect(Buffer.isBuffer(key.data.key)).toBe(true);
    expect(key.data.flags).toBe(257);
    expect(dsAgain.status).toBe('answer');
  });

  it('asks the root for its own keys at the hinted addresses', async () => {
    const { resolver } = engine();
    const r = await resolver.askZone('.', '.', 'DNSKEY');
    // The fake root is unsigned: an authoritative NODATA.
    expect(r).toMatchObject({ status: 'nodata', response: { zone: '.', server: ADDR.root, aa: true } });
    expect(h.total()).toBe(1);
  });

  it('says so when the zone is not delegated', async () => {
    const { resolver } = engine();
    const r = await resolver.askZone('www.example.test', 'www.example.test', 'DNSKEY');
    expect(r.status).toBe('failed');
    expect(codes(r)).toContain('not_a_zone');
  });
});

describe.skipIf(!redisBinary)('the infrastructure cache in Redis', () => {
  const redis = redisSuite();

  it('is shared by instances: a sibling name costs one query, a cached DNSKEY none, Buffers intact', async () => {
    const client = await redis.fresh();
    // No in-process tier: every read is Redis's JSON.
    const one = engine({ cache: new RedisCache(client) }).resolver;
    await one.resolve('www.example.test', 'A');
    await one.askZone('example.test', 'example.test', 'DNSKEY');
    expect(await client.keys('netdiag:cache:dns-engine:*')).toEqual(
      expect.arrayContaining([
        'netdiag:cache:dns-engine:ns:test',
        'netdiag:cache:dns-engine:ns:example.test',
        'netdiag:cache:dns-engine:answer:example.test|example.test|DNSKEY',
      ]),
    );
    h.reset();
    const other = engine({ cache: new RedisCache(await redis.client()) }).resolver;
    const r = await other.resolve('mail.example.test', 'A');
    expect(r.status).toBe('answer');
    const keys = await other.askZone('example.test', 'example.test', 'DNSKEY');
    expect(h.total()).toBe(1);
    expect(keys.response?.from).toBe('cache');
    const key = keys.response?.answer[0] as { data: { key: Buffer } };
    expect(Buffer.isBuffer(key.data.key)).toBe(true);
  });
});
