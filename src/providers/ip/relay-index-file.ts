/**
 * A relay list's index as a file: what RelayIndex holds in memory (the
 * segments, each row's prefix length and egress region), laid out so a lookup
 * binary-searches it through a BlockFile and the OS page cache holds the one
 * copy every process of the machine reads. Written by the worker thread that
 * parses the list (relay-list-worker.ts), into LIST_CACHE_DIR under a name
 * derived from the list's content; its answers are RelayIndex's, row for row.
 *
 * Layout, all integers big-endian uint32; segment-file.ts's, with egress
 * regions as its records and their texts as its texts:
 *
 *   offset  size        field
 *   0       8           magic "NDRLYIX1" (the 1 is the format version)
 *   8       4           n4: IPv4 segments
 *   12      4           n6: IPv6 segments
 *   16      4           nr: egress regions
 *   20      4           strings: bytes of region texts
 *   24      4           report: bytes of the parse report (JSON: entries, skipped, problems)
 *   28      4           0 (reserved)
 *   32      12 · n4     IPv4 segments: start, end (inclusive), value
 *   …       36 · n6     IPv6 segments: start (4 words), end (4 words), value
 *   …       24 · nr     regions: country, region, city, each as offset and length in strings (length 0: null)
 *   …       strings     UTF-8, each distinct text once
 *   …       report      ParseReport as JSON
 *
 * A segment's value is the matching row's prefix length + 256 · (its region + 1),
 * 0 above the length meaning no region (the Tor list): a lookup reads one
 * record, with no per-row table beside the segments.
 */
import { createHash } from 'node:crypto';
import type { BlockFile } from './block-file.js';
import { type ParsedIp, prefixOf } from './ip-number.js';
import { NO_MATCH } from './range-table.js';
import type { EgressRegion, ParseReport, RelayHit, RelayIndex } from './relay-index.js';
import { encodeSegmentFile, SegmentFile, type SegmentFormat } from './segment-file.js';

/** Regions a value can name: (nr + 1) · 256 must stay within a uint32. */
const MAX_REGIONS = 2 ** 24 - 1;

export class RelayIndexError extends Error {
  override readonly name = 'RelayIndexError';
}

const FORMAT: SegmentFormat = {
  magic: 'NDRLYIX1',
  name: 'relay index',
  article: 'a',
  error: RelayIndexError,
  record: 24,
};

/**
 * Part of the file name: bump it when the parsers (relay-index.ts) or the
 * overlap resolution (range-table.ts) change what an index holds, so no
 * process reuses an index built by the old rules.
 */
const BUILD_RULES = 'NDRLYIX1/1';

/**
 * `<prefix>-<hash>.index`: one name per list content and format, so every
 * process of the machine that loads the same list (at start, or after a
 * download that brought the same body) finds the file a first one wrote.
 */
export function relayIndexFileName(prefix: string, format: string, body: Uint8Array): string {
  const hash = createHash('sha256').update(`${BUILD_RULES}\u0000${format}\u0000`).update(body);
  return `${prefix}-${hash.digest('hex').slice(0, 16)}.index`;
}

/** Whether `name` is an index file that relayIndexFileName gives for `prefix` (temporary files are not). */
export function isRelayIndexFileName(prefix: string, name: string): boolean {
  return (
    name.length === prefix.length + 23 &&
    name.startsWith(`${prefix}-`) &&
    /^[0-9a-f]{16}\.index$/.test(name.slice(prefix.length + 1))
  );
}

