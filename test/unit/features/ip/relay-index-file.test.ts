/**
 * The relay index file format: what the service reads answers exactly as the
 * RelayIndex the list parses into (prefix text, region, misses), at every edge;
 * a file that is not whole is refused; names follow the content.
 */
import { mkdtempSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { BlockFile } from '../../../../src/providers/ip/block-file.js';
import {
  formatIpNumber,
  type ParsedIp,
  parseIpNumber,
  parsePrefix,
} from '../../../../src/providers/ip/ip-number.js';
import { parseExitList, parseGeofeed, type RelayIndex } from '../../../../src/providers/ip/relay-index.js';
import {
  encodeRelayIndex,
  isRelayIndexFileName,
  RelayIndexError,
  RelayIndexFile,
  relayIndexFileName,
} from '../../../../src/providers/ip/relay-index-file.js';
import { fixtureText } from '../../../fakes/https-upstream.js';
import { MAX128, toBig, toWords } from '../../../samples.js';

const dir = mkdtempSync(join(tmpdir(), 'netdiag-relay-index-file-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;

const APPLE = fixtureText('relay/egress-ip-ranges.excerpt.csv');
const TOR = fixtureText('relay/tor-torbulkexitlist.txt');
const FEED = fixtureText('ip/geofeed-mixed.csv');

const encoded = ({ index, report }: ReturnType<typeof parseGeofeed>) => encodeRelayIndex(index, report);
const fileOf = (
  parsed: ReturnType<typeof parseGeofeed>,
  blocks?: { blockSize: number; maxBytes: number },
) => {
  const bytes = encoded(parsed);
  return new RelayIndexFile(blocks ? blockFileOver(bytes, blocks) : BlockFile.fromBuffer(bytes));
};

/** A BlockFile reading `bytes` as a file through a cache of a few small blocks, so blocks are evicted and refilled. */
function blockFileOver(bytes: Buffer, blocks: { blockSize: number; maxBytes: number }): BlockFile {
  const path = join(dir, `index-${files++}`);
  writeFileSync(path, bytes);
  try {
    return BlockFile.open(path, blocks);
  } finally {
    unlinkSync(path); // open: readable until closed
  }
}

/** Every prefix's first and last address and their neighbours: where a wrong search shows. */
function edges(lines: string): ParsedIp[] {
  const out: ParsedIp[] = [];
  for (const line of lines.split('\n')) {
    const prefix = parsePrefix(line.split(',')[0]!.trim());
    if (!prefix) continue;
    if (prefix.version === 4) {
      for (const n of [
        prefix.start - 1,
        prefix.start,
        prefix.start + 1,
        prefix.end - 1,
        prefix.end,
        prefix.end + 1,
      ])
        if (n >= 0 && n <= 0xffffffff) out.push({ version: 4, v4: n });
    } else {
      for (const n of [toBig(prefix.start), toBig(prefix.end)])
        for (const d of [-1n, 0n, 1n])
          if (n + d >= 0n && n + d <= MAX128) out.push({ version: 6, w: toWords(n + d) });
    }
  }
  return out;
}

function expectSameAnswers(index: RelayIndex, file: RelayIndexFile, ips: ParsedIp[]): number {
  let hits = 0;
  for (const ip of ips) {
    const expected = index.lookup(ip);
    if (expected) hits++;
    expect(file.lookup(ip), formatIpNumber(ip)).toStrictEqual(expected);
  }
  return hits;
}

describe('the relay index file format', () => {
  it('answers the real excerpts as the parsed index: nested prefixes, quoted cities, empty fields, the Tor list', () => {
    for (const [text, parse] of [
      [APPLE, parseGeofeed],
      [FEED, parseGeofeed],
      [TOR, parseExitList],
    ] as const) {
      const parsed = parse(text);
      const file = fileOf(parsed);
      expect(file.entries).toBe(parsed.index.entries);
      expect(file.report).toStrictEqual(parsed.report);
      const hits = expectSameAnswers(parsed.index, file, edges(text));
      expect(hits).toBeGreaterThan(0);
    }
    // The answers written out, so the comparison cannot be vacuous.
    const feed = fileOf(parseGeofeed(FEED));
    expect(feed.lookup(parseIpNumber('198.51.100.17')!)?.prefix).toBe('198.51.100.16/28');
    expect(feed.lookup(parseIpNumber('198.51.100.32')!)?.prefix).toBe('198.51.100.0/24');
    expect(feed.lookup(parseIpNumber('198.51.100.200')!)).toEqual({
      prefix: '198.51.100.192/26',
      egress_region: { country: 'US', region: 'US-CA', city: 'San Jose, Alviso' },
    });
    expect(feed.lookup(parseIpNumber('2001:db8:1::1')!)?.egress_region).toEqual({
      country: null,
      region: null,
      city: null,
    });
    const apple = fileOf(parseGeofeed(APPLE));
    expect(apple.lookup(parseIpNumber('2a02:26f7:c700:4000:ffff:ffff:ffff:ffff')!)).toEqual({
      prefix: '2a02:26f7:c700:4000::/64',
      egress_region: { country: 'MO', region: null, city: 'Macau' },
    });
    expect(apple.lookup(parseIpNumber('172.224.242.0')!)).toBeUndefined();
    expect(Object.isFrozen(apple.lookup(parseIpNumber('172.224.226.0')!)?.egress_region)).toBe(true);
    const tor = fileOf(parseExitList(TOR));
    expect(tor.lookup(parseIpNumber('185.220.101.18')!)).toEqual({
      prefix: '185.220.101.18/32',
      egress_region: null,
    });
  });

  it('answers as the parsed index for any prefixes, nested, overlapping or unsorted, through a cache of a few blocks', () => {
    const v4 = fc
      .tuple(fc.integer({ min: 0, max: 0xffffffff }), fc.integer({ min: 0, max: 32 }))
      .map(([n, bits]) => {
        const size = 2 ** (32 - bits);
        return `${formatIpNumber({ version: 4, v4: n - (n % size) })}/${bits}`;
      });
    const v6 = fc
      .tuple(fc.bigInt({ min: 0n, max: MAX128 }), fc.integer({ min: 0, max: 128 }))
      .map(([n, bits]) => {
        const start = (n >> BigInt(128 - bits)) << BigInt(128 - bits);
        return `${formatIpNumber({ version: 6, w: toWords(start) })}/${bits}`;
      });
    const tail = fc.constantFrom(
      'US,US-NY,New York,',
      'DE,,,',
      ',,,',
      'GB,GB-EN,"London, City",',
      'JP,,Tōkyō,',
    );
    const row = fc.tuple(fc.oneof(v4, v6), tail).map(([prefix, rest]) => `${prefix},${rest}`);
    fc.assert(
      fc.property(fc.array(row, { minLength: 1, maxLength: 40 }), (rows) => {
        const text = rows.join('\n');
        const parsed = parseGeofeed(text);
        const file = fileOf(parsed, { blockSize: 64, maxBytes: 192 });
        expectSameAnswers(parsed.index, file, edges(text));
        file.close();
      }),
      { numRuns: 150 },
    );
  });

  it('refuses a file that is not a whole index', () => {
    const bytes = encoded(parseGeofeed(APPLE));
    const open = (b: Buffer) => new RelayIndexFile(BlockFile.fromBuffer(b));
    expect(open(bytes).entries).toBe(428);
    expect(() => open(bytes.subarray(0, bytes.length - 1))).toThrow(RelayIndexError);
    expect(() => open(Buffer.concat([bytes, Buffer.alloc(1)]))).toThrow(/relay index of \d+ bytes/);
    expect(() => open(Buffer.from('NDASNIX1'.padEnd(64, '\0')))).toThrow(/not a relay index file/);
    expect(() => open(Buffer.alloc(0))).toThrow(RelayIndexError);
    // A report that does not parse, at the right size.
    const broken = Buffer.from(bytes);
    broken.write('x', broken.length - 1, 'latin1');
    expect(() => open(broken)).toThrow(/report unreadable/);
  });

  it('is named by the list content and format, under the provider', () => {
    const body = Buffer.from(APPLE);
    const name = relayIndexFileName('apple-private-relay', 'geofeed', body);
    expect(name).toMatch(/^apple-private-relay-[0-9a-f]{16}\.index$/);
    expect(relayIndexFileName('apple-private-relay', 'geofeed', Buffer.from(APPLE))).toBe(name);
    expect(relayIndexFileName('apple-private-relay', 'geofeed', Buffer.from(`${APPLE}\n`))).not.toBe(name);
    expect(relayIndexFileName('apple-private-relay', 'tor-exits', body)).not.toBe(name);
    expect(isRelayIndexFileName('apple-private-relay', name)).toBe(true);
    expect(isRelayIndexFileName('tor-exit-list', name)).toBe(false);
    expect(isRelayIndexFileName('apple-private-relay', `${name}.123-1-abcd.tmp`)).toBe(false);
    expect(isRelayIndexFileName('apple-private-relay', 'apple-private-relay-0123456789abcdef.list')).toBe(
      false,
    );
    expect(isRelayIndexFileName('apple', name)).toBe(false);
  });
});
