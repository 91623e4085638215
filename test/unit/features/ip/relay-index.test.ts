import { describe, expect, it } from 'vitest';
import { forEachLine, ListFormatError, splitCsvLine } from '../../../../src/providers/ip/csv.js';
import { parseIpNumber } from '../../../../src/providers/ip/ip-number.js';
import { parseExitList, parseGeofeed } from '../../../../src/providers/ip/relay-index.js';
import { fixtureText } from '../../../fakes/https-upstream.js';

const APPLE = fixtureText('relay/egress-ip-ranges.excerpt.csv');
const TOR = fixtureText('relay/tor-torbulkexitlist.txt');
const FEED = fixtureText('ip/geofeed-mixed.csv');

const lookup = (index: ReturnType<typeof parseGeofeed>['index'], ip: string) =>
  index.lookup(parseIpNumber(ip)!);

describe('CSV reading', () => {
  it('splits LF and CRLF lines alike, keeping empty lines for the caller to skip', () => {
    const lines: [string, number][] = [];
    forEachLine('a,b\r\n\r\nc,d\ne,f', (line, n) => lines.push([line, n]));
    expect(lines).toEqual([
      ['a,b', 1],
      ['', 2],
      ['c,d', 3],
      ['e,f', 4],
    ]);
  });

  it('reads RFC 4180 quoted fields', () => {
    expect(splitCsvLine('a,b,,')).toEqual(['a', 'b', '', '']);
    expect(splitCsvLine('1.0.0.0,1.0.0.255,13335,"Cloudflare, Inc."')).toEqual([
      '1.0.0.0',
      '1.0.0.255',
      '13335',
      'Cloudflare, Inc.',
    ]);
    expect(splitCsvLine('x,"LLC ""SPUTNIK""",')).toEqual(['x', 'LLC "SPUTNIK"', '']);
    expect(splitCsvLine('"a"')).toEqual(['a']);
    expect(splitCsvLine('"unterminated')).toBeUndefined();
    expect(splitCsvLine('"a"b')).toBeUndefined();
    expect(splitCsvLine('a"b,c')).toBeUndefined();
  });
});