/** Serializes a parsed list (in the worker: the main thread never holds the RelayIndex). */
export function encodeRelayIndex(index: RelayIndex, report: ParseReport): Buffer {
  const { table, bits, regionOf, regions } = index.rows;
  if (regions.length > MAX_REGIONS)
    throw new RangeError(`${regions.length} regions: the format holds ${MAX_REGIONS}`);
  const { v4, v6 } = table.columns;
  const segmentValue = (row: number) => bits[row]! + 256 * (regionOf[row]! + 1);

  // Region texts: each distinct one once (a few dozen countries name thousands of regions).
  const textAt = new Map<string, number>();
  const texts: string[] = [];
  let stringsBytes = 0;
  const place = (text: string | null): number => {
    if (text === null) return 0;
    let at = textAt.get(text);
    if (at === undefined) {
      at = stringsBytes;
      textAt.set(text, at);
      texts.push(text);
      stringsBytes += Buffer.byteLength(text, 'utf8');
    }
    return at;
  };
  for (const r of regions) for (const text of [r.country, r.region, r.city]) place(text);
  const json = Buffer.from(
    JSON.stringify({ entries: report.entries, skipped: report.skipped, problems: report.problems }),
    'utf8',
  );

  const { out, recordsAt } = encodeSegmentFile({
    format: FORMAT,
    segments: { v4, v6 },
    values: { v4: Uint32Array.from(v4.values, segmentValue), v6: Uint32Array.from(v6.values, segmentValue) },
    records: regions.length,
    textBytes: stringsBytes,
    report: json,
  });
  let at = recordsAt;
  for (const r of regions) {
    for (const text of [r.country, r.region, r.city]) {
      out.writeUInt32BE(place(text), at);
      out.writeUInt32BE(text === null ? 0 : Buffer.byteLength(text, 'utf8'), at + 4);
      at += 8;
    }
  }
  for (const text of texts) at += out.write(text, at, 'utf8');
  return out;
}

/** Lookups over an index file (or an index in a Buffer), through the BlockFile's cache. */
export class RelayIndexFile {
  /** What the parse reported. */
  readonly report: ParseReport;
  /** Rows loaded (prefixes or addresses). */
  readonly entries: number;
  readonly #segments: SegmentFile;
  readonly #file: BlockFile;

  /** Checks the header against the file's size and reads the report; throws RelayIndexError otherwise. */
  constructor(file: BlockFile) {
    this.#segments = new SegmentFile(file, FORMAT);
    this.#file = file;
    this.report = readReport(this.#segments.report);
    this.entries = this.report.entries;
  }

  /** Segments held, per family. */
  get segments(): { v4: number; v6: number } {
    return { v4: this.#segments.n4, v6: this.#segments.n6 };
  }

  /** Bytes of the file this process holds in memory (the BlockFile's cache, or the whole buffer). */
  get cachedBytes(): number {
    return this.#file.cachedBytes;
  }

  get closed(): boolean {
    return this.#file.closed;
  }

  /** Closes the file; lookups throw afterwards. Idempotent. */
  close(): void {
    this.#file.close();
  }

  lookup(ip: ParsedIp): RelayHit | undefined {
    const value = this.#segments.find(ip);
    if (value === NO_MATCH) return undefined;
    const bits = value % 256;
    const region = Math.floor(value / 256) - 1;
    if (bits > (ip.version === 4 ? 32 : 128) || region >= this.#segments.records)
      throw new RelayIndexError(`segment value ${value} out of bounds`);
    return { prefix: prefixOf(ip, bits), egress_region: region < 0 ? null : this.#region(region) };
  }

  /** Frozen, as the parser's regions are: a caller must not be able to change another answer. */
  #region(region: number): EgressRegion {
    const at = this.#segments.recordsAt + FORMAT.record * region;
    return Object.freeze({ country: this.#text(at), region: this.#text(at + 8), city: this.#text(at + 16) });
  }

  #text(at: number): string | null {
    const offset = this.#file.uint(at, 4);
    const length = this.#file.uint(at + 4, 4);
    if (length === 0) return null;
    if (offset + length > this.#segments.textBytes) throw new RelayIndexError('region text out of bounds');
    return this.#file.utf8(this.#segments.textAt + offset, length);
  }
}

function readReport(json: string): ParseReport {
  let report: unknown;
  try {
    report = JSON.parse(json);
  } catch {
    throw new RelayIndexError('relay index report unreadable');
  }
  const { entries, skipped, problems } = (report ?? {}) as Partial<Record<keyof ParseReport, unknown>>;
  if (
    typeof entries !== 'number' ||
    typeof skipped !== 'number' ||
    !Array.isArray(problems) ||
    !problems.every((p) => typeof p === 'string')
  ) {
    throw new RelayIndexError('relay index report unreadable');
  }
  return { entries, skipped, problems };
}
