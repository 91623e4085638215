/**
 * The on-disk MMDB reader against mmdb-lib, the reference peer, on databases
 * the test writer builds: every record size, every data type, all four
 * pointer sizes, IPv4 in IPv4 and IPv6 trees. The bundled DB-IP files are
 * compared in test/integration/ip-geo-bundled.test.ts.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Reader } from 'mmdb-lib';
import { afterAll, describe, expect, it } from 'vitest';
import { BlockFile } from '../../../../src/providers/ip/block-file.js';
import {
  formatIpNumber,
  type ParsedIp,
  parseIpNumber,
  parsePrefix,
} from '../../../../src/providers/ip/ip-number.js';
import { MmdbDecoder, MmdbFormatError } from '../../../../src/providers/ip/mmdb-data.js';
import { MmdbFile } from '../../../../src/providers/ip/mmdb-file.js';
import { MAX128, seeded, toBig, toWords } from '../../../samples.js';
import { buildMmdb, type MmdbNetwork, type MmdbOptions, typed } from './mmdb-writer.js';

const dir = mkdtempSync(join(tmpdir(), 'netdiag-mmdb-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;
function onDisk(bytes: Buffer): string {
  const path = join(dir, `${files++}.mmdb`);
  writeFileSync(path, bytes);
  return path;
}

/** One value of every type the spec gives a value, at the edges of their sizes. */
const EVERYTHING = {
  utf8: 'héllo, wörld ✓',
  empty: '',
  size29: 'a'.repeat(100), // payload size in the next byte
  size30: 'b'.repeat(1000), // in the next two
  size31: 'c'.repeat(70_000), // in the next three
  double: typed('double', -1.5),
  doubleTiny: typed('double', 5e-324),
  float: typed('float', 0.25),
  bytes: Buffer.from([0, 1, 2, 254, 255]),
  noBytes: Buffer.alloc(0),
  u16: typed('uint16', 65_535),
  u16zero: typed('uint16', 0),
  u32: typed('uint32', 4_294_967_295),
  u32small: typed('uint32', 7),
  i32neg: typed('int32', -123_456),
  i32min: typed('int32', -2_147_483_648),
  i32pos: typed('int32', 77),
  i32zero: typed('int32', 0),
  u64: typed('uint64', 2n ** 64n - 1n),
  u64small: typed('uint64', 5n),
  u128: typed('uint128', 2n ** 128n - 1n),
  u128zero: typed('uint128', 0n),
  yes: true,
  no: false,
  array: [1, 'two', [3], { four: 4 }],
  emptyArray: [],
  emptyMap: {},
  nested: { a: { b: { c: 'deep' } } },
};

/** What a reader must return for EVERYTHING (mmdb-lib's shapes: BigInt for uint64/128, a Buffer for bytes). */
const EVERYTHING_DECODED = {
  ...EVERYTHING,
  double: -1.5,
  doubleTiny: 5e-324,
  float: 0.25,
  u16: 65_535,
  u16zero: 0,
  u32: 4_294_967_295,
  u32small: 7,
  i32neg: -123_456,
  i32min: -2_147_483_648,
  i32pos: 77,
  i32zero: 0,
  u64: 2n ** 64n - 1n,
  u64small: 5n,
  u128: 2n ** 128n - 1n,
  u128zero: 0n,
};

const city = (name: string, code: string) => ({
  city: name,
  country_code: code,
  latitude: typed('float', 51.5),
  longitude: typed('double', -0.0931),
  names: { en: name, de: name },
});

function networks(ipVersion: 4 | 6): MmdbNetwork[] {
  const v4: MmdbNetwork[] = [
    { cidr: '1.0.0.0/24', data: EVERYTHING },
    { cidr: '81.2.69.0/24', data: city('London', 'GB') },
    { cidr: '81.2.70.0/23', data: city('London', 'GB') }, // the same record again
    { cidr: '128.0.0.0/1', data: city('Upper half', 'ZZ') },
    { cidr: '8.8.8.8/32', data: 'a bare string record' },
    { cidr: '9.0.0.0/8', data: [city('Array', 'AA'), 1, 2] },
  ];
  if (ipVersion === 4) return v4;
  return [
    ...v4,
    { cidr: '2a02:26f7::/32', data: city('Amsterdam', 'NL') },
    { cidr: '2001:db8:1::/48', data: { ...EVERYTHING, extra: city('London', 'GB') } },
    { cidr: '8000::/1', data: city('Upper half', 'ZZ') },
    { cidr: '2c0f:ffff:ffff:ffff:ffff:ffff:ffff:ffff/128', data: 'last of its kind' },
  ];
}

