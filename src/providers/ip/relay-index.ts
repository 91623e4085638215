/**
 * The relay egress lists as lookup tables, and their parsers. Pure, no I/O.
 *
 *  - iCloud Private Relay publishes its egress ranges as an RFC 8805 geofeed:
 *    CSV without a header, `ip_prefix,alpha2code,region,city,postal_code`
 *    (the postal code is always empty; region and city may be). About
 *    290 000 rows, IPv4 and IPv6, ~12 MB.
 *  - The Tor Project's bulk exit list: one exit address per line.
 *
 * Each row is kept as its prefix length and an index into a table of
 * distinct egress regions (a few thousand), so the prefix text and the geo
 * hint are rebuilt from the matched address at lookup time instead of
 * holding 290 000 strings. The service parses a list into a RelayIndex in a
 * worker thread and answers from its serialized form, a file
 * (relay-index-file.ts); RelayIndex's own lookups are the reference that
 * file's answers are tested against.
 */
import { forEachLine, ListFormatError, splitCsvLine } from './csv.js';
import { type ParsedIp, parsePrefix, prefixOf } from './ip-number.js';
import { NO_MATCH, type RangeTable, RangeTableBuilder } from './range-table.js';

export interface EgressRegion {
  /** ISO 3166-1 alpha-2, upper case. */
  country: string | null;
  /** ISO 3166-2 subdivision code, e.g. GB-EN. */
  region: string | null;
  city: string | null;
}

export interface RelayHit {
  /** The published prefix that holds the address, e.g. 172.224.226.0/27. */
  prefix: string;
  /** The geofeed's hint of where the relay's users are; null for lists without one (Tor). */
  egress_region: EgressRegion | null;
}

export class RelayIndex {
  readonly #table: RangeTable;
  readonly #bits: Uint8Array;
  readonly #regionOf: Int32Array;
  readonly #regions: readonly EgressRegion[];
  /** Rows loaded (prefixes or addresses). */
  readonly entries: number;

  constructor(table: RangeTable, bits: Uint8Array, regionOf: Int32Array, regions: readonly EgressRegion[]) {
    this.#table = table;
    this.#bits = bits;
    this.#regionOf = regionOf;
    this.#regions = regions;
    this.entries = bits.length;
  }

