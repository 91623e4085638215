/**
 * GET /api/ip-geo through the whole app: a tiny MMDB built by the test (the
 * DB-IP record shape), the ASN fixture, and RIPEstat faked on loopback.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Config } from '../../src/config/index.js';
import { type FakeUpstream, startFakeUpstream } from '../fakes/https-upstream.js';
import { getTestPki } from '../fakes/test-ca.js';
import { buildTestApp, capturingLogger } from '../helper.js';
import { hasShared, sharedFixture, sharedFixturePath } from '../shared-data.js';
import { buildMmdb } from '../unit/features/ip/mmdb-writer.js';

const fixturePath = (p: string) => fileURLToPath(new URL(`../fixtures/${p}`, import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'netdiag-ip-geo-'));
const dbip = (country: string, state1: string, city: string, latitude: number, longitude: number) => ({
  city,
  country_code: country,
  latitude,
  longitude,
  postcode: '',
  state1,
  state2: '',
  timezone: '',
});
/** When the test databases were built (DB-IP's June 2026 release, as bundled), and the app clock: 15 days on. */
const BUILT = Date.parse('2026-06-05T00:00:00Z');
const DAY = 86_400_000;
let now = BUILT + 15 * DAY;
const V4 = join(dir, 'dbip-city-ipv4.mmdb');
const V6 = join(dir, 'dbip-city-ipv6.mmdb');
writeFileSync(
  V4,
  buildMmdb(
    [
      {
        cidr: '1.0.0.0/24',
        data: dbip('AU', 'New South Wales', 'Sydney', -33.86880111694336, 151.20899963378906),
      },
      { cidr: '172.224.226.0/24', data: dbip('GB', 'England', 'London', 51.5085, -0.1257) },
    ],
    { ipVersion: 4, databaseType: 'city ipv4', buildEpoch: BUILT / 1000 },
  ),
);
writeFileSync(
  V6,
  buildMmdb([{ cidr: '2001:200::/32', data: dbip('JP', 'Tokyo', 'Chiyoda', 35.694, 139.754) }], {
    ipVersion: 6,
    databaseType: 'city ipv6',
    buildEpoch: BUILT / 1000,
  }),
);

let ripestat: FakeUpstream;
beforeAll(async () => {
  ripestat = await startFakeUpstream({
    prefix: '/ripestat',
    // The real answer (../shared); without it the tests that reach RIPEstat are skipped.
    routes: {
      '/data/maxmind-geo-lite/data.json': {
        json: hasShared ? sharedFixture('ripestat/maxmind-geo-lite.json') : {},
      },
    },
  });
});
afterEach(() => {
  ripestat.reset();
  now = BUILT + 15 * DAY;
});
afterAll(async () => {
  await ripestat.close();
  rmSync(dir, { recursive: true, force: true });
});

async function app(overrides: Partial<Config> = {}) {
  return buildTestApp({
    config: {
      geoipDb: `${V4},${V6}`,
      geoipAsnDb: `${fixturePath('ip/asn-ipv4.csv')},${fixturePath('ip/asn-ipv6.csv')}`,
      ripestatUrl: ripestat.url,
      rateLimitGeneral: { points: 1000, seconds: 60 },
      ...overrides,
    },
    ca: (await getTestPki()).caPem,
    clock: () => now,
  });
}
type App = Awaited<ReturnType<typeof app>>;
const geo = (a: App, ip: string) => a.inject(`/api/ip-geo?ip=${encodeURIComponent(ip)}`);

