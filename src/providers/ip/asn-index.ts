/**
 * The ASN table as a file: what AsnTable holds in memory (sorted disjoint
 * segments, overlaps already resolved by RangeTable), laid out so a lookup
 * binary-searches it through a BlockFile and the OS page cache holds the one
 * copy every process shares. Written once per data version by
 * asn-index-build.ts; its answers are AsnTable's, row for row.
 *
 * Layout, all integers big-endian uint32; segment-file.ts's, with entries as
 * its records, organization names as its texts, each segment's value an entry:
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
import type { ParsedIp } from './ip-number.js';
import { NO_MATCH } from './range-table.js';
import { encodeSegmentFile, SegmentFile, type SegmentFormat } from './segment-file.js';

/** Organizations the entry key (AS number · ORG_KEY + organization) can tell apart within 2^53; today's data has ~100 000. */
const ORG_KEY = 2 ** 21;

export class AsnIndexError extends Error {
  override readonly name = 'AsnIndexError';
}

const FORMAT: SegmentFormat = {
  magic: 'NDASNIX1',
  name: 'ASN index',
  article: 'an',
  error: AsnIndexError,
  record: 12,
};

/** Serializes a built table (in the worker: the main thread never holds the AsnTable). */
export function encodeAsnIndex(table: AsnTable): Buffer {
  const { table: ranges, asn, orgOf, orgs } = table.rows;
  const { v4, v6 } = ranges.columns;

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
  const { out, recordsAt, textAt } = encodeSegmentFile({
    format: FORMAT,
    segments: { v4, v6 },
    values: { v4: v4Entries, v6: v6Entries },
    records: ne,
    textBytes: namesBytes,
    report,
  });
  let at = recordsAt;
  for (let e = 0; e < ne; e++, at += FORMAT.record) {
    const o = entryOrg[e]!;
    out.writeUInt32BE(entryAsn[e]!, at);
    out.writeUInt32BE(nameOffset[o]!, at + 4);
    out.writeUInt32BE(nameLength[o]!, at + 8);
  }
  for (let o = 0; o < orgs.length; o++) {
    if (nameOffset[o]! >= 0) out.write(orgs[o]!, textAt + nameOffset[o]!, nameLength[o]!, 'utf8');
  }
  return out;
}

/** Lookups over an index file (or an index in a Buffer), through the BlockFile's cache. */
export class AsnIndex {
  /** What the build reported (rows, skipped, out of order, overlaps, problems). */
  readonly report: AsnReport;
  readonly #segments: SegmentFile;
  readonly #file: BlockFile;

  /** Checks the header against the file's size and reads the report; throws AsnIndexError otherwise. */
  constructor(file: BlockFile) {
    this.#segments = new SegmentFile(file, FORMAT);
    this.#file = file;
    try {
      this.report = JSON.parse(this.#segments.report) as AsnReport;
    } catch {
      throw new AsnIndexError('ASN index report unreadable');
    }
  }

  /** Segments held, per family. */
  get segments(): { v4: number; v6: number } {
    return { v4: this.#segments.n4, v6: this.#segments.n6 };
  }

  get cachedBytes(): number {
    return this.#file.cachedBytes;
  }

  close(): void {
    this.#file.close();
  }

  lookup(ip: ParsedIp): AsnHit | undefined {
    const segments = this.#segments;
    const entry = segments.find(ip);
    if (entry === NO_MATCH) return undefined;
    if (entry >= segments.records)
      throw new AsnIndexError(`segment names entry ${entry} of ${segments.records}`);
    const file = this.#file;
    const at = segments.recordsAt + FORMAT.record * entry;
    const nameOffset = file.uint(at + 4, 4);
    const nameLength = file.uint(at + 8, 4);
    if (nameOffset + nameLength > segments.textBytes)
      throw new AsnIndexError(`entry ${entry} name out of bounds`);
    return {
      asn: file.uint(at, 4),
      org: nameLength === 0 ? null : file.utf8(segments.textAt + nameOffset, nameLength),
    };
  }
}
