/**
 * The BIMI assertion record (draft-brand-indicators-for-message-identification):
 * which of the candidate `<selector>._bimi.<domain>` answers holds it, and
 * its tags (`l=` the logo, `a=` the mark certificate).
 */
import { parseTagList, tagValue } from './tag-list.js';
import { type DnsOutcome, type Finding, finding } from './types.js';

/** The source every BIMI finding that is not about the SVG profile or the VMC cites. */
export const BIMI_SPEC = 'draft-brand-indicators-for-message-identification';

/** A BIMI assertion record begins with v=BIMI1 (exact value). */
export function isBimiRecord(text: string): boolean {
  return /^v[ \t]*=[ \t]*BIMI1[ \t]*(?:;|$)/.test(text);
}

export interface BimiRecord {
  valid: boolean;
  /** l= and a= both empty: the domain declines to show a logo. */
  declined: boolean;
  location: string | null;
  authority: string | null;
  findings: Finding[];
}

export function parseBimiRecord(text: string): BimiRecord {
  const findings: Finding[] = [];
  const list = parseTagList(text);
  if (list.duplicates.length > 0) {
    findings.push(finding('error', `Tag ${list.duplicates.join(', ')} appears more than once.`, BIMI_SPEC));
  }
  const uri = (tag: 'l' | 'a'): string | null => {
    const value = tagValue(list, tag)?.trim() ?? '';
    if (value === '') return null;
    if (value.includes(',')) {
      findings.push(finding('error', `${tag}= must be a single URI.`, BIMI_SPEC));
      return null;
    }
    let url: URL;
    try {
      url = new URL(value);
    } catch {
      findings.push(finding('error', `${tag}=${value} is not a URL.`, BIMI_SPEC));
      return null;
    }
    if (url.protocol !== 'https:') {
      findings.push(finding('error', `${tag}=${value} must use https.`, BIMI_SPEC));
      return null;
    }
    return value;
  };
  const location = uri('l');
  const authority = uri('a');
  const valid = !findings.some((f) => f.severity === 'error');
  const declined = valid && location === null && authority === null;
  return { valid, declined, location, authority, findings };
}

export interface BimiLookup {
  selector: string;
  /** The domain asked: the author domain, or its organizational domain when that held no record. */
  domain: string;
  /** `<selector>._bimi.<domain>` */
  name: string;
  outcome: DnsOutcome<string>;
}

/** The candidate whose record the check uses: the first (in preference order) that has one. */
export function chooseBimiRecord(
  lookups: BimiLookup[],
): { lookup: BimiLookup; records: string[] } | undefined {
  for (const lookup of lookups) {
    if (lookup.outcome.kind !== 'answer') continue;
    const records = lookup.outcome.records.filter(isBimiRecord);
    if (records.length > 0) return { lookup, records };
  }
  return undefined;
}