describe('GET /api/ip-geo', () => {
  it('answers from the offline database with AS, network, attribution and a 24 h cache', async () => {
    const a = await app();
    const res = await geo(a, '1.0.0.1');
    expect(res.statusCode).toBe(200);
    expect(res.headers['cache-control']).toBe('public, max-age=86400');
    expect(res.headers['x-service-cache']).toBe('MISS');
    expect(res.json()).toEqual({
      ip: '1.0.0.1',
      country: { code: 'AU', name: 'Australia' },
      region: 'New South Wales',
      city: 'Sydney',
      latitude: -33.8688,
      longitude: 151.209,
      accuracy_note: expect.stringContaining('never identifies a device or a home address'),
      timezone: null,
      asn: 13335,
      as_org: 'Cloudflare, Inc.',
      network: '1.0.0.0/24',
      is_relay: null,
      source: 'GeoIP database (MMDB)',
      source_id: 'geoip-mmdb',
      providers_tried: [{ id: 'geoip-mmdb', name: 'GeoIP database (MMDB)', status: 'ok' }],
      // CC BY 4.0 asks for a link to the licence with the notice.
      attribution: [
        {
          text: 'IP Geolocation by DB-IP',
          url: 'https://db-ip.com',
          license: 'CC BY 4.0',
          license_url: 'https://creativecommons.org/licenses/by/4.0/',
        },
      ],
      data: { built_at: '2026-06-05T00:00:00.000Z', age_days: 15, stale: false },
    });
    const again = await geo(a, '1.0.0.1');
    expect(again.headers['x-service-cache']).toBe('HIT');
    expect(ripestat.count()).toBe(0);
  });

  it('answers IPv6 from the IPv6 file', async () => {
    const a = await app();
    expect((await geo(a, '2001:200:1ba::1')).json()).toMatchObject({
      ip: '2001:200:1ba::1',
      country: { code: 'JP', name: 'Japan' },
      asn: 24047,
      as_org: 'Internet Systems Consortium, Inc.',
      network: '2001:200::/32',
    });
  });

  it.skipIf(!hasShared)(
    'falls back to RIPEstat maxmind-geo-lite on a database miss, identifying itself with sourceapp',
    async () => {
      const a = await app();
      const res = await geo(a, '193.0.0.1');
      expect(res.statusCode).toBe(200);
      expect(res.json()).toMatchObject({
        ip: '193.0.0.1',
        country: { code: 'NL', name: 'Netherlands' },
        city: null,
        latitude: 52.3824,
        longitude: 4.8995,
        network: '193.0.0.0/20',
        source: 'RIPEstat Data API',
        source_id: 'ripestat',
        // A database that does not list an address answered "nothing here": no failure (issue 17).
        providers_tried: [
          { id: 'geoip-mmdb', status: 'no_data' },
          { id: 'ripestat', status: 'ok' },
        ],
        attribution: [
          { text: expect.stringContaining('RIPEstat'), url: expect.stringContaining('stat.ripe.net') },
        ],
        // RIPEstat's snapshot time (result_time, UTC): the fixture's GeoLite2 copy is a year older than the clock.
        data: { built_at: '2025-06-10T20:45:38.000Z', age_days: 374, stale: true },
      });
      expect(res.json().providers_tried[0]).not.toHaveProperty('error');
      const [req] = ripestat.requests;
      expect(req?.path).toBe('/data/maxmind-geo-lite/data.json');
      expect(Object.fromEntries(req!.query)).toEqual({ resource: '193.0.0.1', sourceapp: 'netdiag' });
      // /api/providers never shows the bundled database failing for an address it simply does not list.
      const providers = (await a.inject('/api/providers')).json().providers;
      const database = providers.find((p: { id: string }) => p.id === 'geoip-mmdb');
      expect(database.status).toMatchObject({
        consecutive_failures: 0,
        last_error: null,
        last_failure_at: null,
      });
      expect(database.status.last_success_at).toEqual(expect.any(String));
      const metrics = await a.ctx.metrics.registry.metrics();
      expect(metrics).toMatch(
        /netdiag_provider_attempts_total\{provider="geoip-mmdb",outcome="no_data",kind="none"\} 1/,
      );
      expect(metrics).not.toMatch(/provider="geoip-mmdb",outcome="failed"/);
    },
  );

  it('answers a bug inside an adapter as a logged, counted 500 that leaks nothing, never as a provider failure', async () => {
    const log = capturingLogger();
    const a = await buildTestApp({
      config: {
        geoipDb: `${V4},${V6}`,
        geoipAsnDb: `${fixturePath('ip/asn-ipv4.csv')},${fixturePath('ip/asn-ipv6.csv')}`,
        ripestatUrl: ripestat.url,
      },
      ca: (await getTestPki()).caPem,
      logger: log.logger,
    });
    vi.spyOn(a.ipSources.database, 'locate').mockImplementation(async () => {
      const record = undefined as unknown as { country: string };
      // A real TypeError, as a bug in an adapter would throw.
      return { country_code: record.country } as never;
    });
    const res = await geo(a, '1.0.0.1');
    expect(res.statusCode).toBe(500);
    expect(res.json()).toEqual({ error: 'internal error', code: 'internal' });
    expect(res.body).not.toMatch(/TypeError|undefined|country/);
    // Not an upstream failure: the fallback is not asked, nothing is held against the provider.
    expect(ripestat.count()).toBe(0);
    const providers = (await a.inject('/api/providers')).json().providers;
    const database = providers.find((p: { id: string }) => p.id === 'geoip-mmdb');
    expect(database.status).toMatchObject({ consecutive_failures: 0, last_error: null });
    const logged = log.lines().find((l) => l.msg === 'unhandled error');
    expect(logged).toMatchObject({ level: 50, err: { type: 'TypeError' } });
    expect(await a.ctx.metrics.registry.metrics()).toMatch(/netdiag_internal_errors_total 1/);
    // Nothing cached: the next request runs again.
    vi.restoreAllMocks();
    expect((await geo(a, '1.0.0.1')).statusCode).toBe(200);
  });

  it.skipIf(!hasShared)('falls back to RIPEstat when the database cannot be opened', async () => {
    const a = await app({ geoipDb: join(dir, 'missing.mmdb') });
    const body = (await geo(a, '1.0.0.1')).json();
    expect(body.source_id).toBe('ripestat');
    expect(body.providers_tried[0].error).toMatch(
      /^upstream_error: GeoIP database unavailable: missing\.mmdb: ENOENT/,
    );
    // The file's name, never the machine's directory layout (issue 16).
    expect(JSON.stringify(body)).not.toContain(dir);
    expect((await a.inject('/api/providers')).body).not.toContain(dir);
    // The AS comes from the ASN table all the same.
    expect(body.asn).toBe(13335);
  });

  it.skipIf(!hasShared)(
    'answers 502 with providers_tried when the database misses and RIPEstat fails, and caches nothing',
    async () => {
      const a = await app();
      ripestat.fault = '503';
      const res = await geo(a, '193.0.0.1');
      expect(res.statusCode).toBe(502);
      expect(res.headers['cache-control']).toBe('no-store');
      expect(
        res.json().providers_tried.map((p: { id: string; status: string }) => `${p.id}:${p.status}`),
      ).toEqual(['geoip-mmdb:no_data', 'ripestat:failed']);
      ripestat.fault = 'none';
      expect((await geo(a, '193.0.0.1')).statusCode).toBe(200);
    },
  );

  it('answers 400 naming the special-use block, for private, mapped and reserved addresses', async () => {
    const a = await app();
    const res = await geo(a, '10.0.0.1');
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({
      error:
        'ip 10.0.0.1 is a special-use address (10.0.0.0/8 private-use, RFC 1918): special-use addresses have no public-network metadata',
      code: 'bad_request',
    });
    expect((await geo(a, '::ffff:192.168.0.1')).json().error).toMatch(/^ip 192\.168\.0\.1 .*private-use/);
    expect((await geo(a, '100.64.1.1')).json().error).toMatch(/shared-address-space/);
    expect((await geo(a, 'fc00::1')).json().error).toMatch(/unique-local/);
    expect((await geo(a, 'not-an-ip')).statusCode).toBe(400);
    expect(ripestat.count()).toBe(0);
  });

  it.skipIf(!hasShared)('says whether the address is a relay egress once the lists are loaded', async () => {
    const a = await app({ relayRangesFile: sharedFixturePath('relay/egress-ip-ranges.excerpt.csv') });
    // The Tor list is unreachable in tests: a match is still an answer, no match is unknown.
    expect((await geo(a, '172.224.226.9')).json()).toMatchObject({ is_relay: true, city: 'London' });
    expect((await geo(a, '1.0.0.1')).json().is_relay).toBeNull();
  });

  it('loads the database when the server starts listening, before any request', async () => {
    const { logger, lines } = capturingLogger('info');
    const a = await buildTestApp({
      config: { geoipDb: `${V4},${V6}`, geoipAsnDb: fixturePath('ip/asn-ipv4.csv') },
      logger,
    });
    const messages = () => lines().map((l) => l.msg);
    // inject-only apps (every other test) never pay for it...
    expect(messages()).not.toContain('GeoIP database loaded');
    await a.listen({ port: 0, host: '127.0.0.1' });
    // ...a listening server loads it at once, so the first visitor does not wait.
    await vi.waitFor(
      () => expect(messages()).toEqual(expect.arrayContaining(['GeoIP database loaded', 'ASN table loaded'])),
      {
        timeout: 15_000,
        interval: 20,
      },
    );
  });
});

