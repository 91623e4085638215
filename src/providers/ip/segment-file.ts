/**
 * Sorted disjoint address segments in a file, each carrying a uint32 value,
 * then a table of records, their texts and a build report: what the on-disk
 * indexes (asn-index.ts, relay-index-file.ts) share, header included. The
 * writer lays the segments out as RangeTable holds them; the reader checks
 * the header against the file's size and runs RangeTable's binary search over
 * the file through a BlockFile, so the OS page cache holds the one copy every
 * process on the machine reads. What a value, a record and the report mean is
 * each format's own.
 *
 * Layout, all integers big-endian uint32:
 *
 *   offset  size        field
 *   0       8           magic, 8 ASCII bytes naming the format (its last: the version)
 *   8       4           n4: IPv4 segments
 *   12      4           n6: IPv6 segments
 *   16      4           nr: records
 *   20      4           text: bytes of the records' texts
 *   24      4           report: bytes of the build report
 *   28      4           0 (reserved)
 *   32      12 · n4     IPv4 segments: start, end (inclusive), value
 *   …       36 · n6     IPv6 segments: start (4 words), end (4 words), value
 *   …       size · nr   records, each the format's record size
 *   …       text        UTF-8, as the records point into it
 *   …       report      JSON
 *
 * The file's size must be exactly what the header adds up to: a truncated or
 * foreign file is refused, never half-read.
 */
import { BlockFile, type BlockFileOptions } from './block-file.js';
import type { ParsedIp, Words } from './ip-number.js';
import { NO_MATCH, type RangeColumns } from './range-table.js';

const HEADER = 32;
const V4_RECORD = 12;
const V6_RECORD = 36;

export interface SegmentFileLayout {
  format: SegmentFormat;
  /** The table's segments (RangeTable.columns). */
  segments: { v4: RangeColumns; v6: RangeColumns };
  /** The value written for each segment, per family. */
  values: { v4: ArrayLike<number>; v6: ArrayLike<number> };
  /** How many records the format writes (each format.record bytes). */
  records: number;
  /** Bytes of the records' texts. */
  textBytes: number;
  report: Buffer;
}

/**
 * A buffer the size of the whole file, header, segments and report written:
 * the format writes its records from `recordsAt` and their texts from `textAt`.
 */
export function encodeSegmentFile(layout: SegmentFileLayout): {
  out: Buffer;
  recordsAt: number;
  textAt: number;
} {
  const { v4, v6 } = layout.segments;
  const n4 = v4.values.length;
  const n6 = v6.values.length;
  if (layout.values.v4.length !== n4 || layout.values.v6.length !== n6)
    throw new RangeError('one value per segment');
  const recordsAt = HEADER + V4_RECORD * n4 + V6_RECORD * n6;
  const textAt = recordsAt + layout.format.record * layout.records;
  const reportAt = textAt + layout.textBytes;
  const out = Buffer.alloc(reportAt + layout.report.length);
  out.write(magicOf(layout.format.magic), 0, 'latin1');
  out.writeUInt32BE(n4, 8);
  out.writeUInt32BE(n6, 12);
  out.writeUInt32BE(layout.records, 16);
  out.writeUInt32BE(layout.textBytes, 20);
  out.writeUInt32BE(layout.report.length, 24);
  let at = HEADER;
  for (let i = 0; i < n4; i++, at += V4_RECORD) {
    out.writeUInt32BE(v4.starts[i]!, at);
    out.writeUInt32BE(v4.ends[i]!, at + 4);
    out.writeUInt32BE(layout.values.v4[i]!, at + 8);
  }
  for (let i = 0; i < n6; i++, at += V6_RECORD) {
    for (let w = 0; w < 4; w++) {
      out.writeUInt32BE(v6.starts[i * 4 + w]!, at + 4 * w);
      out.writeUInt32BE(v6.ends[i * 4 + w]!, at + 16 + 4 * w);
    }
    out.writeUInt32BE(layout.values.v6[i]!, at + 32);
  }
  layout.report.copy(out, reportAt);
  return { out, recordsAt, textAt };
}

