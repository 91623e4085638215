import { existsSync, mkdtempSync, readdirSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Reader } from 'mmdb-lib';
import { afterAll, describe, expect, it } from 'vitest';
import { testConfig } from '../../../../src/config/index.js';
import { isProviderError } from '../../../../src/errors.js';
import { providerCatalog } from '../../../../src/providers/catalog.js';
import {
  DBIP_ATTRIBUTION,
  GEOLITE2_ATTRIBUTION,
  mmdbAttribution,
  normalizeGeoRecord,
} from '../../../../src/providers/ip/geo.js';
import { GeoIpDatabase, pathList } from '../../../../src/providers/ip/geoip-mmdb.js';
import { parseIpNumber } from '../../../../src/providers/ip/ip-number.js';
import { fixtureText } from '../../../fakes/https-upstream.js';
import { buildMmdb } from './mmdb-writer.js';

const dir = mkdtempSync(join(tmpdir(), 'netdiag-geo-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A DB-IP-shaped record (the bundled database's shape, checked in the smoke test). */
const dbip = (country: string, city: string, lat: number, lon: number) => ({
  city,
  country_code: country,
  latitude: lat,
  longitude: lon,
  postcode: '',
  state1: 'State',
  state2: '',
  timezone: '',
});

function write(name: string, bytes: Buffer | string): string {
  const path = join(dir, name);
  writeFileSync(path, bytes);
  return path;
}

const V4 = write(
  'dbip-city-ipv4.mmdb',
  buildMmdb(
    [
      { cidr: '81.2.69.0/24', data: dbip('GB', 'London', 51.5142, -0.0931) },
      { cidr: '8.8.8.0/24', data: dbip('US', 'Mountain View', 37.422000885009766, -122.08499908447266) },
    ],
    { ipVersion: 4, databaseType: 'city ipv4' },
  ),
);
const V6 = write(
  'dbip-city-ipv6.mmdb',
  buildMmdb([{ cidr: '2a02:26f7::/32', data: dbip('NL', 'Amsterdam', 52.37, 4.89) }], {
    ipVersion: 6,
    databaseType: 'city ipv6',
  }),
);
const ASN4 = write('asn-ipv4.csv', fixtureText('ip/asn-ipv4.csv'));

const silent = { info: () => {}, warn: () => {} };
const info = providerCatalog(testConfig()).geoip;
let now = 0;
function database(mmdbPaths: string[], asnPaths: string[] = [ASN4]) {
  return new GeoIpDatabase({ info, mmdbPaths, asnPaths, clock: () => now, log: silent, retryMs: 60_000 });
}

async function failure(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected a rejection');
}

describe('the test MMDB writer', () => {
  it('writes files mmdb-lib reads back, record and prefix length intact', () => {
    const reader = new Reader(
      buildMmdb(
        [{ cidr: '192.0.2.0/24', data: { a: 'x', n: 7, f: 1.5, b: true, list: ['p', 'q'], m: { k: 'v' } } }],
        {
          ipVersion: 6,
          databaseType: 'test',
        },
      ),
    );
    expect(reader.metadata).toMatchObject({ ipVersion: 6, databaseType: 'test', recordSize: 24 });
    // An IPv4 network in an IPv6 tree lives under ::/96; mmdb-lib reports the IPv4 prefix length.
    expect(reader.getWithPrefixLength('192.0.2.77')).toEqual([
      { a: 'x', n: 7, f: 1.5, b: true, list: ['p', 'q'], m: { k: 'v' } },
      24,
    ]);
    expect(reader.get('192.0.3.1')).toBeNull();
  });
});

describe('normalizeGeoRecord', () => {
  it('reads the DB-IP / ip-location-db shape', () => {
    expect(normalizeGeoRecord(dbip('au', 'Sydney', -33.86880111694336, 151.20899963378906))).toEqual({
      country_code: 'AU',
      region: 'State',
      city: 'Sydney',
      latitude: -33.8688,
      longitude: 151.209,
      timezone: null,
      accuracy_radius_km: null,
    });
  });

  it('reads the MaxMind GeoIP2 / GeoLite2 City shape', () => {
    expect(
      normalizeGeoRecord({
        city: { geoname_id: 2643743, names: { en: 'London', de: 'London' } },
        country: { geoname_id: 2635167, iso_code: 'GB', names: { en: 'United Kingdom' } },
        location: { accuracy_radius: 50, latitude: 51.5142, longitude: -0.0931, time_zone: 'Europe/London' },
        subdivisions: [{ geoname_id: 6269131, iso_code: 'ENG', names: { en: 'England' } }],
      }),
    ).toEqual({
      country_code: 'GB',
      region: 'England',
      city: 'London',
      latitude: 51.5142,
      longitude: -0.0931,
      timezone: 'Europe/London',
      accuracy_radius_km: 50,
    });
    expect(
      normalizeGeoRecord({ registered_country: { iso_code: 'DE', names: { en: 'Germany' } } }),
    ).toMatchObject({
      country_code: 'DE',
      city: null,
    });
  });

  it('refuses other shapes and out-of-range values', () => {
    expect(normalizeGeoRecord({ autonomous_system_number: 13335 })).toBeUndefined();
    expect(normalizeGeoRecord('GB')).toBeUndefined();
    expect(normalizeGeoRecord(null)).toBeUndefined();
    expect(normalizeGeoRecord({ country_code: 'GBR', latitude: 91, longitude: 'x' })).toMatchObject({
      country_code: null,
      latitude: null,
      longitude: null,
    });
  });

  it('names the attribution a database needs', () => {
    expect(mmdbAttribution('/x/dbip-city-ipv4.mmdb', 'city ipv4')).toEqual([DBIP_ATTRIBUTION]);
    expect(mmdbAttribution('/x/city.mmdb', 'DBIP-City-Lite')).toEqual([DBIP_ATTRIBUTION]);
    expect(mmdbAttribution('/x/GeoLite2-City.mmdb', 'GeoLite2-City')).toEqual([GEOLITE2_ATTRIBUTION]);
    expect(mmdbAttribution('/x/own.mmdb', 'Corp-Geo')).toEqual([]);
    expect(DBIP_ATTRIBUTION.text).toBe('IP Geolocation by DB-IP');
  });
});

describe('GeoIpDatabase', () => {
  it('answers IPv4 from the IPv4 file and IPv6 from the IPv6 file, with the record network', async () => {
    const db = database([V4, V6]);
    expect(await db.locate(parseIpNumber('81.2.69.142')!)).toEqual({
      country_code: 'GB',
      region: 'State',
      city: 'London',
      latitude: 51.5142,
      longitude: -0.0931,
      timezone: null,
      accuracy_radius_km: null,
      network: '81.2.69.0/24',
      attribution: [DBIP_ATTRIBUTION],
      // The test writer's default build_epoch.
      data_built_at: '2026-05-28T20:26:40.000Z',
    });
    expect(await db.locate(parseIpNumber('2a02:26f7:c700:4000::1')!)).toMatchObject({
      country_code: 'NL',
      network: '2a02:26f7::/32',
    });
  });

  it('never walks an IPv4 tree with an IPv6 address', async () => {
    // mmdb-lib would read the first 32 bits of 5102:4500:: as 81.2.69.0 and answer London.
    expect(await database([V4]).locate(parseIpNumber('5102:4500::1')!)).toBeNull();
  });

  it('answers null for an address it does not list: no data, not a failure (the chain asks the next source)', async () => {
    expect(await database([V4, V6]).locate(parseIpNumber('9.9.9.9')!)).toBeNull();
  });

  it('fails operationally when a file is missing or not an MMDB, and retries after the cool-down', async () => {
    now = 0;
    const missing = join(dir, 'late.mmdb');
    const db = database([missing]);
    const err = await failure(db.locate(parseIpNumber('81.2.69.142')!));
    expect(isProviderError(err) && err.message).toMatch(/^GeoIP database unavailable: late.mmdb: ENOENT/);
    write(
      'late.mmdb',
      buildMmdb([{ cidr: '81.2.69.0/24', data: dbip('GB', 'London', 1, 1) }], {
        ipVersion: 4,
        databaseType: 't',
      }),
    );
    // Within the cool-down the failure stands; after it, the file is read again.
    await expect(db.locate(parseIpNumber('81.2.69.142')!)).rejects.toThrow(/unavailable/);
    now = 60_000;
    await expect(db.locate(parseIpNumber('81.2.69.142')!)).resolves.toMatchObject({ city: 'London' });

    const garbage = write('garbage.mmdb', 'not a database');
    await expect(database([garbage]).locate(parseIpNumber('81.2.69.142')!)).rejects.toThrow(/garbage.mmdb/);
  });

  it('looks up the AS, and degrades to null when the ASN data cannot load', async () => {
    const db = database([V4], [ASN4]);
    expect(await db.lookupAsn(parseIpNumber('1.0.0.1')!)).toMatchObject({
      asn: 13335,
      org: 'Cloudflare, Inc.',
    });
    expect(await db.lookupAsn(parseIpNumber('9.9.9.9')!)).toBeNull();
    expect(await database([V4], [join(dir, 'nope.csv')]).lookupAsn(parseIpNumber('1.0.0.1')!)).toBeNull();
  });

  /** A logger that keeps what it is told. */
  function recorder() {
    const lines: { level: string; msg: string; obj: Record<string, unknown> }[] = [];
    const log = {
      info: (obj: object, msg: string) =>
        lines.push({ level: 'info', msg, obj: obj as Record<string, unknown> }),
      warn: (obj: object, msg: string) =>
        lines.push({ level: 'warn', msg, obj: obj as Record<string, unknown> }),
    };
    return { log, lines };
  }
  const withCache = (cacheDir: string, log: ReturnType<typeof recorder>['log']) =>
    new GeoIpDatabase({ info, mmdbPaths: [V4], asnPaths: [ASN4], cacheDir, clock: () => now, log });

  it('builds the ASN index into the cache directory once; the next process reuses it', async () => {
    const cacheDir = join(dir, 'asn-cache');
    const first = recorder();
    const a = withCache(cacheDir, first.log);
    expect(await a.lookupAsn(parseIpNumber('1.0.0.1')!)).toMatchObject({
      asn: 13335,
      org: 'Cloudflare, Inc.',
    });
    // The report is still logged, at warn because the excerpt keeps the real file's one overlap.
    expect(first.lines.find((l) => l.msg === 'ASN table loaded')).toMatchObject({
      level: 'warn',
      obj: {
        provider: 'geoip-mmdb',
        index: 'built',
        rows: 7,
        overlaps: 1,
        skipped: 0,
        outOfOrder: 0,
        problems: [],
      },
    });
    expect(readdirSync(cacheDir)).toEqual([expect.stringMatching(/^asn-index-[0-9a-f]{16}\.bin$/)]);

    const second = recorder();
    const b = withCache(cacheDir, second.log);
    b.warm();
    await b.settled();
    expect(second.lines.find((l) => l.msg === 'ASN table loaded')?.obj).toMatchObject({
      index: 'reused',
      rows: 7,
    });
    expect(await b.lookupAsn(parseIpNumber('215.0.0.1')!)).toMatchObject({ asn: 721 });
    await Promise.all([a.close(), b.close()]);
  });

  it('serves the ASN index from memory, warning once, when the cache directory cannot be written', async () => {
    const blocker = write('not-a-directory', 'x');
    const { log, lines } = recorder();
    const db = withCache(join(blocker, 'cache'), log);
    expect(await db.lookupAsn(parseIpNumber('1.0.0.1')!)).toMatchObject({ asn: 13335 });
    expect(await db.lookupAsn(parseIpNumber('2.26.200.7')!)).toMatchObject({
      asn: 201907,
      org: 'LLC "SPUTNIK"',
    });
    const warnings = lines.filter((l) => l.msg.startsWith('ASN index could not be written'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]?.obj).toMatchObject({
      err: expect.stringMatching(/ENOTDIR|EEXIST/),
    });
    expect(lines.find((l) => l.msg === 'ASN table loaded')?.obj).toMatchObject({ index: 'memory' });
    await db.close();
  });

  describe('the age of its data', () => {
    const DAY = 86_400_000;
    const built = (iso: string, name: string) =>
      write(
        name,
        buildMmdb([{ cidr: '81.2.69.0/24', data: dbip('GB', 'London', 51.5, -0.09) }], {
          ipVersion: 4,
          databaseType: 'city ipv4',
          buildEpoch: Date.parse(iso) / 1000,
        }),
      );
    const JUNE = built('2026-06-05T00:00:00Z', 'dbip-june.mmdb');
    const JULY = built('2026-07-03T00:00:00Z', 'dbip-july.mmdb');
    const dated = (paths: string[], clock: () => number, log = recorder().log) =>
      new GeoIpDatabase({ info, mmdbPaths: paths, asnPaths: [ASN4], clock, log });

    it('is unknown until the files are open, then the oldest file build time, aged by the app clock', async () => {
      let at = Date.parse('2026-07-15T12:00:00Z');
      const db = dated([JULY, JUNE], () => at);
      expect(db.dataAge()).toBeUndefined();
      expect(await db.loadedDataAge()).toEqual({
        built_at: '2026-06-05T00:00:00.000Z',
        age_days: 40,
        stale: false,
      });
      at += 10 * DAY;
      expect(db.dataAge()).toEqual({ built_at: '2026-06-05T00:00:00.000Z', age_days: 50, stale: false });
      // Each answer carries the build time of the file that answered.
      expect((await db.locate(parseIpNumber('81.2.69.1')!))?.data_built_at).toBe('2026-07-03T00:00:00.000Z');
      await db.close();
    });

    it('warns once when it finds the data more than 60 days old, at load or later', async () => {
      const { log, lines } = recorder();
      let at = Date.parse('2026-08-04T00:00:00Z'); // 60 days: not yet stale
      const db = dated([JUNE], () => at, log);
      expect(await db.loadedDataAge()).toMatchObject({ age_days: 60, stale: false });
      const stale = () => lines.filter((l) => l.level === 'warn' && l.msg.startsWith('GeoIP data is stale'));
      expect(stale()).toEqual([]);
      at += DAY;
      expect(db.dataAge()).toMatchObject({ age_days: 61, stale: true });
      db.dataAge();
      await db.locate(parseIpNumber('81.2.69.1')!);
      expect(stale()).toHaveLength(1);
      expect(stale()[0]?.obj).toMatchObject({
        built_at: '2026-06-05T00:00:00.000Z',
        age_days: 61,
        max_age_days: 60,
      });
      expect(stale()[0]?.msg).toMatch(/GEOIP_DB.*docs\/operations\.md/);
      await db.close();

      // Stale from the start: the warning comes with the load.
      const second = recorder();
      const old = dated([JUNE], () => Date.parse('2026-11-24T00:00:00Z'), second.log);
      old.warm();
      await old.settled();
      expect(second.lines.filter((l) => l.msg.startsWith('GeoIP data is stale'))).toHaveLength(1);
      await old.close();
    });

    it('says nothing of a file without a build time, nor of files that cannot open', async () => {
      const undated = write(
        'undated.mmdb',
        buildMmdb([{ cidr: '81.2.69.0/24', data: dbip('GB', 'London', 51.5, -0.09) }], {
          ipVersion: 4,
          databaseType: 'city ipv4',
          buildEpoch: 0,
        }),
      );
      const db = dated([undated], () => Date.parse('2026-11-24T00:00:00Z'));
      expect(await db.loadedDataAge()).toBeUndefined();
      expect((await db.locate(parseIpNumber('81.2.69.1')!))?.data_built_at).toBeNull();
      await db.close();
      const missing = dated([join(dir, 'absent.mmdb')], () => 0);
      expect(await missing.loadedDataAge()).toBeUndefined();
      await missing.close();
    });
  });

  it('closes its files; after close() nothing is read or opened', async () => {
    // Descriptors this process has open on the files this database uses (Linux; elsewhere not counted).
    const cacheDir = join(dir, 'close-cache');
    const proc = existsSync('/proc/self/fd');
    const open = () =>
      readdirSync('/proc/self/fd').filter((fd) => {
        try {
          const target = readlinkSync(`/proc/self/fd/${fd}`);
          return target === V4 || target.startsWith(cacheDir);
        } catch {
          return false; // closed while we looked (the listing's own fd)
        }
      }).length;
    const before = proc ? open() : 0; // earlier tests' databases still hold V4
    const db = withCache(cacheDir, recorder().log);
    db.warm();
    await db.settled();
    expect(await db.locate(parseIpNumber('81.2.69.142')!)).toMatchObject({ city: 'London' });
    if (proc) expect(open()).toBe(before + 2); // the MMDB file and the ASN index
    await db.close();
    if (proc) expect(open()).toBe(before);
    await expect(db.locate(parseIpNumber('81.2.69.142')!)).rejects.toThrow(/closed/);
    expect(await db.lookupAsn(parseIpNumber('1.0.0.1')!)).toBeNull();
    db.warm();
    await db.settled();
    if (proc) expect(open()).toBe(before);
  });

  it('closes cleanly while the ASN index is still being built, and says nothing of it', async () => {
    const { log, lines } = recorder();
    const db = withCache(join(dir, 'closing-cache'), log);
    db.warm();
    await db.close();
    expect(lines.filter((l) => l.level === 'warn')).toEqual([]);
    expect(await db.lookupAsn(parseIpNumber('1.0.0.1')!)).toBeNull();
  });

  it('splits the comma-separated config value', () => {
    expect(pathList(' /a.mmdb, /b.mmdb ,,')).toEqual(['/a.mmdb', '/b.mmdb']);
  });
});
