import { describe, expect, it } from 'vitest';
import { CachedLoader } from '../../../../src/cache/cached.js';
import { MemoryCache } from '../../../../src/cache/memory.js';
import { AppError, type ProviderAttempt, ProviderError } from '../../../../src/errors.js';
import {
  ACCURACY_NOTE,
  countryOf,
  describeConnection,
  GEO_TTL,
  lookupIpGeo,
  lookupIpPrivacy,
} from '../../../../src/features/ip/ip.service.js';
import { ProviderChain } from '../../../../src/providers/chain.js';
import {
  ASN_DATA_ATTRIBUTION,
  DBIP_ATTRIBUTION,
  type GeoLocation,
  type GeoProvider,
} from '../../../../src/providers/ip/geo.js';
import type { ParsedIp } from '../../../../src/providers/ip/ip-number.js';
import type { RelayListStatus, RelayVerdict } from '../../../../src/providers/ip/relay-lists.js';
import { ProviderRegistry } from '../../../../src/providers/registry.js';

const LONDON: GeoLocation = {
  country_code: 'GB',
  region: 'England',
  city: 'London',
  latitude: 51.5,
  longitude: -0.09,
  timezone: null,
  accuracy_radius_km: null,
  network: '81.2.69.0/24',
  attribution: [DBIP_ATTRIBUTION],
  data_built_at: '2026-06-05T13:00:00.000Z',
};

/** The app clock the lookups read: 26 days after LONDON's data was built, unless a test moves it. */
let now = Date.parse('2026-07-01T13:00:00Z');
const clock = () => now;

function geoProvider(id: string, answer: (ip: ParsedIp) => GeoLocation): GeoProvider & { calls: number } {
  const provider = {
    calls: 0,
    info: {
      id,
      name: id,
      capabilities: ['ip-geo'],
      docs_url: 'https://example.test',
      access: 'none' as const,
      configured: true,
      endpoint: 'x',
    },
    async locate(ip: ParsedIp) {
      provider.calls++;
      return answer(ip);
    },
  };
  return provider;
}

const miss = () => {
  throw new ProviderError('upstream_error', 'no record');
};

const TOR_LOADING: ProviderAttempt = {
  id: 'tor-exit-list',
  name: 'Tor Project bulk exit list',
  status: 'failed',
  error: 'network: 127.0.0.1:9: ECONNREFUSED',
};

function relays(verdict: RelayVerdict, lists: RelayListStatus[] = []) {
  return { classify: () => verdict, status: () => lists, attempts: () => [TOR_LOADING] };
}

const database = {
  locate: async () => LONDON,
  lookupAsn: async () => ({
    asn: 20712,
    org: 'Andrews & Arnold Ltd',
    attribution: [...ASN_DATA_ATTRIBUTION],
  }),
};

function chain() {
  const registry = new ProviderRegistry();
  return new ProviderChain({ loader: new CachedLoader(new MemoryCache()), registry, timeoutMs: 1000 });
}

async function error(run: () => unknown): Promise<AppError> {
  try {
    await run();
  } catch (err) {
    if (err instanceof AppError) return err;
    throw err;
  }
  throw new Error('expected an AppError');
}