// --- addresses to probe -----------------------------------------------------------------

/** First and last address of each network and one either side, plus a seeded spread of others. */
function probes(nets: MmdbNetwork[], ipVersion: 4 | 6, count = 300): ParsedIp[] {
  const out: ParsedIp[] = [];
  for (const { cidr } of nets) {
    const p = parsePrefix(cidr)!;
    if (p.version === 4) {
      for (const v of [p.start - 1, p.start, p.end, p.end + 1])
        if (v >= 0 && v <= 0xffffffff) out.push({ version: 4, v4: v });
    } else {
      const s = toBig(p.start);
      const e = toBig(p.end);
      for (const v of [s - 1n, s, e, e + 1n])
        if (v >= 0n && v <= MAX128) out.push({ version: 6, w: toWords(v) });
    }
  }
  const random = seeded(ipVersion * 1000 + count);
  for (let i = 0; i < count; i++) {
    out.push({ version: 4, v4: random() });
    if (ipVersion === 6) out.push({ version: 6, w: [random(), random(), random(), random()] });
  }
  return out;
}

/** Both readers (from a Buffer, and from the file through a tiny cache that keeps evicting) agree with mmdb-lib. */
function expectSameAsMmdbLib(bytes: Buffer, ips: ParsedIp[]): void {
  const reference = new Reader(bytes);
  const readers = [
    new MmdbFile(BlockFile.fromBuffer(bytes)),
    MmdbFile.open(onDisk(bytes), { blockSize: 64, maxBytes: 4 * 64 }),
  ];
  try {
    for (const reader of readers) {
      const { metadata } = reader;
      const ref = reference.metadata;
      expect(metadata).toMatchObject({
        nodeCount: ref.nodeCount,
        recordSize: ref.recordSize,
        ipVersion: ref.ipVersion,
        databaseType: ref.databaseType,
        languages: ref.languages,
        binaryFormatMajorVersion: ref.binaryFormatMajorVersion,
        binaryFormatMinorVersion: ref.binaryFormatMinorVersion,
        buildEpoch: ref.buildEpoch,
        description: ref.description,
        searchTreeSize: ref.searchTreeSize,
      });
      for (const ip of ips) {
        if (ip.version === 6 && metadata.ipVersion === 4) continue;
        expect(reader.getWithPrefixLength(ip), formatIpNumber(ip)).toStrictEqual(
          reference.getWithPrefixLength(formatIpNumber(ip)),
        );
      }
    }
  } finally {
    for (const r of readers) r.close();
  }
}

