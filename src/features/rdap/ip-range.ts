/**
 * An IP network's CIDR prefixes, as pure functions: from the cidr0 extension
 * when the RIR sent it (https://bitbucket.org/arin-specs/cidr0 — ARIN, APNIC,
 * LACNIC, AFRINIC), else computed from startAddress..endAddress (RIPE sends
 * only the range), which is exact: a range is the union of at most
 * 2 × (address bits) aligned blocks.
 */
import ipaddr from 'ipaddr.js';

type Cidr0 = { v4prefix?: unknown; v6prefix?: unknown; length?: unknown };

export function cidrsFromCidr0(list: unknown): string[] {
  if (!Array.isArray(list)) return [];
  const out: string[] = [];
  for (const item of list as Cidr0[]) {
    const prefix = typeof item?.v4prefix === 'string' ? item.v4prefix : item?.v6prefix;
    if (typeof prefix !== 'string' || typeof item.length !== 'number') continue;
    const cidr = `${prefix}/${item.length}`;
    if (!ipaddr.isValidCIDR(cidr)) continue;
    const [addr, bits] = ipaddr.parseCIDR(cidr);
    out.push(`${addr.toString()}/${bits}`);
  }
  return out;
}

/** The smallest list of CIDR blocks covering start..end inclusive; [] when the range is not valid. */
export function rangeToCidrs(start: string, end: string): string[] {
  if (!ipaddr.isValid(start) || !ipaddr.isValid(end)) return [];
  const a = ipaddr.parse(start);
  const b = ipaddr.parse(end);
  if (a.kind() !== b.kind()) return [];
  const width = a.kind() === 'ipv4' ? 32 : 128;
  let lo = toBigInt(a.toByteArray());
  const hi = toBigInt(b.toByteArray());
  const out: string[] = [];
  while (lo <= hi) {
    // The largest block aligned at `lo` (its lowest set bit) that does not run past `hi`.
    let size = lo === 0n ? 1n << BigInt(width) : lo & -lo;
    while (lo + size - 1n > hi) size >>= 1n;
    const bits = width - (size.toString(2).length - 1);
    out.push(`${fromBigInt(lo, width).toString()}/${bits}`);
    lo += size;
  }
  return out;
}

function toBigInt(bytes: number[]): bigint {
  return bytes.reduce((acc, byte) => (acc << 8n) | BigInt(byte), 0n);
}

function fromBigInt(value: bigint, width: number): ipaddr.IPv4 | ipaddr.IPv6 {
  const bytes: number[] = [];
  for (let i = width / 8 - 1; i >= 0; i--) bytes.push(Number((value >> BigInt(i * 8)) & 0xffn));
  return ipaddr.fromByteArray(bytes);
}
