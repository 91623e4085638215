/**
 * IP address text: the one strict grammar every part of the service parses
 * an address with, and the one IPv6 formatter. Two representations are built
 * on it and named for what they return: bytes for the outbound-safety
 * classifier (net/address.ts `parseIpBytes`) and numbers for the range tables
 * of the IP data (providers/ip/ip-number.ts `parseIpNumber`).
 *
 * The grammar is node:net's isIP without zone ids: dotted quads without
 * leading zeros, every RFC 4291 §2.2 IPv6 form (a property test checks the
 * agreement). It is parsed by hand in one pass, because the list loaders
 * parse half a million addresses at start-up. Pure functions, no I/O.
 */

/**
 * Strict dotted quad in text[from, to) → uint32, or -1. One pass, no
 * allocation: the list loaders call this hundreds of thousands of times.
 */
export function ipv4Number(text: string, from = 0, to = text.length): number {
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
 * and brackets are refused.
 */
export function ipv6Groups(text: string): number[] | undefined {
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

/** A uint32 as a dotted quad. */
export function formatIPv4Number(value: number): string {
  return `${value >>> 24}.${(value >>> 16) & 255}.${(value >>> 8) & 255}.${value & 255}`;
}

/**
 * The one IPv6 formatter: eight 16-bit groups as RFC 5952 §4 text (lower case, no
 * leading zeros, the longest run of two or more zero groups, the first of equals, as "::").
 */
export function formatIPv6Groups(groups: readonly number[]): string {
  let best = { start: -1, len: 0 };
  for (let i = 0; i < 8; ) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > best.len) best = { start: i, len: j - i };
    i = j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (best.len < 2) return hex.join(':');
  return `${hex.slice(0, best.start).join(':')}::${hex.slice(best.start + best.len).join(':')}`;
}