describe('lookupIpGeo', () => {
  it('answers from the primary with country name, AS, relay flag and deduplicated attribution', async () => {
    const primary = geoProvider('geoip-mmdb', () => LONDON);
    const { body, cache } = await lookupIpGeo(
      { chain: chain(), providers: [primary], database, relays: relays(null), clock },
      '::ffff:81.2.69.142',
    );
    expect(body).toMatchObject({
      ip: '81.2.69.142',
      country: { code: 'GB', name: 'United Kingdom' },
      region: 'England',
      city: 'London',
      accuracy_note: ACCURACY_NOTE,
      asn: 20712,
      as_org: 'Andrews & Arnold Ltd',
      network: '81.2.69.0/24',
      is_relay: false,
      source_id: 'geoip-mmdb',
    });
    // DB-IP is named once although both the city data and the ASN data carry it.
    expect(body.attribution.filter((a) => a.text === 'IP Geolocation by DB-IP')).toHaveLength(1);
    expect(body.attribution).toHaveLength(3);
    // Stored by the loader, on its own (real) clock.
    expect(cache).toEqual({
      hit: false,
      maxAge: GEO_TTL,
      expiresAt: expect.closeTo(Date.now() + GEO_TTL * 1000, -4),
    });
  });

  it('falls back after a miss and says so in providers_tried', async () => {
    const fallback = geoProvider('ripestat', () => ({ ...LONDON, city: null, attribution: [] }));
    const { body } = await lookupIpGeo(
      {
        chain: chain(),
        providers: [geoProvider('geoip-mmdb', miss), fallback],
        database,
        relays: relays(undefined),
        clock,
      },
      '81.2.69.142',
    );
    expect(body.source_id).toBe('ripestat');
    expect(body.providers_tried.map((p) => [p.id, p.status])).toEqual([
      ['geoip-mmdb', 'failed'],
      ['ripestat', 'ok'],
    ]);
    expect(body.is_relay).toBeNull();
  });

  it('carries the date of the data that answered, its age by the app clock, and whether it is stale', async () => {
    const primary = geoProvider('geoip-mmdb', () => LONDON);
    const deps = { chain: chain(), providers: [primary], database, relays: relays(null), clock };
    expect((await lookupIpGeo(deps, '81.2.69.142')).body.data).toEqual({
      built_at: '2026-06-05T13:00:00.000Z',
      age_days: 26,
      stale: false,
    });
    // 61 days after the build, answered from the cache: the build date is kept, the age moves on.
    now = Date.parse('2026-08-05T13:00:00Z');
    try {
      const { body, cache } = await lookupIpGeo(deps, '81.2.69.142');
      expect(cache.hit).toBe(true);
      expect(body.data).toEqual({ built_at: '2026-06-05T13:00:00.000Z', age_days: 61, stale: true });
    } finally {
      now = Date.parse('2026-07-01T13:00:00Z');
    }
  });

  it('answers data: null when the source does not date its data', async () => {
    const undated = geoProvider('ripestat', () => ({ ...LONDON, data_built_at: null }));
    const deps = { chain: chain(), providers: [undated], database, relays: relays(null), clock };
    expect((await lookupIpGeo(deps, '81.2.69.142')).body.data).toBeNull();
  });

  it('names the special-use block in a 400 and never consults a provider', async () => {
    const primary = geoProvider('geoip-mmdb', () => LONDON);
    const deps = { chain: chain(), providers: [primary], database, relays: relays(null), clock };
    const err = await error(() => lookupIpGeo(deps, '10.0.0.1'));
    expect(err.statusCode).toBe(400);
    expect(err.message).toBe(
      'ip 10.0.0.1 is a special-use address (10.0.0.0/8 private-use, RFC 1918): special-use addresses have no public-network metadata',
    );
    expect((await error(() => lookupIpGeo(deps, '::ffff:127.0.0.1'))).message).toMatch(
      /^ip 127\.0\.0\.1 .*loopback/,
    );
    expect((await error(() => lookupIpGeo(deps, 'fe80::1'))).message).toMatch(/link-local/);
    expect((await error(() => lookupIpGeo(deps, 'fe80::1%eth0'))).message).toBe(
      'ip must not carry a zone id (%...)',
    );
    expect((await error(() => lookupIpGeo(deps, 'example.com'))).message).toBe(
      'ip must be an IPv4 or IPv6 address',
    );
    expect(primary.calls).toBe(0);
  });
});

