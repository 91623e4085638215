import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseIpNumber, parsePrefix, type Words } from '../../../../src/providers/ip/ip-number.js';
import { NO_MATCH, RangeTableBuilder } from '../../../../src/providers/ip/range-table.js';

const v4 = (text: string) => (parseIpNumber(text) as { v4: number }).v4;
const MAX64 = 0xffffffffffffffffn;
const MAX128 = (1n << 128n) - 1n;
/** A 128-bit address (a test-only BigInt) as the table's four uint32 words. */
const words = (n: bigint): Words => [
  Number((n >> 96n) & 0xffffffffn),
  Number((n >> 64n) & 0xffffffffn),
  Number((n >> 32n) & 0xffffffffn),
  Number(n & 0xffffffffn),
];

function tableOf(prefixes: string[]) {
  const builder = new RangeTableBuilder();
  for (const [i, p] of prefixes.entries()) builder.addPrefix(parsePrefix(p)!, i);
  return builder.build();
}

describe('RangeTable', () => {
  it('matches the first and last address of a range and nothing one outside', () => {
    const table = tableOf(['172.224.226.0/27', '172.224.226.32/31', '2a02:26f7:c700:4000::/64']);
    expect(table.find(parseIpNumber('172.224.226.0')!)).toBe(0);
    expect(table.find(parseIpNumber('172.224.226.31')!)).toBe(0);
    expect(table.find(parseIpNumber('172.224.226.32')!)).toBe(1);
    expect(table.find(parseIpNumber('172.224.226.33')!)).toBe(1);
    expect(table.find(parseIpNumber('172.224.226.34')!)).toBe(NO_MATCH);
    expect(table.find(parseIpNumber('172.224.225.255')!)).toBe(NO_MATCH);
    expect(table.find(parseIpNumber('2a02:26f7:c700:4000::')!)).toBe(2);
    expect(table.find(parseIpNumber('2a02:26f7:c700:4000:ffff:ffff:ffff:ffff')!)).toBe(2);
    expect(table.find(parseIpNumber('2a02:26f7:c700:3fff:ffff:ffff:ffff:ffff')!)).toBe(NO_MATCH);
    expect(table.find(parseIpNumber('2a02:26f7:c700:4001::')!)).toBe(NO_MATCH);
  });

  it('covers the edges of the address spaces', () => {
    const table = tableOf([
      '0.0.0.0/32',
      '255.255.255.255/32',
      '::/128',
      'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff/128',
    ]);
    expect(table.findV4(0)).toBe(0);
    expect(table.findV4(0xffffffff)).toBe(1);
    expect(table.findV4(1)).toBe(NO_MATCH);
    expect(table.findV6(words(0n))).toBe(2);
    expect(table.findV6(words(MAX128))).toBe(3);
    expect(table.findV6(words(MAX128 - 1n))).toBe(NO_MATCH);
    const whole = tableOf(['0.0.0.0/0', '::/0']);
    expect(whole.findV4(0xffffffff)).toBe(0);
    expect(whole.findV6(words(MAX128))).toBe(1);
  });

  it('finds ranges that cross the boundary between the two 64-bit halves', () => {
    const hi = (h: bigint, l: bigint) => words((h << 64n) | l);
    const builder = new RangeTableBuilder();
    builder.addV6(hi(1n, MAX64 - 1n), hi(2n, 1n), 7);
    const table = builder.build();
    expect(table.findV6(hi(1n, MAX64 - 2n))).toBe(NO_MATCH);
    expect(table.findV6(hi(1n, MAX64))).toBe(7);
    expect(table.findV6(hi(2n, 0n))).toBe(7);
    expect(table.findV6(hi(2n, 2n))).toBe(NO_MATCH);
  });

  it('sorts unsorted input', () => {
    const table = tableOf([
      '10.0.2.0/24',
      '10.0.0.0/24',
      '2001:db8:2::/48',
      '2001:db8:1::/48',
      '10.0.1.0/24',
    ]);
    expect(table.overlaps).toBe(0);
    expect(table.find(parseIpNumber('10.0.0.7')!)).toBe(1);
    expect(table.find(parseIpNumber('10.0.1.7')!)).toBe(4);
    expect(table.find(parseIpNumber('10.0.2.7')!)).toBe(0);
    expect(table.find(parseIpNumber('2001:db8:1::9')!)).toBe(3);
    expect(table.find(parseIpNumber('2001:db8:2::9')!)).toBe(2);
  });

  it('resolves nested prefixes by longest match (RFC 8805 §3) and counts the overlaps', () => {
    const table = tableOf(['10.0.0.0/8', '10.1.0.0/16', '10.1.2.0/24', '2001:db8::/32', '2001:db8:5::/48']);
    expect(table.overlaps).toBe(3);
    expect(table.find(parseIpNumber('10.0.0.1')!)).toBe(0);
    expect(table.find(parseIpNumber('10.1.0.1')!)).toBe(1);
    expect(table.find(parseIpNumber('10.1.2.1')!)).toBe(2);
    expect(table.find(parseIpNumber('10.1.3.1')!)).toBe(1);
    expect(table.find(parseIpNumber('10.2.0.1')!)).toBe(0);
    expect(table.find(parseIpNumber('10.255.255.255')!)).toBe(0);
    expect(table.find(parseIpNumber('2001:db8:5::1')!)).toBe(4);
    expect(table.find(parseIpNumber('2001:db8:6::1')!)).toBe(3);
    expect(table.find(parseIpNumber('2001:db8:4:ffff::1')!)).toBe(3);
  });

  it('resolves a partial overlap in favour of the later-starting range', () => {
    // The shape of the one overlap in the 2026-06 ip-location-db IPv4 ASN file.
    const builder = new RangeTableBuilder();
    builder.addV4(v4('214.95.0.0'), v4('215.0.255.255'), 749);
    builder.addV4(v4('215.0.0.0'), v4('215.1.3.255'), 721);
    const table = builder.build();
    expect(table.overlaps).toBe(1);
    expect(table.findV4(v4('214.255.255.255'))).toBe(749);
    expect(table.findV4(v4('215.0.0.0'))).toBe(721);
    expect(table.findV4(v4('215.1.3.255'))).toBe(721);
    expect(table.findV4(v4('215.1.4.0'))).toBe(NO_MATCH);
  });

  it('builds the same table whatever capacity it was given, and is spent once built', () => {
    const prefixes = ['10.0.0.0/24', '10.0.1.0/25', '10.0.2.0/24', '2001:db8:1::/48', '2001:db8:2::/48'];
    const probes = [
      '10.0.0.9',
      '10.0.1.9',
      '10.0.1.200',
      '10.0.2.9',
      '2001:db8:1::9',
      '2001:db8:2::9',
      '2001:db8:3::9',
    ];
    const answers = (capacity: { v4?: number; v6?: number } | undefined) => {
      const builder = new RangeTableBuilder(capacity);
      for (const [i, p] of prefixes.entries()) builder.addPrefix(parsePrefix(p)!, i);
      const table = builder.build();
      // The exact capacity hands the builder's own storage to the table: writing to it must be refused.
      expect(() => builder.addV4(0, 0, 0)).toThrow(/after build/);
      expect(() => builder.build()).toThrow(/after build/);
      return { segments: table.segments, found: probes.map((ip) => table.find(parseIpNumber(ip)!)) };
    };
    const expected = answers(undefined);
    expect(expected.found).toEqual([0, 1, NO_MATCH, 2, 3, 4, NO_MATCH]);
    for (const capacity of [{ v4: 3, v6: 2 }, { v4: 0, v6: 0 }, { v4: 1 }, { v4: 5000, v6: 5000 }])
      expect(answers(capacity)).toEqual(expected);
  });

  it('agrees with a linear scan (the later-starting range wins) on random ranges', () => {
    const range = fc
      .tuple(fc.integer({ min: 0, max: 2000 }), fc.integer({ min: 0, max: 300 }), fc.nat(1000))
      .map(([start, length, value]) => ({ start, end: start + length, value }));
    fc.assert(
      fc.property(
        fc.array(range, { maxLength: 40 }),
        fc.array(fc.integer({ min: 0, max: 2400 }), { maxLength: 50 }),
        fc.constantFrom('default', 'exact', 'none'),
        (ranges, probes, sizing) => {
          // Told the exact count, told nothing, or told zero and left to grow: the same answers.
          const n = sizing === 'exact' ? ranges.length : 0;
          const builder4 = new RangeTableBuilder(sizing === 'default' ? undefined : { v4: n });
          const builder6 = new RangeTableBuilder(sizing === 'default' ? undefined : { v6: n });
          // The same ranges in IPv6, placed so they straddle the 64-bit halves (a carry through three words).
          const base = (5n << 64n) | (MAX64 - 1000n);
          const at = (n: number) => words(base + BigInt(n));
          for (const r of ranges) {
            builder4.addV4(r.start, r.end, r.value);
            builder6.addV6(at(r.start), at(r.end), r.value);
          }
          const t4 = builder4.build();
          const t6 = builder6.build();
          // Reference: among ranges holding the probe, the one sorted last by (start asc, end desc).
          const sorted = ranges
            .map((r, i) => ({ ...r, i }))
            .sort((a, b) => a.start - b.start || b.end - a.end || a.i - b.i);
          for (const p of probes) {
            const holders = sorted.filter((r) => r.start <= p && p <= r.end);
            const expected = holders.length === 0 ? NO_MATCH : holders[holders.length - 1]!.value;
            expect(t4.findV4(p)).toBe(expected);
            expect(t6.findV6(at(p))).toBe(expected);
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('holds nothing when built empty', () => {
    const table = new RangeTableBuilder().build();
    expect(table.findV4(1)).toBe(NO_MATCH);
    expect(table.findV6([0, 0, 0, 1])).toBe(NO_MATCH);
    expect(table.segments).toEqual({ v4: 0, v6: 0 });
  });
});
