/**
 * IP addresses as numbers, for the range tables: IPv4 as one uint32, IPv6 as
 * four uint32 words, most significant first (its two 64-bit halves, each as
 * a pair of words). No BigInt: converting between BigInt and Number cost more
 * than a whole binary search over 200 000 ranges (bench/ip-privacy.ts).
 * Pure functions, no I/O.
 *
 * Text is read with the service's one strict grammar (net/ip-text.ts, the
 * same one net/address.ts builds its bytes from); this module only turns
 * its result into numbers, hence the names parseIpNumber / formatIpNumber.
 * An IPv4-mapped IPv6 address (::ffff:a.b.c.d, RFC 4291 §2.5.5.2) becomes the
 * IPv4 address it carries: Node's dual-stack sockets report IPv4 peers that
 * way, and every list we match against files them as IPv4.
 */

import { formatIPv4Number, formatIPv6Groups, ipv4Number, ipv6Groups } from '../../net/ip-text.js';

/** An IPv6 address as four uint32 words, most significant first. */
export type Words = readonly [number, number, number, number];

export type ParsedIp = { version: 4; v4: number } | { version: 6; w: Words };

function toWords(groups: number[]): [number, number, number, number] {
  return [
    groups[0]! * 65536 + groups[1]!,
    groups[2]! * 65536 + groups[3]!,
    groups[4]! * 65536 + groups[5]!,
    groups[6]! * 65536 + groups[7]!,
  ];
}

/** Sign of a − b for two IPv6 addresses. */
export function compareWords(a: Words, b: Words): number {
  return a[0] - b[0] || a[1] - b[1] || a[2] - b[2] || a[3] - b[3];
}

/** ::ffff:0:0/96 */
const isMapped = (w: Words) => w[0] === 0 && w[1] === 0 && w[2] === 0xffff;

/**
 * Strict parse: a dotted-quad IPv4 or an IPv6 address without zone id or
 * brackets. IPv4-mapped IPv6 comes back as IPv4. Undefined for anything else.
 */
export function parseIpNumber(text: string): ParsedIp | undefined {
  const v4 = ipv4Number(text);
  if (v4 >= 0) return { version: 4, v4 };
  const groups = ipv6Groups(text);
  if (!groups) return undefined;
  const w = toWords(groups);
  return isMapped(w) ? { version: 4, v4: w[3] } : { version: 6, w };
}

export function formatIPv6(w: Words): string {
  const groups: number[] = [];
  for (const word of w) groups.push(word >>> 16, word & 0xffff);
  return formatIPv6Groups(groups);
}

export function formatIpNumber(ip: ParsedIp): string {
  return ip.version === 4 ? formatIPv4Number(ip.v4) : formatIPv6(ip.w);
}

/** A CIDR prefix as its first and last address. */
export type ParsedPrefix =
  | { version: 4; bits: number; start: number; end: number }
  | { version: 6; bits: number; start: Words; end: Words };

/** The network mask of a `bits`-long prefix over the word that holds address bits 32k..32k+31. */
function wordMask(bits: number, k: number): number {
  const inWord = Math.min(32, Math.max(0, bits - 32 * k));
  return inWord === 0 ? 0 : inWord === 32 ? 0xffffffff : (0xffffffff << (32 - inWord)) >>> 0;
}

function maskWords(w: Words, bits: number): [number, number, number, number] {
  return [
    (w[0] & wordMask(bits, 0)) >>> 0,
    (w[1] & wordMask(bits, 1)) >>> 0,
    (w[2] & wordMask(bits, 2)) >>> 0,
    (w[3] & wordMask(bits, 3)) >>> 0,
  ];
}

/**
 * "a.b.c.d/n" or "x::y/n" (a bare address is a /32 or /128). Host bits set
 * below the prefix length are cleared rather than refused: the prefix still
 * names the same network. An IPv4-mapped IPv6 prefix of /96 or longer is
 * returned as the IPv4 prefix it covers.
 */
export function parsePrefix(text: string): ParsedPrefix | undefined {
  const slash = text.indexOf('/');
  const addrText = slash === -1 ? text : text.slice(0, slash);
  const bitsText = slash === -1 ? undefined : text.slice(slash + 1);
  if (bitsText !== undefined && !/^\d{1,3}$/.test(bitsText)) return undefined;
  const v4 = ipv4Number(addrText);
  if (v4 >= 0) {
    const bits = bitsText === undefined ? 32 : Number(bitsText);
    return bits > 32 ? undefined : v4Prefix(v4, bits);
  }
  const groups = ipv6Groups(addrText);
  if (!groups) return undefined;
  const bits = bitsText === undefined ? 128 : Number(bitsText);
  if (bits > 128) return undefined;
  const w = toWords(groups);
  if (isMapped(w) && bits >= 96) return v4Prefix(w[3], bits - 96);
  const start = maskWords(w, bits);
  const end: Words = [
    (start[0] | ~wordMask(bits, 0)) >>> 0,
    (start[1] | ~wordMask(bits, 1)) >>> 0,
    (start[2] | ~wordMask(bits, 2)) >>> 0,
    (start[3] | ~wordMask(bits, 3)) >>> 0,
  ];
  return { version: 6, bits, start, end };
}

function v4Prefix(address: number, bits: number): ParsedPrefix {
  const size = 2 ** (32 - bits);
  const start = address - (address % size);
  return { version: 4, bits, start, end: start + size - 1 };
}

/** The prefix text of length `bits` that contains `ip` (host bits cleared), e.g. 172.224.226.0/27. */
export function prefixOf(ip: ParsedIp, bits: number): string {
  if (ip.version === 4) {
    const size = 2 ** (32 - bits);
    return `${formatIPv4Number(ip.v4 - (ip.v4 % size))}/${bits}`;
  }
  return `${formatIPv6(maskWords(ip.w, bits))}/${bits}`;
}
