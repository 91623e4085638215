/**
 * rdap.org's published limit, end to end: a client may send it 10 requests in
 * 10 seconds, past which Cloudflare answers 429 with Retry-After
 * (about.rdap.org, "Rate Limits"; the fake in test/fakes/rdap.ts). The service
 * keeps a budget under that limit (per instance, or shared in Redis) and
 * honours the 429's Retry-After: either way a lookup goes straight to the IANA
 * bootstrap path without asking rdap.org, and providers_tried says why and
 * until when. Time is the app's clock, shared with the fake's counter: no test
 * waits real seconds.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Config } from '../../src/config/index.js';
import { type FakeDnsServer, startFakeDnsServer } from '../fakes/dns-server.js';
import { testZone } from '../fakes/dns-zones.js';
import { type HttpTarget, startHttpTarget } from '../fakes/http-targets.js';
import type { FakeUpstream } from '../fakes/https-upstream.js';
import {
  type FakeRdapOrg,
  RDAP_ORG_LIMIT,
  rdapReply,
  startFakeIanaBootstrap,
  startFakeRdapOrg,
} from '../fakes/rdap.js';
import { type RedisProcess, redisBinary, startRedis } from '../fakes/redis.js';
import { getTestPki } from '../fakes/test-ca.js';
import { buildTestApp } from '../helper.js';
import { hasShared } from '../shared-data.js';

/** On a 20-second boundary, where the budget's windows start (aggregator-budget.ts). */
const T0 = Date.parse('2026-11-24T12:00:00Z');
const iso = (ms: number) => new Date(ms).toISOString();

let ca: string;
let dns: FakeDnsServer;
let verisign: HttpTarget;
let aggregator: FakeRdapOrg;
let iana: FakeUpstream;
/** The app's clock and the fake Cloudflare's. */
let now: number;

const NAMES = Array.from({ length: 40 }, (_, i) => `name${i}.com`);

beforeAll(async () => {
  ca = (await getTestPki()).caPem;
  // The .com registry: every name asked for is registered.
  verisign = await startHttpTarget({
    protocol: 'https',
    names: ['rdap.verisign.test'],
    fallback: (req) =>
      rdapReply({
        objectClassName: 'domain',
        ldhName: req.path.split('/').pop()?.toUpperCase(),
        status: ['active'],
      }),
  });
  dns = await startFakeDnsServer({
    zones: [testZone('test', [{ name: 'rdap.verisign.test', type: 'A', data: verisign.address }])],
  });
  aggregator = await startFakeRdapOrg({
    redirects: Object.fromEntries(
      NAMES.map((n) => [`domain/${n}`, `https://rdap.verisign.test/com/v1/domain/${n}`]),
    ),
  });
  iana = await startFakeIanaBootstrap({
    dns: { 'https://rdap.verisign.com/com/v1/': 'https://rdap.verisign.test/com/v1/' },
  });
});

afterAll(async () => {
  await Promise.all([dns?.close(), verisign?.close(), aggregator?.close(), iana?.close()]);
});

beforeEach(() => {
  now = T0;
  aggregator.reset();
  aggregator.clock = () => now;
  iana.reset();
  verisign.reset();
});

function app(config: Partial<Config> = {}) {
  return buildTestApp({
    ca,
    clock: () => now,
    config: {
      dnsResolvers: [dns.doh],
      rdapAggregatorUrl: aggregator.url,
      rdapBootstrapUrl: iana.url,
      unsafeAllowTargetCidrs: [`${verisign.address}/32`],
      ...config,
    },
  });
}

type App = Awaited<ReturnType<typeof app>>;

/** Looks one name up; returns which source answered and the attempt of rdap.org. */
async function lookup(a: App, name: string) {
  const res = await a.inject(`/api/rdap?type=domain&target=${name}`);
  expect(res.statusCode, res.body).toBe(200);
  const body = res.json() as { source_id: string; providers_tried: { id: string; error?: string }[] };
  return { source: body.source_id, aggregatorError: body.providers_tried[0]?.error };
}

/** Looks up the next `count` names; returns the sources that answered, in order. */
async function burst(a: App, names: string[], count: number): Promise<string[]> {
  const sources: string[] = [];
  for (const name of names.splice(0, count)) sources.push((await lookup(a, name)).source);
  return sources;
}

const viaAggregator = (n: number) => Array.from({ length: n }, () => 'rdap-org');

