/**
 * Address-range lookup over sorted typed arrays with binary search: O(log n)
 * per lookup and a few bytes per range, where `net.BlockList` and
 * `cidr-matcher` scan linearly. IPv4 ranges are uint32 pairs; IPv6 ranges
 * are pairs of addresses as four uint32 words each (the two 64-bit halves,
 * each as two words), interleaved in one Uint32Array so a comparison reads
 * one cache line. No BigInt on the lookup path (see ip-number.ts). Each
 * range carries a uint32 value (an index into the caller's rows). Pure, no I/O.
 *
 * Input ranges may arrive unsorted and may overlap: building sorts them and
 * flattens them into disjoint segments where, inside an overlap, the range
 * that starts later wins; for two ranges starting at the same address, the
 * narrower one. For CIDR prefixes, which are either nested or disjoint, that
 * is longest-prefix match, the rule RFC 8805 §3 gives a geofeed consumer
 * for overlapping entries ("the most specific prefix"). Overlaps are counted
 * so loaders can report data that should not have them (the ASN table).
 */
import type { ParsedIp, ParsedPrefix, Words } from './ip-number.js';

export const NO_MATCH = -1;

export class RangeTable {
  /** Inputs that overlapped an earlier range (resolved as described above). */
  readonly overlaps: number;
  readonly #v4Starts: Uint32Array;
  readonly #v4Ends: Uint32Array;
  readonly #v4Values: Uint32Array;
  /** Four words per segment. */
  readonly #v6Starts: Uint32Array;
  readonly #v6Ends: Uint32Array;
  readonly #v6Values: Uint32Array;

  constructor(v4: RangeColumns, v6: RangeColumns, overlaps: number) {
    this.#v4Starts = v4.starts;
    this.#v4Ends = v4.ends;
    this.#v4Values = v4.values;
    this.#v6Starts = v6.starts;
    this.#v6Ends = v6.ends;
    this.#v6Values = v6.values;
    this.overlaps = overlaps;
  }

