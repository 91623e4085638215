import { isIP } from 'node:net';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  formatIPv6,
  formatIpNumber,
  type ParsedIp,
  parseIpNumber,
  parsePrefix,
  prefixOf,
} from '../../../../src/providers/ip/ip-number.js';

const MAX = 0xffffffff;

describe('parseIpNumber', () => {
  it('parses IPv4 to a uint32 and IPv6 to four uint32 words', () => {
    expect(parseIpNumber('0.0.0.0')).toEqual({ version: 4, v4: 0 });
    expect(parseIpNumber('255.255.255.255')).toEqual({ version: 4, v4: 0xffffffff });
    expect(parseIpNumber('172.224.226.1')).toEqual({
      version: 4,
      v4: 172 * 2 ** 24 + 224 * 2 ** 16 + 226 * 2 ** 8 + 1,
    });
    expect(parseIpNumber('2a02:26f7:c700:4000::1')).toEqual({
      version: 6,
      w: [0x2a0226f7, 0xc7004000, 0, 1],
    });
    expect(parseIpNumber('::')).toEqual({ version: 6, w: [0, 0, 0, 0] });
    expect(parseIpNumber('ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff')).toEqual({
      version: 6,
      w: [MAX, MAX, MAX, MAX],
    });
    expect(parseIpNumber('64:ff9b::192.0.2.33')).toEqual({ version: 6, w: [0x0064ff9b, 0, 0, 0xc0000221] });
  });

  it('turns an IPv4-mapped address (what dual-stack sockets report) into the IPv4 address', () => {
    expect(parseIpNumber('::ffff:8.8.8.8')).toEqual(parseIpNumber('8.8.8.8'));
    expect(parseIpNumber('::ffff:808:808')).toEqual(parseIpNumber('8.8.8.8'));
    // Not mapped: IPv4-compatible (::/96) and NAT64 stay IPv6.
    expect(parseIpNumber('::8.8.8.8')?.version).toBe(6);
  });

  it.each([
    '',
    '1.2.3',
    '1.2.3.4.5',
    '01.2.3.4',
    '1.2.3.256',
    '1.2.3.4 ',
    '0x7f.0.0.1',
    '127.1',
    '2130706433',
    'fe80::1%eth0',
    '[::1]',
    '1::2::3',
    '1:2:3:4:5:6:7:8:9',
    '1:2:3:4:5:6:7',
    '12345::',
    ':1::',
    '1::2:',
    'g::1',
    '::ffff:1.2.3.04',
    'example.com',
  ])('refuses %j', (text) => {
    expect(parseIpNumber(text)).toBeUndefined();
  });

  it('accepts exactly what node:net accepts (zone ids aside), property-checked', () => {
    const ipv6Like = fc
      .array(fc.constantFrom('0', '1', 'a', 'F', ':', '::', '.', '12', 'ffff', '10000', '1.2.3.4', '255'), {
        maxLength: 12,
      })
      .map((parts) => parts.join(''));
    fc.assert(
      fc.property(fc.oneof(fc.ipV4(), fc.ipV6(), fc.ipV4Extended(), ipv6Like, fc.string()), (text) => {
        const ours = parseIpNumber(text) !== undefined;
        const node = isIP(text) !== 0 && !text.includes('%');
        expect(ours).toBe(node);
      }),
      { numRuns: 5000 },
    );
  });
});

describe('formatting', () => {
  it('writes RFC 5952 canonical IPv6', () => {
    const f = (t: string) => formatIpNumber(parseIpNumber(t)!);
    expect(f('2001:0DB8:0000:0000:0000:0000:0000:0001')).toBe('2001:db8::1');
    expect(f('2001:db8:0:0:1:0:0:1')).toBe('2001:db8::1:0:0:1'); // the first of two equal runs (§4.2.3)
    expect(f('2001:db8:0:1:1:1:1:1')).toBe('2001:db8:0:1:1:1:1:1'); // a single zero group stays (§4.2.2)
    expect(f('::')).toBe('::');
    expect(f('::1')).toBe('::1');
    expect(f('1::')).toBe('1::');
    expect(formatIPv6([MAX, MAX, MAX, MAX])).toBe('ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff');
  });

  it('round-trips every address node:net accepts', () => {
    fc.assert(
      fc.property(fc.oneof(fc.ipV4(), fc.ipV6()), (text) => {
        const parsed = parseIpNumber(text)!;
        expect(parseIpNumber(formatIpNumber(parsed))).toEqual(parsed);
      }),
      { numRuns: 2000 },
    );
  });
});

/** The uint32 of a dotted quad. */
const v4 = (text: string) => (parseIpNumber(text) as { v4: number }).v4;

describe('prefixes', () => {
  it('gives the first and last address of a CIDR', () => {
    expect(parsePrefix('172.224.226.0/27')).toEqual({
      version: 4,
      bits: 27,
      start: v4('172.224.226.0'),
      end: v4('172.224.226.31'),
    });
    expect(parsePrefix('2a02:26f7:c700:4000::/64')).toEqual({
      version: 6,
      bits: 64,
      start: [0x2a0226f7, 0xc7004000, 0, 0],
      end: [0x2a0226f7, 0xc7004000, MAX, MAX],
    });
    expect(parsePrefix('2001:db8::/31')).toMatchObject({
      start: [0x20010db8, 0, 0, 0],
      end: [0x20010db9, MAX, MAX, MAX],
    });
    expect(parsePrefix('::/0')).toMatchObject({ start: [0, 0, 0, 0], end: [MAX, MAX, MAX, MAX] });
    expect(parsePrefix('1.2.3.4')).toMatchObject({ bits: 32 });
    expect(parsePrefix('2001:db8::1/100')).toMatchObject({
      start: [0x20010db8, 0, 0, 0],
      end: [0x20010db8, 0, 0, 0xfffffff],
    });
  });

  it('clears host bits and maps ::ffff:a.b.c.d/96+ to IPv4', () => {
    expect(parsePrefix('10.1.2.3/8')).toMatchObject({ version: 4, start: 10 * 2 ** 24 });
    expect(parsePrefix('::ffff:10.0.0.0/104')).toMatchObject({ version: 4, bits: 8, start: 10 * 2 ** 24 });
  });

  it.each(['1.2.3.0/33', '::/129', '1.2.3.0/', '1.2.3.0/x', 'x/8', '1.2.3.0/8/8'])('refuses %j', (text) => {
    expect(parsePrefix(text)).toBeUndefined();
  });

  it('rebuilds the prefix text holding an address', () => {
    const ip = parseIpNumber('2a02:26f7:c700:4000:1234::5') as ParsedIp;
    expect(prefixOf(ip, 64)).toBe('2a02:26f7:c700:4000::/64');
    expect(prefixOf(ip, 0)).toBe('::/0');
    expect(prefixOf(ip, 128)).toBe('2a02:26f7:c700:4000:1234::5/128');
    expect(prefixOf(parseIpNumber('172.224.226.45')!, 27)).toBe('172.224.226.32/27');
    expect(prefixOf(parseIpNumber('172.224.226.45')!, 32)).toBe('172.224.226.45/32');
  });
});