describe('parseGeofeed (iCloud Private Relay egress list, RFC 8805)', () => {
  it('loads the real excerpt: IPv4 and IPv6 rows, empty regions, the trailing empty field', () => {
    const { index, report } = parseGeofeed(APPLE);
    expect(report).toMatchObject({ entries: 428, skipped: 0 });
    expect(index.entries).toBe(428);
    // First line: 172.224.226.0/27,GB,GB-EN,London,
    expect(lookup(index, '172.224.226.0')).toEqual({
      prefix: '172.224.226.0/27',
      egress_region: { country: 'GB', region: 'GB-EN', city: 'London' },
    });
    expect(lookup(index, '172.224.226.31')?.prefix).toBe('172.224.226.0/27');
    // 172.224.226.32/31,GB,GB-SC,Aberdeen, — its last address, then one past it (the next row, Oxford).
    expect(lookup(index, '172.224.226.33')?.egress_region?.city).toBe('Aberdeen');
    expect(lookup(index, '172.224.226.34')?.egress_region?.city).toBe('Oxford');
    // An empty region: 172.224.241.64/26,BN,,Bandar Seri Begawan,
    expect(lookup(index, '172.224.241.100')).toEqual({
      prefix: '172.224.241.64/26',
      egress_region: { country: 'BN', region: null, city: 'Bandar Seri Begawan' },
    });
    // The last IPv4 row, 172.224.241.192/26 (HK): its last address, and one outside.
    expect(lookup(index, '172.224.241.255')?.egress_region?.country).toBe('HK');
    expect(lookup(index, '172.224.242.0')).toBeUndefined();
    // IPv6: 2a02:26f7:c700:4000::/64,MO,,Macau,
    expect(lookup(index, '2a02:26f7:c700:4000::')).toEqual({
      prefix: '2a02:26f7:c700:4000::/64',
      egress_region: { country: 'MO', region: null, city: 'Macau' },
    });
    expect(lookup(index, '2a02:26f7:c700:4000:ffff:ffff:ffff:ffff')?.prefix).toBe('2a02:26f7:c700:4000::/64');
    expect(lookup(index, '2a02:26f7:c700:4001::')).toBeUndefined();
    expect(lookup(index, '2a02:26f7:c700:3fff:ffff:ffff:ffff:ffff')).toBeUndefined();
    expect(lookup(index, '8.8.8.8')).toBeUndefined();
  });

  it('reads CRLF, comments, blank lines, quoted cities and empty fields (fixture ip/geofeed-mixed.csv)', () => {
    expect(FEED).toContain('\r\n');
    const { index, report } = parseGeofeed(FEED);
    expect(report.skipped).toBe(0);
    expect(report.entries).toBe(6);
    expect(lookup(index, '198.51.100.200')?.egress_region).toEqual({
      country: 'US',
      region: 'US-CA',
      city: 'San Jose, Alviso',
    });
    expect(lookup(index, '198.51.100.1')?.egress_region).toEqual({ country: 'DE', region: null, city: null });
    expect(lookup(index, '2001:db8:1::1')?.egress_region).toEqual({
      country: null,
      region: null,
      city: null,
    });
    // Nested: the /28 inside the /24 wins for its own addresses (most specific, RFC 8805 §3).
    expect(lookup(index, '198.51.100.17')?.prefix).toBe('198.51.100.16/28');
    expect(lookup(index, '198.51.100.32')?.prefix).toBe('198.51.100.0/24');
  });

  it('skips and counts unusable rows, and refuses a body that is mostly not a geofeed', () => {
    const rows = Array.from({ length: 200 }, (_, i) => `10.${i}.0.0/16,US,US-NY,New York,`);
    const { report } = parseGeofeed([...rows, 'not-a-prefix,US,,', '10.0.0.0/16,USA,,'].join('\n'));
    expect(report).toMatchObject({ entries: 200, skipped: 2 });
    expect(report.problems[0]).toMatch(/^line 201: bad prefix/);
    expect(() => parseGeofeed('<html><body>502 Bad Gateway</body></html>\n')).toThrow(ListFormatError);
    expect(() => parseGeofeed('')).toThrow(/no usable entries/);
    expect(() => parseGeofeed([...rows.slice(0, 50), 'x,US', 'y,US'].join('\n'))).toThrow(
      /2 of 52 lines unusable/,
    );
  });
});

describe('parseExitList (Tor bulk exit list)', () => {
  it('loads every address of the real list as a /32', () => {
    const { index, report } = parseExitList(TOR);
    const lines = TOR.split('\n').filter((l) => l.trim() !== '');
    expect(report.skipped).toBe(0);
    expect(report.entries).toBe(lines.length);
    expect(index.lookup(parseIpNumber('185.220.101.18')!)).toEqual({
      prefix: '185.220.101.18/32',
      egress_region: null,
    });
    expect(index.lookup(parseIpNumber('93.95.230.253')!)?.prefix).toBe('93.95.230.253/32');
    expect(index.lookup(parseIpNumber('93.95.230.252')!)).toBeUndefined();
    expect(index.lookup(parseIpNumber('93.95.230.254')!)).toBeUndefined();
  });

  it('skips blank and # lines, reads IPv6 exits, refuses CIDRs and garbage', () => {
    const { index, report } = parseExitList('# comment\n\n192.0.2.5\r\n2001:db8::5\n');
    expect(report.entries).toBe(2);
    expect(index.lookup(parseIpNumber('2001:db8::5')!)?.prefix).toBe('2001:db8::5/128');
    expect(() =>
      parseExitList('ExitNode 0011BD2485AD45D984EC4159C88FC066E5E3300E\nPublished 2024-03-12\n'),
    ).toThrow(ListFormatError);
    expect(() => parseExitList('192.0.2.0/24\n')).toThrow(ListFormatError);
  });
});
