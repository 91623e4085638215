/**
 * What tests (and benchmarks) that sample many inputs share: a seeded
 * pseudo-random generator, so a failure names an input that fails again, and
 * 128-bit arithmetic on addresses held as four 32-bit words.
 */
import type { Words } from '../src/providers/ip/ip-number.js';

/** mulberry32: uint32 values from a seed. */
export function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  };
}

/** The same sequence as fractions in [0, 1). */
export function seededFraction(seed: number): () => number {
  const next = seeded(seed);
  return () => next() / 4294967296;
}

export const toBig = (w: Words): bigint => w.reduce((n, x) => (n << 32n) | BigInt(x), 0n);

export const toWords = (n: bigint): Words => [
  Number((n >> 96n) & 0xffffffffn),
  Number((n >> 64n) & 0xffffffffn),
  Number((n >> 32n) & 0xffffffffn),
  Number(n & 0xffffffffn),
];

export const MAX128 = 2n ** 128n - 1n;
