/**
 * The shape every security-header finding shares: whether the header was
 * there, its value as received, and a verdict with the reasons for it.
 * The rules behind each verdict are documented in docs/security-headers.md.
 */

/**
 * good: does its job as the spec intends. weak: present and in force but
 * leaves a gap (or is deliberately permissive). bad: present but ignored by
 * browsers (malformed) or actively unsafe. missing: not sent.
 */
export type Verdict = 'good' | 'weak' | 'bad' | 'missing';

export interface HeaderFinding {
  present: boolean;
  /** The value as received (several field lines joined with ", "), or null. */
  value: string | null;
  verdict: Verdict;
  /** Why the verdict is what it is, one plain sentence each. */
  notes: string[];
}

/** A finding for a header that was not sent. */
export function missing(note?: string): HeaderFinding {
  return { present: false, value: null, verdict: 'missing', notes: note ? [note] : [] };
}

/** The field lines of one header as a list (undici gives a repeated header as an array). */
export function fieldLines(value: string | readonly string[] | undefined): string[] {
  if (value === undefined) return [];
  return typeof value === 'string' ? [value] : [...value];
}
