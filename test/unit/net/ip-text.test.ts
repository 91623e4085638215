/**
 * The one IP address grammar and its two representations: bytes for the
 * classifier (parseIpBytes) and numbers for the range tables
 * (parseIpNumber). Both must accept the same texts, node:net's (zone ids
 * aside), and name the same address.
 */
import { isIP } from 'node:net';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatIpBytes, parseIpBytes, unmapIp } from '../../../src/net/address.js';
import { ipv4Number, ipv6Groups } from '../../../src/net/ip-text.js';
import { formatIpNumber, parseIpNumber } from '../../../src/providers/ip/ip-number.js';

const ipv6Like = fc
  .array(fc.constantFrom('0', '1', 'a', 'F', ':', '::', '.', '12', 'ffff', '10000', '1.2.3.4', '255'), {
    maxLength: 12,
  })
  .map((parts) => parts.join(''));
const anyText = fc.oneof(fc.ipV4(), fc.ipV6(), fc.ipV4Extended(), ipv6Like, fc.string());

describe('the address grammar', () => {
  it('reads a dotted quad in a slice of the text', () => {
    expect(ipv4Number('192.0.2.33')).toBe(0xc0000221);
    expect(ipv4Number('x192.0.2.33y', 1, 11)).toBe(0xc0000221);
    expect(ipv4Number('192.0.2.033')).toBe(-1);
  });

  it('reads IPv6 into eight groups, the embedded dotted quad as the last two', () => {
    expect(ipv6Groups('64:ff9b::192.0.2.33')).toEqual([0x64, 0xff9b, 0, 0, 0, 0, 0xc000, 0x0221]);
    expect(ipv6Groups('::')).toEqual([0, 0, 0, 0, 0, 0, 0, 0]);
    expect(ipv6Groups('fe80::1%eth0')).toBeUndefined();
    expect(ipv6Groups('[::1]')).toBeUndefined();
  });

  it('bytes and numbers accept exactly what node:net accepts (zone ids aside), property-checked', () => {
    fc.assert(
      fc.property(anyText, (text) => {
        const node = isIP(text) !== 0 && !text.includes('%');
        expect(parseIpBytes(text) !== undefined).toBe(node);
        expect(parseIpNumber(text) !== undefined).toBe(node);
      }),
      { numRuns: 5000 },
    );
  });

  it('bytes and numbers name the same address (an IPv4-mapped one as IPv4 in both, once unmapped)', () => {
    fc.assert(
      fc.property(fc.oneof(fc.ipV4(), fc.ipV6()), (text) => {
        expect(formatIpBytes(unmapIp(parseIpBytes(text)!))).toBe(formatIpNumber(parseIpNumber(text)!));
      }),
      { numRuns: 2000 },
    );
    expect(formatIpBytes(parseIpBytes('::ffff:127.0.0.1')!)).toBe('::ffff:7f00:1');
    expect(formatIpNumber(parseIpNumber('::ffff:127.0.0.1')!)).toBe('127.0.0.1');
  });
});