describe('the age of the GeoIP data', () => {
  const listing = async (a: App) =>
    (await a.inject('/api/providers')).json().providers.find((p: { id: string }) => p.id === 'geoip-mmdb');

  it('/api/providers shows it once the database is open', async () => {
    const a = await app();
    // Nothing has opened the files yet (an inject-only app never listens): nothing to tell.
    expect(await listing(a)).not.toHaveProperty('data');
    await geo(a, '1.0.0.1');
    expect((await listing(a)).data).toEqual({
      built_at: '2026-06-05T00:00:00.000Z',
      age_days: 15,
      stale: false,
    });
    now += 50 * DAY;
    expect((await listing(a)).data).toEqual({
      built_at: '2026-06-05T00:00:00.000Z',
      age_days: 65,
      stale: true,
    });
  });

  it('past 60 days by the app clock: /readyz stays 200 with a warning, logged once', async () => {
    const { logger, lines } = capturingLogger('info');
    const a = await buildTestApp({
      config: { geoipDb: `${V4},${V6}`, geoipAsnDb: fixturePath('ip/asn-ipv4.csv') },
      logger,
      clock: () => now,
    });
    const ready = await a.inject('/readyz');
    expect(ready.statusCode).toBe(200);
    expect(ready.json()).toEqual({ status: 'ready', cache: 'memory' });

    now = BUILT + 61 * DAY;
    const stale = await a.inject('/readyz');
    expect(stale.statusCode).toBe(200);
    expect(stale.json()).toEqual({
      status: 'ready',
      cache: 'memory',
      warnings: [
        {
          code: 'geoip_data_stale',
          message: expect.stringMatching(/built 2026-06-05, 61 days ago .*GEOIP_DB/),
          built_at: '2026-06-05T00:00:00.000Z',
          age_days: 61,
        },
      ],
    });
    expect((await geo(a, '1.0.0.1')).json().data).toMatchObject({ age_days: 61, stale: true });
    await a.inject('/readyz');
    await a.inject('/api/providers');
    const warnings = lines().filter((l) => String(l.msg).startsWith('GeoIP data is stale'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ level: 40, built_at: '2026-06-05T00:00:00.000Z', age_days: 61 });
  });

  it('a database that cannot open does not make /readyz fail: the chain falls back to RIPEstat', async () => {
    const a = await app({ geoipDb: join(dir, 'missing.mmdb') });
    const ready = await a.inject('/readyz');
    expect(ready.statusCode).toBe(200);
    expect(ready.json()).toEqual({ status: 'ready', cache: 'memory' });
  });
});
