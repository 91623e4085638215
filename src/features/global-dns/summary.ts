/**
 * The point of a global measurement: does every country see the same answer?
 * Pure functions, no I/O.
 *
 * An answer set is what one country's resolver said about the question: its
 * response code plus the distinct values of the records of the asked type.
 * Two countries agree when their sets are equal, ignoring TTLs (they count
 * down differently in every cache), record order (resolvers rotate it) and
 * the spelling differences DNS itself ignores (letter case in names, a
 * trailing root dot, IPv6 zero compression). The CNAME chain leading to the
 * records is left out: two regions steered through different CDN host names
 * to the same addresses see the same thing. The rcode stays in: NXDOMAIN in
 * one country and NOERROR-without-records in another are different stories
 * (a delegation still propagating, say), though both have no values.
 *
 * Only countries whose probe got an answer take part; a probe that failed or
 * timed out, and a country without a probe, say nothing about consistency.
 */
import ipaddr from 'ipaddr.js';

export interface AnswerLike {
  type: string;
  value: string;
}

export interface ResultLike {
  country: string;
  status: 'finished' | 'failed' | 'timeout' | 'no_probe';
  rcode: string | null;
  answers: readonly AnswerLike[];
}

export interface AnswerSet {
  rcode: string;
  /** Canonical values, sorted. */
  values: string[];
  /** Countries that saw exactly this, in the order they were requested. */
  countries: string[];
}

export interface GlobalDnsSummary {
  /** Countries where a probe ran the query (whatever came of it). */
  measured: number;
  /** Countries whose probe got a DNS response (any rcode). */
  answered: number;
  /** Countries where no probe was available. */
  unmeasured: string[];
  distinct_answer_sets: number;
  /** True when at least one country answered and every country that answered saw the same set. */
  consistent: boolean;
  /** Most widely seen first. */
  answer_sets: AnswerSet[];
}

/** A record value in the form two equal answers share; presentation format in, presentation format out. */
export function canonicalValue(type: string, value: string): string {
  const v = value.trim();
  switch (type) {
    case 'AAAA':
      return ipaddr.IPv6.isValid(v) ? ipaddr.IPv6.parse(v).toRFC5952String() : v.toLowerCase();
    case 'CNAME':
    case 'NS':
    case 'PTR':
      return canonicalName(v);
    case 'MX': {
      const [preference, exchange, ...rest] = v.split(/\s+/);
      return [preference, exchange === undefined ? undefined : canonicalName(exchange), ...rest]
        .filter((p) => p !== undefined)
        .join(' ');
    }
    case 'SOA': {
      // mname and rname are names; serial and timers are compared as given, so a
      // serial that has not reached every region yet shows up as a second set.
      const [mname, rname, ...numbers] = v.split(/\s+/);
      return [mname, rname]
        .filter((p): p is string => p !== undefined)
        .map(canonicalName)
        .concat(numbers)
        .join(' ');
    }
    case 'CAA': {
      // flags tag "value": the tag is case-insensitive (RFC 8659 §4.1), the value is not.
      const match = /^(\d+)\s+(\S+)\s+(.*)$/s.exec(v);
      return match ? `${match[1]} ${match[2]?.toLowerCase()} ${match[3]}` : v;
    }
    default:
      // A compares as written; TXT is case- and space-sensitive data.
      return v;
  }
}

function canonicalName(name: string): string {
  const lower = name.toLowerCase();
  return lower.length > 1 && lower.endsWith('.') ? lower.slice(0, -1) : lower;
}

/** The canonical, de-duplicated, sorted values of the records of `type` in one answer. */
export function answerValues(answers: readonly AnswerLike[], type: string): string[] {
  const values = new Set(answers.filter((a) => a.type === type).map((a) => canonicalValue(type, a.value)));
  return [...values].sort();
}

export function summarizeAnswers(results: readonly ResultLike[], type: string): GlobalDnsSummary {
  const sets = new Map<string, AnswerSet>();
  let measured = 0;
  let answered = 0;
  const unmeasured: string[] = [];
  for (const result of results) {
    if (result.status === 'no_probe') {
      unmeasured.push(result.country);
      continue;
    }
    measured++;
    if (result.status !== 'finished') continue;
    answered++;
    const rcode = result.rcode ?? 'UNKNOWN';
    const values = answerValues(result.answers, type);
    const key = JSON.stringify([rcode, values]);
    const set = sets.get(key);
    if (set) set.countries.push(result.country);
    else sets.set(key, { rcode, values, countries: [result.country] });
  }
  // Map keeps first-seen order, and sort is stable: equal-sized sets stay in request order.
  const answerSets = [...sets.values()].sort((a, b) => b.countries.length - a.countries.length);
  return {
    measured,
    answered,
    unmeasured,
    distinct_answer_sets: answerSets.length,
    consistent: answered > 0 && answerSets.length === 1,
    answer_sets: answerSets,
  };
}