  lookup(ip: ParsedIp): RelayHit | undefined {
    const row = this.#table.find(ip);
    if (row === NO_MATCH) return undefined;
    const region = this.#regionOf[row]!;
    return {
      prefix: prefixOf(ip, this.#bits[row]!),
      egress_region: region < 0 ? null : this.#regions[region]!,
    };
  }

  /** Typed-array bytes held by the index. */
  get byteLength(): number {
    return this.#table.byteLength + this.#bits.byteLength + this.#regionOf.byteLength;
  }

  /** What the index holds, for the writer that serializes it (relay-index-file.ts). Read-only. */
  get rows(): {
    table: RangeTable;
    /** Per row: the prefix length. */
    bits: Uint8Array;
    /** Per row: an index into `regions`, or -1. */
    regionOf: Int32Array;
    regions: readonly EgressRegion[];
  } {
    return { table: this.#table, bits: this.#bits, regionOf: this.#regionOf, regions: this.#regions };
  }
}

/** What a parse skipped, for logs and for refusing a body that is not the list at all. */
export interface ParseReport {
  entries: number;
  skipped: number;
  /** The first few problems, "line N: why". */
  problems: string[];
}

/**
 * Past this share of unusable lines the body is refused: an HTML error page
 * or a different format served with 200 must not replace a good list.
 */
const MAX_SKIPPED_SHARE = 0.01;

class RowCollector {
  readonly builder: RangeTableBuilder;
  bits: Uint8Array;
  regionOf: Int32Array;
  readonly regions: EgressRegion[] = [];
  readonly #regionIndex = new Map<string, number>();
  rows = 0;
  skipped = 0;
  readonly problems: string[] = [];

  /** `expected`: the rows to come per family, when known; storage then needs neither growing nor trimming. */
  constructor(expected?: { v4: number; v6: number }) {
    this.builder = new RangeTableBuilder(expected);
    const rows = expected ? expected.v4 + expected.v6 : 1024;
    this.bits = new Uint8Array(rows);
    this.regionOf = new Int32Array(rows);
  }

  /** Adds one row; `region` is an index from intern(), or -1 for none. False when the prefix does not parse. */
  add(prefixText: string, region: number): boolean {
    const prefix = parsePrefix(prefixText);
    if (!prefix) return false;
    if (this.rows === this.bits.length) {
      const size = Math.max(this.rows * 2, 1024);
      const bits = new Uint8Array(size);
      bits.set(this.bits);
      this.bits = bits;
      const regionOf = new Int32Array(size);
      regionOf.set(this.regionOf);
      this.regionOf = regionOf;
    }
    this.builder.addPrefix(prefix, this.rows);
    this.bits[this.rows] = prefix.bits;
    this.regionOf[this.rows] = region;
    this.rows++;
    return true;
  }

  /** The index of a region in the shared table, adding it the first time it is seen. */
  intern(region: EgressRegion): number {
    const key = `${region.country ?? ''}\u0000${region.region ?? ''}\u0000${region.city ?? ''}`;
    let i = this.#regionIndex.get(key);
    if (i === undefined) {
      i = this.regions.length;
      this.regions.push(Object.freeze(region));
      this.#regionIndex.set(key, i);
    }
    return i;
  }

  skip(lineNumber: number, why: string): void {
    this.skipped++;
    if (this.problems.length < 5) this.problems.push(`line ${lineNumber}: ${why}`);
  }

  finish(what: string): { index: RelayIndex; report: ParseReport } {
    const total = this.rows + this.skipped;
    if (this.rows === 0)
      throw new ListFormatError(`${what}: no usable entries (${this.problems.join('; ')})`);
    if (this.skipped / total > MAX_SKIPPED_SHARE) {
      throw new ListFormatError(
        `${what}: ${this.skipped} of ${total} lines unusable (${this.problems.join('; ')})`,
      );
    }
    const exact = this.bits.length === this.rows;
    const index = new RelayIndex(
      this.builder.build(),
      exact ? this.bits : this.bits.slice(0, this.rows),
      exact ? this.regionOf : this.regionOf.slice(0, this.rows),
      this.regions,
    );
    return { index, report: { entries: this.rows, skipped: this.skipped, problems: this.problems } };
  }
}

const COUNTRY = /^[A-Z]{2}$/;

/**
 * Parses an RFC 8805 geofeed (the iCloud Private Relay egress list). Blank
 * lines and `#` comments (RFC 8805 §2.1.1) are skipped; so, counted, are rows
 * whose prefix does not parse. Throws ListFormatError for a body that is not
 * a geofeed.
 */
export function parseGeofeed(text: string): { index: RelayIndex; report: ParseReport } {
  const rows = new RowCollector(countRows(text));
  // A few thousand distinct `country,region,city,postal` tails repeat across 290 000 rows:
  // each tail is parsed once and remembered (its region index, or why it is unusable).
  const tails = new Map<string, number | string>();
  forEachLine(text, (line, lineNumber) => {
    if (line.length === 0 || line.charCodeAt(0) === 35 /* # */ || line.trim() === '') return;
    const comma = line.indexOf(',');
    if (comma === -1) return rows.skip(lineNumber, 'not a geofeed row');
    const tail = line.slice(comma + 1);
    let region = tails.get(tail);
    if (region === undefined) {
      region = regionOfTail(tail, rows);
      tails.set(tail, region);
    }
    if (typeof region === 'string') return rows.skip(lineNumber, region);
    if (!rows.add(line.slice(0, comma).trim(), region)) return rows.skip(lineNumber, 'bad prefix');
  });
  return rows.finish('relay geofeed');
}

/**
 * The geofeed's rows per family: the lines parseGeofeed will add, by the same
 * rules (a row it then skips for its region fields is counted too). Sizing
 * the storage from this first pass means no array is grown by doubling and
 * none copied at the end: in the worker thread that parses the list, those
 * ~20 MB of discarded arrays stayed resident in its malloc arena after it
 * exited. Prefixes are parsed here too, not guessed from their text, so a body
 * of junk lines sizes nothing.
 */
function countRows(text: string): { v4: number; v6: number } {
  let v4 = 0;
  let v6 = 0;
  forEachLine(text, (line) => {
    if (line.length === 0 || line.charCodeAt(0) === 35 /* # */ || line.trim() === '') return;
    const comma = line.indexOf(',');
    if (comma === -1) return;
    const prefix = parsePrefix(line.slice(0, comma).trim());
    if (prefix?.version === 4) v4++;
    else if (prefix) v6++;
  });
  return { v4, v6 };
}

/** `alpha2code,region,city,postal_code` → a region index, or the reason the row is unusable. */
function regionOfTail(tail: string, rows: RowCollector): number | string {
  const fields = splitCsvLine(tail);
  if (!fields) return 'malformed quoting';
  const country = (fields[0] ?? '').trim().toUpperCase();
  const region = (fields[1] ?? '').trim();
  const city = (fields[2] ?? '').trim();
  if (country !== '' && !COUNTRY.test(country)) return `bad country "${country}"`;
  return rows.intern({ country: country || null, region: region || null, city: city || null });
}

/**
 * Parses the Tor bulk exit list: one address per line; blank lines and `#`
 * comments are skipped. Throws ListFormatError for a body that is not one.
 */
export function parseExitList(text: string): { index: RelayIndex; report: ParseReport } {
  const rows = new RowCollector();
  forEachLine(text, (line, lineNumber) => {
    const entry = line.trim();
    if (entry === '' || entry.startsWith('#')) return;
    if (entry.includes('/') || !rows.add(entry, -1)) rows.skip(lineNumber, 'not an IP address');
  });
  return rows.finish('Tor exit list');
}