describe('MmdbFile against mmdb-lib', () => {
  for (const recordSize of [24, 28, 32] as const) {
    for (const ipVersion of [4, 6] as const) {
      for (const pointers of ['none', 'minimal', 'wide'] as const) {
        it(`${recordSize}-bit records, IPv${ipVersion} tree, pointers: ${pointers}`, () => {
          const nets = networks(ipVersion);
          const opts: MmdbOptions = { ipVersion, databaseType: `test-${recordSize}`, recordSize, pointers };
          expectSameAsMmdbLib(buildMmdb(nets, opts), probes(nets, ipVersion));
        });
      }
    }
  }

  it('decodes every data type to the value written', () => {
    for (const ipVersion of [4, 6] as const) {
      const reader = new MmdbFile(
        BlockFile.fromBuffer(
          buildMmdb(networks(ipVersion), { ipVersion, databaseType: 't', pointers: 'minimal' }),
        ),
      );
      expect(reader.getWithPrefixLength(parseIpNumber('1.0.0.200')!)).toStrictEqual([EVERYTHING_DECODED, 24]);
      expect(reader.getWithPrefixLength(parseIpNumber('8.8.8.8')!)).toStrictEqual([
        'a bare string record',
        32,
      ]);
      expect(reader.getWithPrefixLength(parseIpNumber('8.8.8.9')!)).toStrictEqual([null, 32]);
      const [london] = reader.getWithPrefixLength(parseIpNumber('81.2.71.1')!);
      expect(london).toStrictEqual({
        city: 'London',
        country_code: 'GB',
        latitude: 51.5,
        longitude: -0.0931,
        names: { en: 'London', de: 'London' },
      });
      if (ipVersion === 6) {
        expect(reader.getWithPrefixLength(parseIpNumber('2001:db8:1:2::3')!)).toStrictEqual([
          { ...EVERYTHING_DECODED, extra: london },
          48,
        ]);
      }
    }
  });

  it('follows pointers of all four sizes', () => {
    const sizes = new Set<number>();
    const shared = { k: 'early string', list: ['x', 'y'] };
    const nets: MmdbNetwork[] = [
      { cidr: '10.0.0.0/8', data: shared }, // offsets < 2048: size 0
      { cidr: '11.0.0.0/8', data: { filler: 'f'.repeat(3000), later: 'after 2 KiB', m: { deep: 1 } } },
      { cidr: '12.0.0.0/8', data: { filler: 'g'.repeat(600_000), late: 'after 514 KiB', l: [1, 2, 3] } },
      {
        cidr: '13.0.0.0/8',
        data: { a: 'early string', b: 'after 2 KiB', c: 'after 514 KiB', d: { deep: 1 } },
      },
      { cidr: '14.0.0.0/8', data: { again: shared, l: [1, 2, 3], k: 'early string' } },
    ];
    for (const pointers of ['minimal', 'wide'] as const) {
      const bytes = buildMmdb(nets, {
        ipVersion: 4,
        databaseType: 't',
        pointers,
        onPointer: (s) => sizes.add(s),
      });
      expectSameAsMmdbLib(bytes, probes(nets, 4, 50));
      const reader = new MmdbFile(BlockFile.fromBuffer(bytes));
      expect(reader.getWithPrefixLength(parseIpNumber('13.1.2.3')!)[0]).toStrictEqual({
        a: 'early string',
        b: 'after 2 KiB',
        c: 'after 514 KiB',
        d: { deep: 1 },
      });
      expect(reader.getWithPrefixLength(parseIpNumber('14.1.2.3')!)[0]).toStrictEqual({
        again: shared,
        l: [1, 2, 3],
        k: 'early string',
      });
    }
    expect([...sizes].sort()).toEqual([0, 1, 2, 3]);
  });

  it('reads 28-bit records whose top four bits are set, on both sides of a node', () => {
    // A 16.8 MB record first, so the records after it point past 2^24.
    const nets: MmdbNetwork[] = [
      { cidr: '20.0.0.0/8', data: 'z'.repeat(16_800_000) },
      { cidr: '64.0.0.0/8', data: city('Left', 'LL') }, // 01000000: a left record holds it
      { cidr: '193.0.0.0/8', data: city('Right', 'RR') }, // 11000001: a right record
    ];
    const bytes = buildMmdb(nets, { ipVersion: 4, databaseType: 't', recordSize: 28 });
    const reference = new Reader(bytes);
    const reader = MmdbFile.open(onDisk(bytes));
    for (const text of ['64.1.2.3', '193.1.2.3', '20.0.0.1', '200.0.0.1']) {
      const ip = parseIpNumber(text)!;
      const [record, prefix] = reader.getWithPrefixLength(ip);
      const [want, wantPrefix] = reference.getWithPrefixLength(text);
      expect(prefix, text).toBe(wantPrefix);
      expect(record, text).toStrictEqual(want);
    }
    expect(reader.getWithPrefixLength(parseIpNumber('64.1.2.3')!)[0]).toMatchObject({ city: 'Left' });
    expect(reader.getWithPrefixLength(parseIpNumber('193.1.2.3')!)[0]).toMatchObject({ city: 'Right' });
    reader.close();
  });

  it('looks IPv4 up under ::/96 of an IPv6 tree, and answers as mmdb-lib when that subtree is absent or covered', () => {
    const none = buildMmdb([{ cidr: '2a02:26f7::/32', data: 'v6 only' }], {
      ipVersion: 6,
      databaseType: 't',
    });
    expectSameAsMmdbLib(none, probes([], 6, 50));
    expect(new MmdbFile(BlockFile.fromBuffer(none)).getWithPrefixLength(parseIpNumber('1.2.3.4')!)).toEqual([
      null,
      0,
    ]);
    // A network above ::/96 covers every IPv4 address: mmdb-lib says prefix 0 (the IPv4 space is all of it).
    const covered = buildMmdb([{ cidr: '::/64', data: 'low' }], { ipVersion: 6, databaseType: 't' });
    expectSameAsMmdbLib(covered, probes([], 6, 50));
    expect(
      new MmdbFile(BlockFile.fromBuffer(covered)).getWithPrefixLength(parseIpNumber('1.2.3.4')!),
    ).toEqual(['low', 0]);
  });

  it('refuses an IPv6 address in an IPv4 tree', () => {
    const reader = new MmdbFile(
      BlockFile.fromBuffer(buildMmdb(networks(4), { ipVersion: 4, databaseType: 't' })),
    );
    expect(() => reader.getWithPrefixLength(parseIpNumber('5102:4500::1')!)).toThrow(RangeError);
  });
});

