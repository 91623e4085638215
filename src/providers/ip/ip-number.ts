/**
 * IP addresses as numbers, for the range tables: IPv4 as one uint32, IPv6 as
 * four uint32 words, most significant first (its two 64-bit halves, each as
 * a pair of words). No BigInt: converting between BigInt and Number cost more
 * than a whole binary search over 200 000 ranges (bench/ip-privacy.ts).
 * Pure functions, no I/O.
 *
 * Text is parsed by hand in one strict pass (the same forms node:net's
 * isIP accepts: dotted quads without leading zeros, every IPv6 text form
 * without a zone id), because the list loaders parse half a million
 * addresses at start-up; a property test checks agreement with node:net.
 * An IPv4-mapped IPv6 address (::ffff:a.b.c.d, RFC 4291 §2.5.5.2) becomes the
 * IPv4 address it carries: Node's dual-stack sockets report IPv4 peers that
 * way, and every list we match against files them as IPv4.
 */

import { formatIPv6Groups } from '../../net/address.js';

/** An IPv6 address as four uint32 words, most significant first. */
export type Words = readonly [number, number, number, number];

export type ParsedIp = { version: 4; v4: number } | { version: 6; w: Words };

/**
 * Strict dotted quad (what node:net's isIPv4 accepts: four decimal parts,
 * 0-255, no leading zeros) → uint32, or -1. One pass, no allocation: the
 * list loaders call this hundreds of thousands of times.
 */
function ipv4Number(text: string, from = 0, to = text.length): number {
  let value = 0;
  let part = 0;
  let digits = 0;
  let parts = 0;
  for (let i = from; i <= to; i++) {
    const c = i === to ? 46 : text.charCodeAt(i);
    if (c === 46 /* . */) {
      if (digits === 0 || part > 255) return -1;
      value = value * 256 + part;
      parts++;
      part = 0;
      digits = 0;
    } else if (c >= 48 && c <= 57) {
      if (digits > 0 && part === 0) return -1; // leading zero
      part = part * 10 + (c - 48);
      if (++digits > 3) return -1;
    } else {
      return -1;
    }
  }
  return parts === 4 ? value : -1;
}

function hexDigit(c: number): number {
  if (c >= 48 && c <= 57) return c - 48;
  const lower = c | 0x20;
  return lower >= 97 && lower <= 102 ? lower - 87 : -1;
}

/**
 * Strict IPv6 text (RFC 4291 §2.2 forms 1-3: hex groups, one "::", an
 * embedded dotted quad last) → eight 16-bit groups, or undefined. Zone ids
 * are refused. Accepts exactly what node:net's isIPv6 accepts without one.
 */
function ipv6Groups(text: string): number[] | undefined {
  const head: number[] = [];
  const tail: number[] = [];
  let groups = head;
  let gap = false;
  let i = 0;
  const n = text.length;
  if (n < 2) return undefined;
  if (text.charCodeAt(0) === 58 /* : */) {
    if (text.charCodeAt(1) !== 58) return undefined;
    gap = true;
    groups = tail;
    i = 2;
    if (i === n) return new Array<number>(8).fill(0);
  }
  for (;;) {
    // One group: 1-4 hex digits, or a dotted quad that ends the address.
    let value = 0;
    let digits = 0;
    const start = i;
    while (i < n) {
      const d = hexDigit(text.charCodeAt(i));
      if (d < 0) break;
      value = value * 16 + d;
      digits++;
      i++;
    }
    if (i < n && text.charCodeAt(i) === 46 /* . */) {
      const v4 = ipv4Number(text, start, n);
      if (v4 < 0) return undefined;
      groups.push(Math.floor(v4 / 65536), v4 % 65536);
      i = n;
    } else {
      if (digits === 0 || digits > 4) return undefined;
      groups.push(value);
    }
    if (i === n) break;
    if (text.charCodeAt(i) !== 58) return undefined;
    i++;
    if (i < n && text.charCodeAt(i) === 58) {
      if (gap) return undefined;
      gap = true;
      groups = tail;
      i++;
      if (i === n) break;
    } else if (i === n) {
      return undefined; // a single trailing ':'
    }
  }
  const total = head.length + tail.length;
  if (gap ? total > 7 : total !== 8) return undefined;
  if (!gap) return head;
  return [...head, ...new Array<number>(8 - total).fill(0), ...tail];
}

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
export function parseIp(text: string): ParsedIp | undefined {
  const v4 = ipv4Number(text);
  if (v4 >= 0) return { version: 4, v4 };
  const groups = ipv6Groups(text);
  if (!groups) return undefined;
  const w = toWords(groups);
  return isMapped(w) ? { version: 4, v4: w[3] } : { version: 6, w };
}

export function formatIPv4(value: number): string {
  return `${value >>> 24}.${(value >>> 16) & 255}.${(value >>> 8) & 255}.${value & 255}`;
}

export function formatIPv6(w: Words): string {
  const groups: number[] = [];
  for (const word of w) groups.push(word >>> 16, word & 0xffff);
  return formatIPv6Groups(groups);
}

export function formatIp(ip: ParsedIp): string {
  return ip.version === 4 ? formatIPv4(ip.v4) : formatIPv6(ip.w);
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
    return `${formatIPv4(ip.v4 - (ip.v4 % size))}/${bits}`;
  }
  return `${formatIPv6(maskWords(ip.w, bits))}/${bits}`;
}