describe.skipIf(!hasShared)("rdap.org's budget (10 requests per 10 s, per instance)", () => {
  it('the 11th lookup goes to the bootstrap path without asking rdap.org, saying until when', async () => {
    const a = await app();
    const names = [...NAMES];
    expect(await burst(a, names, RDAP_ORG_LIMIT.requests)).toEqual(viaAggregator(10));

    const eleventh = await lookup(a, names.shift() as string);
    expect(eleventh.source).toBe('iana-rdap-bootstrap');
    expect(eleventh.aggregatorError).toBe(
      `rate_limited: this service's budget for ${new URL(aggregator.url).host} (10 requests per 10 s, the limit it publishes) is spent: not sent, skipped until ${iso(T0 + 20_000)}`,
    );
    expect(aggregator.count()).toBe(10);
    expect(iana.count('/dns.json')).toBe(1);

    // Ten seconds on, the ten already sent still sit in one of the budget's windows.
    now = T0 + 10_000;
    expect((await lookup(a, names.shift() as string)).source).toBe('iana-rdap-bootstrap');
    now = T0 + 20_000;
    expect(await burst(a, names, 10)).toEqual(viaAggregator(10));
    expect(aggregator.count()).toBe(20);
    expect(aggregator.limited).toEqual([]);
  });

  it('never sends more than 10 in any 10 s around a window edge, where a fixed window would', async () => {
    const a = await app();
    const names = [...NAMES];
    now = T0 + 15_000;
    expect(await burst(a, names, 10)).toEqual(viaAggregator(10));
    // A fixed 10-second window would open here and let ten more through: Cloudflare's 429.
    now = T0 + 20_000;
    expect(await burst(a, names, 1)).toEqual(['iana-rdap-bootstrap']);
    // The budget is the cautious side of the limit: the span from the burst has passed at +25 s.
    now = T0 + 30_000 - 1;
    expect(await burst(a, names, 1)).toEqual(['iana-rdap-bootstrap']);
    now = T0 + 30_000;
    expect(await burst(a, names, 10)).toEqual(viaAggregator(10));
    expect(aggregator.limited).toEqual([]);
  });

  it('without Redis each instance spends its own: behind one address Cloudflare counts them together', async () => {
    const names = [...NAMES];
    const [a, b] = [await app(), await app()];
    expect(await burst(a, names, 10)).toEqual(viaAggregator(10));
    // b's budget has room, so b asks, and the 429 is rdap.org's.
    const fromB = await lookup(b, names.shift() as string);
    expect(fromB.source).toBe('iana-rdap-bootstrap');
    expect(fromB.aggregatorError).toMatch(/^rate_limited: HTTP 429 from /);
    expect(aggregator.limited).toHaveLength(1);
  });
});

describe.skipIf(!hasShared)("rdap.org's 429", () => {
  it('is honoured: no request to rdap.org until its Retry-After has passed, then it is asked again', async () => {
    // A budget above the published limit (RDAP_AGGREGATOR_RATE_LIMIT raised): Cloudflare is the one to say no.
    const a = await app({ rdapAggregatorRateLimit: { points: 100, seconds: 10 } });
    const names = [...NAMES];
    expect(await burst(a, names, 10)).toEqual(viaAggregator(10));

    const limited = await lookup(a, names.shift() as string);
    expect(limited.source).toBe('iana-rdap-bootstrap');
    expect(limited.aggregatorError).toBe(
      `rate_limited: HTTP 429 from ${new URL(aggregator.url).host}; not asked again until ${iso(T0 + 10_000)}`,
    );
    expect(aggregator.limited).toHaveLength(1);
    expect(aggregator.limited[0]?.path).toBe('/domain/name10.com');

    now = T0 + 9_000;
    const skipped = await lookup(a, names.shift() as string);
    expect(skipped.source).toBe('iana-rdap-bootstrap');
    expect(skipped.aggregatorError).toMatch(
      new RegExp(
        `^rate_limited: .* 1 s \\(429, Retry-After\\): not sent, skipped until ${iso(T0 + 10_000)}$`,
      ),
    );
    expect(aggregator.count()).toBe(11);

    now = T0 + 10_000;
    expect(await burst(a, names, 1)).toEqual(viaAggregator(1));
    expect(aggregator.limited).toHaveLength(1);
  });
});

describe.skipIf(!redisBinary || !hasShared)("rdap.org's budget with Redis: one for every instance", () => {
  let redis: RedisProcess;
  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(async () => {
    await redis?.stop();
  });

  it('two instances together send rdap.org at most 10 in 10 s', async () => {
    const config = { redisUrl: redis.url, sessionSecret: 'x'.repeat(32) };
    const [a, b] = [await app(config), await app(config)];
    const names = [...NAMES];
    expect(await burst(a, names, 5)).toEqual(viaAggregator(5));
    expect(await burst(b, names, 5)).toEqual(viaAggregator(5));
    expect(await burst(a, names, 1)).toEqual(['iana-rdap-bootstrap']);
    expect(await burst(b, names, 1)).toEqual(['iana-rdap-bootstrap']);
    expect(aggregator.count()).toBe(10);
  });
});