describe('MmdbFile refuses what is not an MMDB 2.x database', () => {
  const file = (bytes: Buffer) => () => new MmdbFile(BlockFile.fromBuffer(bytes));
  const good = networks(4);

  it('without the metadata marker', () => {
    expect(file(Buffer.from('not a database'))).toThrow(MmdbFormatError);
    expect(file(Buffer.alloc(0))).toThrow(MmdbFormatError);
  });

  it('with metadata it does not understand', () => {
    const bad = (metadata: MmdbOptions['metadata']) =>
      file(buildMmdb(good, { ipVersion: 4, databaseType: 't', metadata }));
    expect(bad({ record_size: typed('uint16', 20) })).toThrow(/record size 20/);
    expect(bad({ binary_format_major_version: typed('uint16', 3) })).toThrow(/format 3/);
    expect(bad({ ip_version: typed('uint16', 5) })).toThrow(/ip_version/);
    expect(bad({ node_count: 'many' })).toThrow(/node_count/);
    expect(bad({ node_count: 1_000_000 })).toThrow(/overruns/);
    expect(bad({ database_type: 7 })).toThrow(/database_type/);
  });

  it('with a tree record pointing outside the data section', () => {
    const bytes = buildMmdb([{ cidr: '1.0.0.0/8', data: 'x' }], { ipVersion: 4, databaseType: 't' });
    // Node 0's left record (0.0.0.0/1 → node 1…): point it far past the data.
    bytes.writeUIntBE(0xfffff0, 0, 3);
    const reader = new MmdbFile(BlockFile.fromBuffer(bytes));
    expect(() => reader.getWithPrefixLength(parseIpNumber('1.2.3.4')!)).toThrow(/outside the data section/);
  });
});

describe('MmdbDecoder', () => {
  const decode = (...bytes: number[]) =>
    new MmdbDecoder(BlockFile.fromBuffer(Buffer.from(bytes)), 0).decodeAt(0);

  it('refuses a pointer to a pointer, and data that nests without end', () => {
    // 0: pointer → 2; 2: pointer → 0.
    expect(() => decode(0x20, 0x02, 0x20, 0x00)).toThrow(/points to the pointer/);
    // 0: a one-pair map whose value points back at the map.
    expect(() => decode(0xe1, 0x41, 0x6b, 0x20, 0x00)).toThrow(/nested deeper/);
  });

  it('refuses the types that are not values, and unknown ones', () => {
    expect(() => decode(0x00, 0x05)).toThrow(/data cache container/); // extended 7 + 5 = 12
    expect(() => decode(0x00, 0x06)).toThrow(/end marker/);
    expect(() => decode(0x00, 0x09)).toThrow(/unknown extended type 16/);
    expect(() => decode(0x00, 0x00)).toThrow(/unknown extended type 7/);
  });

  it('refuses sizes the spec does not allow', () => {
    expect(() => decode(0x62, 0x01, 0x02)).toThrow(/double of 2 bytes/);
    expect(() => decode(0x02, 0x08, 0, 0)).toThrow(/float of 2 bytes/);
    expect(() => decode(0x02, 0x07)).toThrow(/boolean of size 2/);
    expect(() => decode(0xa3, 1, 2, 3)).toThrow(/uint16 of 3 bytes/);
    expect(() => decode(0x05, 0x01, 1, 2, 3, 4, 5)).toThrow(/int32 of 5 bytes/);
    expect(() => decode(0xe1, 0xc1, 0x01, 0x41, 0x61)).toThrow(/map key/);
  });

  it('reads a short int32 as positive and a full one as two’s complement', () => {
    expect(decode(0x03, 0x01, 0xff, 0xff, 0xff)).toBe(0xffffff);
    expect(decode(0x04, 0x01, 0xff, 0xff, 0xff, 0xfe)).toBe(-2);
  });

  it('keeps a key named __proto__ as data', () => {
    const value = decode(0xe1, 0x49, ...Buffer.from('__proto__'), 0x41, 0x78);
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
    expect(Object.keys(value as object)).toEqual(['__proto__']);
  });
});