export interface SegmentFormat {
  magic: string;
  /** For messages: "ASN index". */
  name: string;
  /** The article before the name: "an ASN index". */
  article: 'a' | 'an';
  /** The error a file that is not one of these is refused with. */
  error: ErrorClass;
  /** Bytes of one record. */
  record: number;
}

type ErrorClass = new (message: string) => Error;

/** A file of `format`, read through `file`: its header checked, its segments searched; the format reads its records and texts. */
export class SegmentFile {
  readonly file: BlockFile;
  readonly n4: number;
  readonly n6: number;
  /** Records, where they begin, and where their texts begin. */
  readonly records: number;
  readonly recordsAt: number;
  readonly textAt: number;
  readonly textBytes: number;
  /** The build report as written (the format parses it). */
  readonly report: string;
  readonly #v6At: number;

  /** Checks the magic, then that the header adds up to the file's size (a truncated or padded file is refused). */
  constructor(file: BlockFile, format: SegmentFormat) {
    const magic = magicOf(format.magic);
    if (file.size < HEADER || file.bytes(0, 8).toString('latin1') !== magic) {
      throw new format.error(`not ${format.article} ${format.name} file (format ${magic})`);
    }
    this.file = file;
    this.n4 = file.uint(8, 4);
    this.n6 = file.uint(12, 4);
    this.records = file.uint(16, 4);
    this.textBytes = file.uint(20, 4);
    const reportBytes = file.uint(24, 4);
    this.#v6At = HEADER + V4_RECORD * this.n4;
    this.recordsAt = this.#v6At + V6_RECORD * this.n6;
    this.textAt = this.recordsAt + format.record * this.records;
    const reportAt = this.textAt + this.textBytes;
    if (reportAt + reportBytes !== file.size) {
      throw new format.error(
        `${format.name} of ${file.size} bytes, its header describes ${reportAt + reportBytes}`,
      );
    }
    this.report = file.utf8(reportAt, reportBytes);
  }

  /** The value of the segment holding `ip`, or NO_MATCH. */
  find(ip: ParsedIp): number {
    return ip.version === 4 ? this.#findV4(ip.v4) : this.#findV6(ip.w);
  }

  /** RangeTable.findV4's search over the file. */
  #findV4(ip: number): number {
    const file = this.file;
    let low = 0;
    let high = this.n4 - 1;
    // Invariant: every index < low starts at or before ip; every index > high starts after it.
    while (low <= high) {
      const mid = (low + high) >>> 1;
      if (file.uint(HEADER + V4_RECORD * mid, 4) <= ip) low = mid + 1;
      else high = mid - 1;
    }
    if (high < 0) return NO_MATCH;
    const at = HEADER + V4_RECORD * high;
    return file.uint(at + 4, 4) >= ip ? file.uint(at + 8, 4) : NO_MATCH;
  }

  #findV6(w: Words): number {
    let low = 0;
    let high = this.n6 - 1;
    while (low <= high) {
      const mid = (low + high) >>> 1;
      if (this.#compareV6(this.#v6At + V6_RECORD * mid, w) <= 0) low = mid + 1;
      else high = mid - 1;
    }
    if (high < 0) return NO_MATCH;
    const at = this.#v6At + V6_RECORD * high;
    return this.#compareV6(at + 16, w) >= 0 ? this.file.uint(at + 32, 4) : NO_MATCH;
  }

  /** Sign of (the four words at `at`) − w. */
  #compareV6(at: number, w: Words): number {
    for (let k = 0; k < 4; k++) {
      const d = this.file.uint(at + 4 * k, 4) - w[k]!;
      if (d !== 0) return d;
    }
    return 0;
  }
}

/**
 * The reader `read` makes over the file at `path`, or undefined when there is
 * no file or it is not a whole one of its format (the caller builds it anew).
 */
export function openIndexFile<T>(
  path: string,
  blocks: BlockFileOptions | undefined,
  read: (file: BlockFile) => T,
): T | undefined {
  let file: BlockFile;
  try {
    file = BlockFile.open(path, blocks);
  } catch {
    return undefined;
  }
  try {
    return read(file);
  } catch {
    file.close();
    return undefined;
  }
}

function magicOf(magic: string): string {
  if (!/^[\x20-\x7e]{8}$/.test(magic)) throw new RangeError(`magic "${magic}" is not 8 ASCII characters`);
  return magic;
}