  /** The sorted disjoint segments themselves, for a writer that serializes them (asn-index.ts). Read-only. */
  get columns(): { v4: RangeColumns; v6: RangeColumns } {
    return {
      v4: { starts: this.#v4Starts, ends: this.#v4Ends, values: this.#v4Values },
      v6: { starts: this.#v6Starts, ends: this.#v6Ends, values: this.#v6Values },
    };
  }

  /** Disjoint segments held, per family. */
  get segments(): { v4: number; v6: number } {
    return { v4: this.#v4Values.length, v6: this.#v6Values.length };
  }

  /** Typed-array bytes held (the table's whole memory but for a few object headers). */
  get byteLength(): number {
    return (
      this.#v4Starts.byteLength * 3 +
      this.#v6Starts.byteLength +
      this.#v6Ends.byteLength +
      this.#v6Values.byteLength
    );
  }

  find(ip: ParsedIp): number {
    return ip.version === 4 ? this.findV4(ip.v4) : this.findV6(ip.w);
  }

  /** The value of the segment holding `ip` (a uint32 number), or NO_MATCH. */
  findV4(ip: number): number {
    const starts = this.#v4Starts;
    let low = 0;
    let high = starts.length - 1;
    // Invariant: every index < low starts at or before ip; every index > high starts after it.
    while (low <= high) {
      const mid = (low + high) >>> 1;
      if (starts[mid]! <= ip) low = mid + 1;
      else high = mid - 1;
    }
    return high >= 0 && this.#v4Ends[high]! >= ip ? this.#v4Values[high]! : NO_MATCH;
  }

  /** The value of the segment holding the IPv6 address `w`, or NO_MATCH. */
  findV6(w: Words): number {
    const starts = this.#v6Starts;
    const a = w[0];
    const b = w[1];
    const c = w[2];
    const d = w[3];
    let low = 0;
    let high = this.#v6Values.length - 1;
    while (low <= high) {
      const mid = (low + high) >>> 1;
      if (compareAt(starts, mid * 4, a, b, c, d) <= 0) low = mid + 1;
      else high = mid - 1;
    }
    return high >= 0 && compareAt(this.#v6Ends, high * 4, a, b, c, d) >= 0 ? this.#v6Values[high]! : NO_MATCH;
  }
}

/** Sign of (the address at words[i..i+3]) − (a, b, c, d). */
function compareAt(words: Uint32Array, i: number, a: number, b: number, c: number, d: number): number {
  let x = words[i]!;
  if (x !== a) return x - a;
  x = words[i + 1]!;
  if (x !== b) return x - b;
  x = words[i + 2]!;
  if (x !== c) return x - c;
  return words[i + 3]! - d;
}

/** Sorted, disjoint segments; for IPv6, `starts` and `ends` hold four words per segment. */
export interface RangeColumns {
  starts: Uint32Array;
  ends: Uint32Array;
  values: Uint32Array;
}

/** Growable Uint32Array storage for `width` words per entry. */
class Column {
  data: Uint32Array;
  constructor(
    readonly width: number,
    entries: number,
  ) {
    this.data = new Uint32Array(entries * width);
  }
  ensure(entries: number): void {
    if (entries * this.width <= this.data.length) return;
    const bigger = new Uint32Array(Math.max(this.data.length * 2, 1024 * this.width));
    bigger.set(this.data);
    this.data = bigger;
  }
}

/** Ranges expected per family; the storage grows past them when needed. */
export interface RangeTableCapacity {
  v4?: number;
  v6?: number;
}

const family = (width: number, entries: number) => ({
  starts: new Column(width, entries),
  ends: new Column(width, entries),
  values: new Column(1, entries),
});

/**
 * Collects ranges in growable typed arrays (no per-range objects), then builds
 * a RangeTable. Given the exact number of ranges, storage sorted and disjoint
 * as added becomes the table itself, with no copy (see flatten): the builder
 * is spent once built.
 */
export class RangeTableBuilder {
  #n4 = 0;
  readonly #v4: ReturnType<typeof family>;
  #n6 = 0;
  readonly #v6: ReturnType<typeof family>;
  #built = false;

  constructor(capacity: RangeTableCapacity = {}) {
    this.#v4 = family(1, capacity.v4 ?? 1024);
    this.#v6 = family(4, capacity.v6 ?? 1024);
  }

  get size(): number {
    return this.#n4 + this.#n6;
  }

  addPrefix(prefix: ParsedPrefix, value: number): void {
    if (prefix.version === 4) this.addV4(prefix.start, prefix.end, value);
    else this.addV6(prefix.start, prefix.end, value);
  }

  /** Inclusive range; start ≤ end is the caller's to check. */
  addV4(start: number, end: number, value: number): void {
    this.#checkOpen();
    const { starts, ends, values } = this.#v4;
    for (const col of [starts, ends, values]) col.ensure(this.#n4 + 1);
    starts.data[this.#n4] = start;
    ends.data[this.#n4] = end;
    values.data[this.#n4] = value;
    this.#n4++;
  }

  /** Inclusive range of IPv6 addresses as words; start ≤ end is the caller's to check. */
  addV6(start: Words, end: Words, value: number): void {
    this.#checkOpen();
    const { starts, ends, values } = this.#v6;
    for (const col of [starts, ends, values]) col.ensure(this.#n6 + 1);
    starts.data.set(start, this.#n6 * 4);
    ends.data.set(end, this.#n6 * 4);
    values.data[this.#n6] = value;
    this.#n6++;
  }

  build(): RangeTable {
    this.#checkOpen();
    this.#built = true;
    const v4 = flatten(this.#v4, this.#n4, 1);
    const v6 = flatten(this.#v6, this.#n6, 4);
    return new RangeTable(v4.flat, v6.flat, v4.overlaps + v6.overlaps);
  }

  /** The table may hold this builder's storage: writing to it afterwards would change the table. */
  #checkOpen(): void {
    if (this.#built) throw new Error('RangeTableBuilder used after build()');
  }
}

/** Compares the width-word addresses x[i*width..] and y[j*width..]. */
function cmp(x: Uint32Array, i: number, y: Uint32Array, j: number, width: number): number {
  for (let k = 0; k < width; k++) {
    const d = x[i * width + k]! - y[j * width + k]!;
    if (d !== 0) return d;
  }
  return 0;
}

/**
 * Sorts (start ascending, then end descending, so an enclosing range comes
 * before the ranges nested in it) and flattens into disjoint segments, the
 * later-starting range winning inside an overlap. One routine for both
 * families: an address is `width` uint32 words (1 for IPv4, 4 for IPv6).
 */
function flatten(
  cols: { starts: Column; ends: Column; values: Column },
  n: number,
  width: number,
): { flat: RangeColumns; overlaps: number } {
  const s = cols.starts.data;
  const e = cols.ends.data;
  const v = cols.values.data;
  const order = new Uint32Array(n);
  for (let i = 0; i < n; i++) order[i] = i;
  const byStartThenWidest = (a: number, b: number) => cmp(s, a, s, b, width) || cmp(e, b, e, a, width);
  let sorted = true;
  for (let k = 1; k < n && sorted; k++) if (byStartThenWidest(k - 1, k) > 0) sorted = false;
  if (!sorted) order.sort(byStartThenWidest);

  // Fast path: sorted and disjoint input is already the table.
  let disjoint = true;
  for (let k = 1; k < n && disjoint; k++)
    if (cmp(s, order[k]!, e, order[k - 1]!, width) <= 0) disjoint = false;
  if (disjoint) {
    // Storage filled exactly (a builder told the count) is the table as it stands: no second copy.
    if (sorted && s.length === n * width && e.length === n * width && v.length === n)
      return { flat: { starts: s, ends: e, values: v }, overlaps: 0 };
    if (sorted)
      return {
        flat: { starts: s.slice(0, n * width), ends: e.slice(0, n * width), values: v.slice(0, n) },
        overlaps: 0,
      };
    const starts = new Uint32Array(n * width);
    const ends = new Uint32Array(n * width);
    const values = new Uint32Array(n);
    for (let k = 0; k < n; k++) {
      const i = order[k]!;
      for (let w = 0; w < width; w++) {
        starts[k * width + w] = s[i * width + w]!;
        ends[k * width + w] = e[i * width + w]!;
      }
      values[k] = v[i]!;
    }
    return { flat: { starts, ends, values }, overlaps: 0 };
  }

  // Each input pushes and pops once and emits at most one segment for each: ≤ 2n segments.
  const outS = new Uint32Array(2 * n * width);
  const outE = new Uint32Array(2 * n * width);
  const outV = new Uint32Array(2 * n);
  let count = 0;
  // Scratch addresses: the cursor (first address not yet emitted), and one before a start.
  const cursor = new Uint32Array(width);
  const before = new Uint32Array(width);
  const probe = new Uint32Array(width);
  let exhausted = false; // the cursor ran past the last address
  const at = (arr: Uint32Array, i: number) => arr.subarray(i * width, (i + 1) * width);

  const emit = (from: Uint32Array, to: Uint32Array, value: number) => {
    if (cmp(from, 0, to, 0, width) > 0) return;
    if (count > 0 && outV[count - 1] === value) {
      // Contiguous with the previous segment of the same value: extend it.
      probe.set(at(outE, count - 1));
      if (increment(probe) && cmp(probe, 0, from, 0, width) === 0) {
        outE.set(to, (count - 1) * width);
        return;
      }
    }
    outS.set(from, count * width);
    outE.set(to, count * width);
    outV[count] = value;
    count++;
  };

  const stack: number[] = [];
  const closeUntil = (limit: Uint32Array | undefined) => {
    // Pops every open range that ends before `limit` (all of them when undefined), emitting what is left of it.
    while (stack.length > 0) {
      const top = stack[stack.length - 1]!;
      if (limit && cmp(e, top, limit, 0, width) >= 0) return;
      stack.pop();
      if (!exhausted && cmp(cursor, 0, e, top, width) <= 0) {
        emit(cursor, at(e, top), v[top]!);
        cursor.set(at(e, top));
        exhausted = !increment(cursor);
      }
    }
  };

  let overlaps = 0;
  let maxEnd = -1; // index of the input with the largest end so far
  for (let k = 0; k < n; k++) {
    const i = order[k]!;
    if (maxEnd >= 0 && cmp(s, i, e, maxEnd, width) <= 0) overlaps++;
    if (maxEnd < 0 || cmp(e, i, e, maxEnd, width) > 0) maxEnd = i;
    const start = at(s, i);
    closeUntil(start);
    const top = stack[stack.length - 1];
    if (top !== undefined) {
      before.set(start);
      if (decrement(before)) emit(cursor, before, v[top]!);
    }
    cursor.set(start);
    exhausted = false;
    stack.push(i);
  }
  closeUntil(undefined);
  return {
    flat: {
      starts: outS.slice(0, count * width),
      ends: outE.slice(0, count * width),
      values: outV.slice(0, count),
    },
    overlaps,
  };
}

/** Adds one to a multi-word address in place; false when it wraps past the last address. */
function increment(words: Uint32Array): boolean {
  for (let k = words.length - 1; k >= 0; k--) {
    if (words[k] !== 0xffffffff) {
      words[k] = words[k]! + 1;
      return true;
    }
    words[k] = 0;
  }
  return false;
}

/** Subtracts one in place; false when it wraps below address zero. */
function decrement(words: Uint32Array): boolean {
  for (let k = words.length - 1; k >= 0; k--) {
    if (words[k] !== 0) {
      words[k] = words[k]! - 1;
      return true;
    }
    words[k] = 0xffffffff;
  }
  return false;
}
