/**
 * The ASN table as a file: what AsnTable holds in memory (sorted disjoint
 * segments, overlaps already resolved by RangeTable), laid out so a lookup
 * binary-searches it through a BlockFile and the OS page cache holds the one
 * copy every process shares. Written once per data version by
 * asn-index-build.ts; its answers are AsnTable's, row for row.
 *
 * Layout, all integers big-endian uint32:
 *
 *   offset  size        field
 *   0       8           magic "NDASNIX1" (the 1 is the format version)
 *   8       4           n4: IPv4 segments
 *   12      4           n6: IPv6 segments
 *   16      4           ne: entries (distinct AS number + organization pairs)
 *   20      4           names: bytes of organization names
 *   24      4           report: bytes of the build report (JSON)
 *   28      4           0 (reserved)
 *   32      12 · n4     IPv4 segments: start, end (inclusive), entry
 *   …       36 · n6     IPv6 segments: start (4 words), end (4 words), entry
 *   …       12 · ne     entries: AS number, name offset, name length (0: no organization)
 *   …       names       organization names, UTF-8, each once
 *   …       report      AsnReport as JSON
 *
 * The file's size must be exactly what the header adds up to: a truncated
 * or foreign file is refused, never half-read.
 */
import type { AsnHit, AsnReport, AsnTable } from './asn-table.js';
import type { BlockFile } from './block-file.js';
import type { ParsedIp, Words } from './ip-number.js';

const MAGIC = Buffer.from('NDASNIX1', 'latin1');
const HEADER = 32;
const V4_RECORD = 12;
const V6_RECORD = 36;
const ENTRY = 12;
/** Organizations the entry key (AS number · ORG_KEY + organization) can tell apart within 2^53; today's data has ~100 000. */
const ORG_KEY = 2 ** 21;

export class AsnIndexError extends Error {
  override readonly name = 'AsnIndexError';
}

/** Serializes a built table (in the worker: the main thread never holds the AsnTable). */
export function encodeAsnIndex(table: AsnTable): Buffer {
  const { table: ranges, asn, orgOf, orgs } = table.rows;
  const { v4, v6 } = ranges.columns;
  const n4 = v4.values.length;
  const n6 = v6.values.length;

  // Rows → entries: one per distinct (AS, organization) that a segment still uses after overlaps.
  // A numeric key, no per-entry object: this runs over half a million rows.
  if (orgs.length > ORG_KEY)
    throw new RangeError(`${orgs.length} organizations: the entry key holds ${ORG_KEY}`);
  const entryOf = new Map<number, number>();
  const entryAsn: number[] = [];
  const entryOrg: number[] = [];
  const entry = (row: number): number => {
    const key = asn[row]! * ORG_KEY + orgOf[row]!;
    let e = entryOf.get(key);
    if (e === undefined) {
      e = entryAsn.length;
      entryOf.set(key, e);
      entryAsn.push(asn[row]!);
      entryOrg.push(orgOf[row]!);
    }
    return e;
  };
  const v4Entries = Uint32Array.from(v4.values, entry);
  const v6Entries = Uint32Array.from(v6.values, entry);

  // Each name used once, placed in first-use order; written straight into the output below.
  const nameOffset = new Int32Array(orgs.length).fill(-1);
  const nameLength = new Uint32Array(orgs.length);
  let namesBytes = 0;
  for (const o of entryOrg) {
    if (nameOffset[o] !== -1) continue;
    nameOffset[o] = namesBytes;
    nameLength[o] = Buffer.byteLength(orgs[o] ?? '', 'utf8');
    namesBytes += nameLength[o]!;
  }
  const report = Buffer.from(JSON.stringify(table.report), 'utf8');

  const ne = entryAsn.length;
  const out = Buffer.alloc(
    HEADER + V4_RECORD * n4 + V6_RECORD * n6 + ENTRY * ne + namesBytes + report.length,
  );
  MAGIC.copy(out, 0);
  out.writeUInt32BE(n4, 8);
  out.writeUInt32BE(n6, 12);
  out.writeUInt32BE(ne, 16);
  out.writeUInt32BE(namesBytes, 20);
  out.writeUInt32BE(report.length, 24);
  let at = HEADER;
  for (let i = 0; i < n4; i++, at += V4_RECORD) {
    out.writeUInt32BE(v4.starts[i]!, at);
    out.writeUInt32BE(v4.ends[i]!, at + 4);
    out.writeUInt32BE(v4Entries[i]!, at + 8);
  }
  for (let i = 0; i < n6; i++, at += V6_RECORD) {
    for (let w = 0; w < 4; w++) {
      out.writeUInt32BE(v6.starts[i * 4 + w]!, at + 4 * w);
      out.writeUInt32BE(v6.ends[i * 4 + w]!, at + 16 + 4 * w);
    }
    out.writeUInt32BE(v6Entries[i]!, at + 32);
  }
  for (let e = 0; e < ne; e++, at += ENTRY) {
    const o = entryOrg[e]!;
    out.writeUInt32BE(entryAsn[e]!, at);
    out.writeUInt32BE(nameOffset[o]!, at + 4);
    out.writeUInt32BE(nameLength[o]!, at + 8);
  }
  for (let o = 0; o < orgs.length; o++) {
    if (nameOffset[o]! >= 0) out.write(orgs[o]!, at + nameOffset[o]!, nameLength[o]!, 'utf8');
  }
  report.copy(out, at + namesBytes);
  return out;
}

