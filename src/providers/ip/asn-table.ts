/**
 * Address → autonomous system, from the ip-location-db `asn` CSV format
 * (`ip_range_start,ip_range_end,autonomous_system_number,autonomous_system_organization`,
 * inclusive ranges given as IP literals, one family per file; organization
 * names RFC 4180-quoted when they hold a comma). Pure, no I/O.
 *
 * The files are meant to be sorted and disjoint. That is checked, not
 * assumed: rows out of order are sorted, and an overlap (the 2026-06 IPv4
 * file has one) resolves as RangeTable does, the later-starting range wins.
 * Both are counted so the loader can log them.
 */
import { forEachLine, ListFormatError, splitCsvLine } from './csv.js';
import { compareWords, type ParsedIp, parseIpNumber, type Words } from './ip-number.js';
import { NO_MATCH, type RangeTable, RangeTableBuilder } from './range-table.js';

export interface AsnHit {
  asn: number;
  org: string | null;
}

export interface AsnReport {
  rows: number;
  skipped: number;
  /** Rows that started before the row above them. */
  outOfOrder: number;
  /** Rows that overlapped an earlier range. */
  overlaps: number;
  problems: string[];
}

export class AsnTable {
  readonly #table: RangeTable;
  readonly #asn: Uint32Array;
  readonly #orgOf: Uint32Array;
  readonly #orgs: readonly string[];
  readonly report: AsnReport;

  constructor(
    table: RangeTable,
    asn: Uint32Array,
    orgOf: Uint32Array,
    orgs: readonly string[],
    report: AsnReport,
  ) {
    this.#table = table;
    this.#asn = asn;
    this.#orgOf = orgOf;
    this.#orgs = orgs;
    this.report = report;
  }

  /**
   * What the index writer serializes (asn-index.ts): the segments, whose
   * values are rows; each row's AS number and organization (an index into
   * `orgs`, where '' means none). Read-only.
   */
  get rows(): { table: RangeTable; asn: Uint32Array; orgOf: Uint32Array; orgs: readonly string[] } {
    return { table: this.#table, asn: this.#asn, orgOf: this.#orgOf, orgs: this.#orgs };
  }

  lookup(ip: ParsedIp): AsnHit | undefined {
    const row = this.#table.find(ip);
    if (row === NO_MATCH) return undefined;
    return { asn: this.#asn[row]!, org: this.#orgs[this.#orgOf[row]!] || null };
  }
}

const ASN = /^\d{1,10}$/;

/** Collects rows from one or more CSV bodies (IPv4 and IPv6 files) into one table. */
export class AsnTableBuilder {
  readonly #ranges = new RangeTableBuilder();
  #asn: number[] = [];
  #orgOf: number[] = [];
  readonly #orgs: string[] = [''];
  readonly #orgIndex = new Map<string, number>([['', 0]]);
  #skipped = 0;
  #outOfOrder = 0;
  readonly #problems: string[] = [];

  /** Adds one file's rows. Throws ListFormatError when more than 1% of its lines are unusable. */
  add(text: string, name: string): void {
    let rows = 0;
    let skipped = 0;
    let last4 = -1;
    let last6: Words | undefined;
    const skip = (lineNumber: number, why: string) => {
      skipped++;
      if (this.#problems.length < 5) this.#problems.push(`${name} line ${lineNumber}: ${why}`);
    };
    forEachLine(text, (line, lineNumber) => {
      if (line === '' || line.startsWith('#')) return;
      // The three leading fields are never quoted: cut them out directly (half a million rows).
      const c1 = line.indexOf(',');
      const c2 = c1 === -1 ? -1 : line.indexOf(',', c1 + 1);
      if (c2 === -1) return skip(lineNumber, 'not an ASN row');
      const c3 = line.indexOf(',', c2 + 1);
      const start = parseIpNumber(line.slice(0, c1));
      const end = parseIpNumber(line.slice(c1 + 1, c2));
      const asnText = c3 === -1 ? line.slice(c2 + 1) : line.slice(c2 + 1, c3);
      let org = c3 === -1 ? '' : line.slice(c3 + 1);
      if (org.startsWith('"')) {
        const fields = splitCsvLine(org);
        if (fields?.length !== 1) return skip(lineNumber, 'bad organization field');
        org = fields[0]!;
      }
      if (!start || !end || start.version !== end.version) return skip(lineNumber, 'bad range');
      if (!ASN.test(asnText) || Number(asnText) > 0xffffffff) return skip(lineNumber, 'bad AS number');
      const value = this.#asn.length;
      if (start.version === 4 && end.version === 4) {
        if (end.v4 < start.v4) return skip(lineNumber, 'range ends before it starts');
        if (start.v4 < last4) this.#outOfOrder++;
        last4 = start.v4;
        this.#ranges.addV4(start.v4, end.v4, value);
      } else if (start.version === 6 && end.version === 6) {
        if (compareWords(end.w, start.w) < 0) return skip(lineNumber, 'range ends before it starts');
        if (last6 && compareWords(start.w, last6) < 0) this.#outOfOrder++;
        last6 = start.w;
        this.#ranges.addV6(start.w, end.w, value);
      }
      this.#asn.push(Number(asnText));
      this.#orgOf.push(this.#intern(org.trim()));
      rows++;
    });
    this.#skipped += skipped;
    if (rows === 0 || skipped / (rows + skipped) > 0.01) {
      throw new ListFormatError(
        `${name}: ${skipped} of ${rows + skipped} lines unusable (${this.#problems.join('; ')})`,
      );
    }
  }

  build(): AsnTable {
    const table = this.#ranges.build();
    const report: AsnReport = {
      rows: this.#asn.length,
      skipped: this.#skipped,
      outOfOrder: this.#outOfOrder,
      overlaps: table.overlaps,
      problems: this.#problems,
    };
    const asn = Uint32Array.from(this.#asn);
    const orgOf = Uint32Array.from(this.#orgOf);
    this.#asn = [];
    this.#orgOf = [];
    return new AsnTable(table, asn, orgOf, this.#orgs, report);
  }

  #intern(org: string): number {
    let i = this.#orgIndex.get(org);
    if (i === undefined) {
      i = this.#orgs.length;
      this.#orgs.push(org);
      this.#orgIndex.set(org, i);
    }
    return i;
  }
}
