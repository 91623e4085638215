/**
 * A synthetic iCloud Private Relay egress list with the shape and size of Apple's
 * (RFC 8805 rows, about a quarter IPv4 /26–/32, the rest mostly IPv6 /64), and
 * addresses inside and between its ranges. Deterministic: every run measures the
 * same list. Shared by bench/ip-privacy.ts and bench/memory.ts.
 */
import type { Words } from '../src/providers/ip/ip-number.js';
import { seededFraction } from '../test/samples.js';

const COUNTRIES = ['US', 'GB', 'DE', 'FR', 'JP', 'BR', 'IN', 'AU', 'CA', 'NL', 'SE', 'SG', 'ZA', 'MX', 'ES'];

export interface Synthetic {
  text: string;
  /** Addresses inside listed ranges and in the gaps between them, per family. */
  hits4: number[];
  misses4: number[];
  hits6: Words[];
  misses6: Words[];
}

const M32 = 0xffffffffn;
const words = (hi: bigint, lo: number): Words => [Number(hi >> 32n), Number(hi & M32), 0, lo];

export function syntheticGeofeed(count: number): Synthetic {
  const rand = seededFraction(8805);
  const regions = Array.from({ length: 3000 }, (_, i) => {
    const country = COUNTRIES[i % COUNTRIES.length]!;
    // Some rows leave region and city empty, as Apple's do.
    return i % 7 === 0 ? `${country},,` : `${country},${country}-R${i % 40},City ${i}`;
  });
  const lines: string[] = [];
  const out: Synthetic = { text: '', hits4: [], misses4: [], hits6: [], misses6: [] };
  let a4 = 0xace00000; // 172.224.0.0, where Apple's IPv4 ranges start
  let hi = 0x2a0226f7c7000000n; // 2a02:26f7:c700::, the top half of Apple's IPv6 ranges
  const v4Rows = Math.round(count * 0.25);
  for (let i = 0; i < count; i++) {
    const region = regions[Math.floor(rand() * regions.length)]!;
    const gap = Math.floor(rand() * 3); // 0-2 unlisted blocks after each range
    if (i < v4Rows) {
      const bits = 26 + Math.floor(rand() * 7); // /26../32
      const size = 2 ** (32 - bits);
      a4 = Math.ceil(a4 / size) * size;
      lines.push(
        `${(a4 >>> 24) & 255}.${(a4 >>> 16) & 255}.${(a4 >>> 8) & 255}.${a4 & 255}/${bits},${region},`,
      );
      out.hits4.push(a4 + Math.floor(rand() * size));
      if (gap > 0) out.misses4.push(a4 + size);
      a4 += size * (1 + gap);
    } else {
      const bits = rand() < 0.9 ? 64 : 48 + Math.floor(rand() * 16);
      const size = 1n << BigInt(64 - bits);
      hi = ((hi + size - 1n) / size) * size;
      const groups = [48n, 32n, 16n, 0n].map((shift) => ((hi >> shift) & 0xffffn).toString(16));
      lines.push(`${groups.join(':')}::/${bits},${region},`);
      out.hits6.push(words(hi, 42));
      if (gap > 0) out.misses6.push(words(hi + size, 7));
      hi += size * BigInt(1 + gap);
    }
  }
  out.text = `${lines.join('\n')}\n`;
  return out;
}