/** Lookups over an index file (or an index in a Buffer), through the BlockFile's cache. */
export class AsnIndex {
  /** What the build reported (rows, skipped, out of order, overlaps, problems). */
  readonly report: AsnReport;
  readonly #file: BlockFile;
  readonly #n4: number;
  readonly #n6: number;
  readonly #ne: number;
  readonly #v6At: number;
  readonly #entriesAt: number;
  readonly #namesAt: number;
  readonly #namesBytes: number;

  /** Checks the header against the file's size and reads the report; throws AsnIndexError otherwise. */
  constructor(file: BlockFile) {
    this.#file = file;
    if (file.size < HEADER || !file.bytes(0, MAGIC.length).equals(MAGIC)) {
      throw new AsnIndexError('not an ASN index file (format NDASNIX1)');
    }
    this.#n4 = file.uint(8, 4);
    this.#n6 = file.uint(12, 4);
    this.#ne = file.uint(16, 4);
    this.#namesBytes = file.uint(20, 4);
    const reportBytes = file.uint(24, 4);
    this.#v6At = HEADER + V4_RECORD * this.#n4;
    this.#entriesAt = this.#v6At + V6_RECORD * this.#n6;
    this.#namesAt = this.#entriesAt + ENTRY * this.#ne;
    const reportAt = this.#namesAt + this.#namesBytes;
    if (reportAt + reportBytes !== file.size) {
      throw new AsnIndexError(
        `ASN index of ${file.size} bytes, its header describes ${reportAt + reportBytes}`,
      );
    }
    try {
      this.report = JSON.parse(file.utf8(reportAt, reportBytes)) as AsnReport;
    } catch {
      throw new AsnIndexError('ASN index report unreadable');
    }
  }

  /** Segments held, per family. */
  get segments(): { v4: number; v6: number } {
    return { v4: this.#n4, v6: this.#n6 };
  }

  get cachedBytes(): number {
    return this.#file.cachedBytes;
  }

  close(): void {
    this.#file.close();
  }

  lookup(ip: ParsedIp): AsnHit | undefined {
    const entry = ip.version === 4 ? this.#findV4(ip.v4) : this.#findV6(ip.w);
    if (entry < 0) return undefined;
    if (entry >= this.#ne) throw new AsnIndexError(`segment names entry ${entry} of ${this.#ne}`);
    const file = this.#file;
    const at = this.#entriesAt + ENTRY * entry;
    const nameOffset = file.uint(at + 4, 4);
    const nameLength = file.uint(at + 8, 4);
    if (nameOffset + nameLength > this.#namesBytes)
      throw new AsnIndexError(`entry ${entry} name out of bounds`);
    return {
      asn: file.uint(at, 4),
      org: nameLength === 0 ? null : file.utf8(this.#namesAt + nameOffset, nameLength),
    };
  }

  /** The entry of the segment holding `ip`, or -1: RangeTable.findV4's search over the file. */
  #findV4(ip: number): number {
    const file = this.#file;
    let low = 0;
    let high = this.#n4 - 1;
    // Invariant: every index < low starts at or before ip; every index > high starts after it.
    while (low <= high) {
      const mid = (low + high) >>> 1;
      if (file.uint(HEADER + V4_RECORD * mid, 4) <= ip) low = mid + 1;
      else high = mid - 1;
    }
    if (high < 0) return -1;
    const at = HEADER + V4_RECORD * high;
    return file.uint(at + 4, 4) >= ip ? file.uint(at + 8, 4) : -1;
  }

  #findV6(w: Words): number {
    let low = 0;
    let high = this.#n6 - 1;
    while (low <= high) {
      const mid = (low + high) >>> 1;
      if (this.#compareV6(this.#v6At + V6_RECORD * mid, w) <= 0) low = mid + 1;
      else high = mid - 1;
    }
    if (high < 0) return -1;
    const at = this.#v6At + V6_RECORD * high;
    return this.#compareV6(at + 16, w) >= 0 ? this.#file.uint(at + 32, 4) : -1;
  }

  /** Sign of (the four words at `at`) − w. */
  #compareV6(at: number, w: Words): number {
    for (let k = 0; k < 4; k++) {
      const d = this.#file.uint(at + 4 * k, 4) - w[k]!;
      if (d !== 0) return d;
    }
    return 0;
  }
}