describe('lookupIpPrivacy', () => {
  const lists: RelayListStatus[] = [
    {
      provider: 'iCloud Private Relay',
      entries: 428,
      updated_at: '2026-11-22T00:00:00.000Z',
      source_url: 'x',
      loaded: true,
    },
    { provider: 'Tor', entries: 0, updated_at: null, source_url: 'y', loaded: false },
  ];

  it('answers 503 with Retry-After while no loaded list matches and one has not loaded', async () => {
    const err = await error(() => lookupIpPrivacy(relays(undefined, lists), '8.8.8.8'));
    expect(err.statusCode).toBe(503);
    expect(err.headers['retry-after']).toBe('30');
    // Issue 16: the 503 names the lists and why they are not there.
    expect(err.toBody().providers_tried).toEqual([TOR_LOADING]);
  });

  it('answers a match even while another list loads', () => {
    const match = {
      provider: 'iCloud Private Relay' as const,
      prefix: '172.224.226.0/27',
      egress_region: null,
    };
    const body = lookupIpPrivacy(relays(match, lists), '172.224.226.1');
    expect(body).toMatchObject({ ip: '172.224.226.1', is_relay: true, relay: match, lists });
    expect(body.note).toMatch(/does not reveal the original address/);
  });

  it('answers a definite no-match with a note that it proves nothing more', () => {
    const body = lookupIpPrivacy(relays(null, lists), '2001:4860:4860::8888');
    expect(body).toMatchObject({ is_relay: false, relay: null });
    expect(body.note).toMatch(/does not rule out a VPN/);
  });

  it('refuses special-use addresses', async () => {
    const err = await error(() => lookupIpPrivacy(relays(null), '100.64.0.1'));
    expect(err.statusCode).toBe(400);
    expect(err.message).toMatch(
      /^ip 100\.64\.0\.1 is a special-use address \(100\.64\.0\.0\/10 shared-address-space \(CGNAT\), RFC 6598\)/,
    );
  });
});

describe('describeConnection (my-ip)', () => {
  const conn = {
    ip: '81.2.69.142',
    viaTrustedProxy: false,
    edge: {},
    protocol: 'http/1.1',
    tlsVersion: undefined,
    userAgent: 'curl/8.5.0',
  };
  const resolver = {
    resolve: async () => ({
      value: { answers: [{ name: 'x', type: 'PTR' as const, ttl: 60, data: { host: 'host.example.test' } }] },
    }),
  } as unknown as Parameters<typeof describeConnection>[0]['resolver'];

  it('puts together address, PTR, offline geo, AS and relay classification', async () => {
    const body = await describeConnection({ database, relays: relays(null), resolver, clock }, conn);
    expect(body).toMatchObject({
      ip: '81.2.69.142',
      version: 4,
      reverse_dns: 'host.example.test',
      geo: {
        country: { code: 'GB', name: 'United Kingdom' },
        city: 'London',
        attribution: [DBIP_ATTRIBUTION],
        data: { built_at: '2026-06-05T13:00:00.000Z', age_days: 26, stale: false },
      },
      asn: { number: 20712, org: 'Andrews & Arnold Ltd' },
      relay: { is_relay: false, match: null },
      edge: {},
      request: { protocol: 'http/1.1', user_agent: 'curl/8.5.0', via_trusted_proxy: false },
    });
    expect(body.request).not.toHaveProperty('tls_version');
  });

  it('degrades every part to null instead of failing', async () => {
    const failing = {
      locate: async () => {
        throw new ProviderError('upstream_error', 'no record');
      },
      lookupAsn: async () => null,
    };
    const noDns = {
      resolve: async () => {
        throw new AppError(502, 'upstream_failed', 'dns: every provider failed');
      },
    };
    const body = await describeConnection(
      { database: failing, relays: relays(undefined), resolver: noDns, clock },
      conn,
    );
    expect(body).toMatchObject({ reverse_dns: null, geo: null, asn: null, relay: null });
  });

  it('gives a special-use client its address and nothing looked up', async () => {
    let asked = false;
    const spy = {
      resolve: async () => {
        asked = true;
        throw new Error('must not be asked');
      },
    };
    const body = await describeConnection(
      { database, relays: relays(null), resolver: spy, clock },
      { ...conn, ip: '::1' },
    );
    expect(body).toMatchObject({
      ip: '::1',
      version: 6,
      reverse_dns: null,
      geo: null,
      asn: null,
      relay: null,
    });
    expect(asked).toBe(false);
  });

  it('names countries in English, keeping codes it cannot name', () => {
    expect(countryOf('NL')).toEqual({ code: 'NL', name: 'Netherlands' });
    expect(countryOf(null)).toBeNull();
  });
});
