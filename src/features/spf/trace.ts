/**
 * The trace of one check_host() evaluation, bounded (TRACE_LIMITS): what a
 * record holds decides how much is written, and a record may hold thousands of
 * terms, so the terms that decided nothing are listed up to a number per
 * record and counted after it, and every text a record feeds is cut at a
 * length. A 51 KB record was a 550 KB answer before.
 */
import { clip } from '../../text.js';
import { type SpfTraceEntry, TRACE_LIMITS } from './spf-types.js';

/** One record's evaluation, for the count of its terms that are not listed. */
export interface TraceLevel {
  readonly depth: number;
  readonly domain: string;
  quiet: number;
  omitted?: SpfTraceEntry;
}

export class SpfTrace {
  readonly entries: SpfTraceEntry[] = [];

  level(depth: number, domain: string): TraceLevel {
    return { depth, domain, quiet: 0 };
  }

  /** Appends an entry, its texts cut to their limits; returns the stored entry (its fields may be updated). */
  push(entry: SpfTraceEntry): SpfTraceEntry {
    const stored: SpfTraceEntry = { ...entry, detail: clip(entry.detail, TRACE_LIMITS.detail) };
    if (entry.record !== undefined) stored.record = clip(entry.record, TRACE_LIMITS.record);
    if (entry.term !== undefined) stored.term = clip(entry.term, TRACE_LIMITS.term);
    this.entries.push(stored);
    return stored;
  }

  /**
   * A term that decided nothing (no match without a lookup, or not reached):
   * listed while its record has listed fewer than TRACE_LIMITS.terms, then
   * counted in the record's one `omitted` entry, written where listing stopped.
   */
  pushQuiet(level: TraceLevel, entry: SpfTraceEntry): void {
    if (level.quiet < TRACE_LIMITS.terms) {
      level.quiet += 1;
      this.push(entry);
      return;
    }
    level.omitted ??= this.push({
      step: 'omitted',
      depth: level.depth,
      domain: level.domain,
      count: 0,
      detail: '',
    });
    const count = (level.omitted.count ?? 0) + 1;
    level.omitted.count = count;
    level.omitted.detail = `${count} more ${count === 1 ? 'term' : 'terms'} of this record that matched nothing or were not reached: not listed (the first ${TRACE_LIMITS.terms} are)`;
  }
}
