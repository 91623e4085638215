/**
 * The security headers of one response, each judged by the spec that
 * defines it, and an overall grade A+..F. Pure functions over a header map;
 * docs/security-headers.md states every rule and weight written here.
 */

import {
  type Item,
  isInnerList,
  ParseError,
  parseDictionary,
  parseItem,
  serializeBareItem,
  Token,
} from 'structured-headers';
import { type CspFinding, evaluateCsp, evaluateFrameAncestors } from './csp.js';
import { splitOutsideQuotes } from './header-syntax.js';
import { evaluateHsts, type HstsFinding } from './hsts.js';
import { fieldLines, type HeaderFinding, missing, type Verdict } from './verdict.js';

/** Response header names are lower case (as safeFetch reports them); a repeated header is an array. */
export type ResponseHeaders = Readonly<Record<string, string | readonly string[] | undefined>>;

/**
 * Fetch "determine nosniff": the first value of the comma-split header,
 * compared ASCII case-insensitively with "nosniff"; anything else is ignored.
 */
export function evaluateContentTypeOptions(lines: readonly string[]): HeaderFinding {
  if (lines.length === 0)
    return missing('browsers may sniff content types and run a response as script or HTML');
  const value = lines.join(', ');
  const first = splitOutsideQuotes(value, ',')[0] ?? '';
  return first.toLowerCase() === 'nosniff'
    ? { present: true, value, verdict: 'good', notes: [] }
    : {
        present: true,
        value,
        verdict: 'bad',
        notes: ['only "nosniff" is defined; browsers ignore this value'],
      };
}

/**
 * HTML's X-Frame-Options processing: values are comma-split and lower-cased
 * into a set; several different values of which one is deny, sameorigin or
 * allowall block framing altogether; otherwise only deny and sameorigin mean
 * anything (ALLOW-FROM is obsolete and ignored). When an enforced CSP has
 * frame-ancestors, browsers ignore X-Frame-Options entirely.
 */
export function evaluateFrameOptions(lines: readonly string[], frameAncestors: HeaderFinding): HeaderFinding {
  const superseded = frameAncestors.present
    ? ['superseded: browsers follow CSP frame-ancestors instead']
    : [];
  if (lines.length === 0) {
    return missing(frameAncestors.present ? 'not needed: CSP frame-ancestors is set' : undefined);
  }
  const value = lines.join(', ');
  const values = new Set(
    lines
      .flatMap((l) => splitOutsideQuotes(l, ','))
      .map((v) => v.toLowerCase())
      .filter((v) => v !== ''),
  );
  if (values.size > 1) {
    return ['deny', 'sameorigin', 'allowall'].some((v) => values.has(v))
      ? {
          present: true,
          value,
          verdict: 'good',
          notes: ['conflicting values: browsers refuse all framing', ...superseded],
        }
      : {
          present: true,
          value,
          verdict: 'bad',
          notes: ['no valid value: browsers ignore it', ...superseded],
        };
  }
  if (values.has('deny') || values.has('sameorigin')) {
    return { present: true, value, verdict: 'good', notes: superseded };
  }
  const why = [...values][0]?.startsWith('allow-from')
    ? 'ALLOW-FROM is obsolete and ignored by current browsers'
    : 'only DENY and SAMEORIGIN are honoured; browsers ignore this value';
  return { present: true, value, verdict: 'bad', notes: [why, ...superseded] };
}

/** Referrer Policy §3 (W3C): the policy tokens browsers know. */
const REFERRER_POLICIES = new Set([
  'no-referrer',
  'no-referrer-when-downgrade',
  'same-origin',
  'origin',
  'strict-origin',
  'origin-when-cross-origin',
  'strict-origin-when-cross-origin',
  'unsafe-url',
]);
const REFERRER_VERDICT: Record<string, [Verdict, string?]> = {
  'no-referrer': ['good'],
  'same-origin': ['good'],
  'strict-origin': ['good'],
  'strict-origin-when-cross-origin': ['good'],
  origin: ['weak', 'the origin is sent to every site, also from HTTPS pages to HTTP'],
  'origin-when-cross-origin': ['weak', 'the origin is sent to other sites, also from HTTPS pages to HTTP'],
  'no-referrer-when-downgrade': ['weak', 'the full URL (path and query) is sent to other HTTPS sites'],
  'unsafe-url': ['bad', 'the full URL (path and query) is sent everywhere, even over plain HTTP'],
};

/**
 * Referrer Policy §8.1 "parse a referrer policy from a Referrer-Policy
 * header": of the comma-separated tokens the LAST one browsers know wins
 * (sites list fallbacks first); unknown tokens are skipped.
 */
export function evaluateReferrerPolicy(lines: readonly string[]): HeaderFinding & { policy: string | null } {
  if (lines.length === 0) {
    return { ...missing('browsers use their default, strict-origin-when-cross-origin'), policy: null };
  }
  const value = lines.join(', ');
  const tokens = lines.flatMap((l) => splitOutsideQuotes(l, ','));
  const policy = tokens.filter((t) => REFERRER_POLICIES.has(t)).at(-1) ?? null;
  if (policy === null) {
    return {
      present: true,
      value,
      verdict: 'bad',
      notes: ['no known policy token: browsers ignore it and use their default'],
      policy: null,
    };
  }
  const [verdict, note] = REFERRER_VERDICT[policy] ?? ['bad'];
  const notes = note ? [note] : [];
  if (tokens.length > 1) notes.push(`"${policy}" is the policy in force (the last one browsers know)`);
  return { present: true, value, verdict, notes, policy };
}

/**
 * RFC 9651 §4.2: a field value that fails to parse is ignored as a whole (what
 * browsers do), so a parse failure is an answer here, not an error.
 */
function parsedOrUndefined<T>(parse: () => T): T | undefined {
  try {
    return parse();
  } catch (err) {
    if (err instanceof ParseError) return undefined;
    throw err;
  }
}

/** Features whose `*` allowlist hands a camera, microphone or location to any embedded page. */
const POWERFUL_FEATURES = new Set([
  'camera',
  'microphone',
  'geolocation',
  'display-capture',
  'usb',
  'serial',
  'hid',
]);

export interface PermissionsPolicyFinding extends HeaderFinding {
  /** Feature → allowlist as written (`*`, `self`, `"https://a.example"`); [] disables the feature. */
  features: Record<string, string[]>;
}

/**
 * Permissions Policy (W3C) §5.2: the header is an RFC 9651 Dictionary of
 * feature → allowlist (an Inner List, or a single Item). A header that does
 * not parse is ignored as a whole.
 */
export function evaluatePermissionsPolicy(
  lines: readonly string[],
  featurePolicyLines: readonly string[],
): PermissionsPolicyFinding {
  if (lines.length === 0) {
    const note =
      featurePolicyLines.length > 0
        ? 'only the deprecated Feature-Policy header is sent, which current browsers ignore'
        : 'powerful features (camera, microphone, geolocation, ...) are left to their defaults';
    return { ...missing(note), features: {} };
  }
  // RFC 9651 §4.2: several field lines are combined with commas before parsing.
  const value = lines.join(', ');
  const dict = parsedOrUndefined(() => parseDictionary(value));
  if (!dict) {
    return {
      present: true,
      value,
      verdict: 'bad',
      notes: ['not a valid structured-field dictionary (RFC 8941): browsers ignore it'],
      features: {},
    };
  }
  const features: Record<string, string[]> = {};
  const notes: string[] = [];
  for (const [feature, member] of dict) {
    const items: Item[] = isInnerList(member) ? member[0] : [member];
    features[feature] = items.map(([bare]) => serializeBareItem(bare));
    if (POWERFUL_FEATURES.has(feature) && features[feature].includes('*')) {
      notes.push(`${feature} is allowed for every origin (*)`);
    }
  }
  if (dict.size === 0)
    return { present: true, value, verdict: 'bad', notes: ['the header is empty'], features };
  return { present: true, value, verdict: 'good', notes, features };
}

/** A token Item such as `same-origin; report-to="x"` → "same-origin"; undefined otherwise. */
function tokenItem(lines: readonly string[]): string | undefined {
  if (lines.length !== 1) return undefined;
  const bare = parsedOrUndefined(() => parseItem(lines[0] as string))?.[0];
  return bare instanceof Token ? bare.toString() : undefined;
}

/**
 * HTML "obtain a cross-origin opener policy": a structured-field token;
 * anything else is ignored and the default, unsafe-none, applies.
 */
export function evaluateCoop(lines: readonly string[]): HeaderFinding {
  if (lines.length === 0) return missing('other origins that open this page keep a reference to its window');
  const value = lines.join(', ');
  const token = tokenItem(lines);
  switch (token) {
    case 'same-origin':
      return { present: true, value, verdict: 'good', notes: [] };
    case 'same-origin-allow-popups':
    case 'noopener-allow-popups':
      return {
        present: true,
        value,
        verdict: 'weak',
        notes: [`${token} isolates this page but not its popups`],
      };
    case 'unsafe-none':
      return { present: true, value, verdict: 'weak', notes: ['unsafe-none is the default: no isolation'] };
    default:
      return { present: true, value, verdict: 'bad', notes: ['not a known value: browsers ignore it'] };
  }
}

/** HTML "obtain an embedder policy": require-corp, credentialless or unsafe-none, as a structured-field token. */
export function evaluateCoep(lines: readonly string[]): HeaderFinding {
  if (lines.length === 0)
    return missing('cross-origin isolation (needed for SharedArrayBuffer) is not enabled');
  const value = lines.join(', ');
  const token = tokenItem(lines);
  if (token === 'require-corp' || token === 'credentialless')
    return { present: true, value, verdict: 'good', notes: [] };
  if (token === 'unsafe-none') {
    return { present: true, value, verdict: 'weak', notes: ['unsafe-none is the default: no isolation'] };
  }
  return { present: true, value, verdict: 'bad', notes: ['not a known value: browsers ignore it'] };
}

/**
 * Fetch "cross-origin resource policy check": the combined header value is
 * compared byte for byte with same-origin, same-site and cross-origin; any
 * other value (including two field lines) is ignored.
 */
export function evaluateCorp(lines: readonly string[]): HeaderFinding {
  if (lines.length === 0) return missing('other sites may embed this response as a no-cors resource');
  const value = lines.join(', ');
  if (value === 'same-origin' || value === 'same-site')
    return { present: true, value, verdict: 'good', notes: [] };
  if (value === 'cross-origin') {
    return {
      present: true,
      value,
      verdict: 'weak',
      notes: ['cross-origin explicitly lets any site embed it'],
    };
  }
  return {
    present: true,
    value,
    verdict: 'bad',
    notes: ['not a known value (the match is case-sensitive): ignored'],
  };
}

export type Grade = 'A+' | 'A' | 'B' | 'C' | 'D' | 'F';

/** Points per header (docs/security-headers.md); a weak verdict earns half, bad and missing none. */
export const GRADE_WEIGHTS = {
  strict_transport_security: 25,
  content_security_policy: 25,
  framing: 15,
  x_content_type_options: 15,
  referrer_policy: 10,
  permissions_policy: 10,
} as const;

/** Lowest score for each grade, best first; A+ additionally needs COOP same-origin (see gradeOf). */
const GRADE_FLOORS: readonly [Grade, number][] = [
  ['A', 90],
  ['B', 75],
  ['C', 60],
  ['D', 40],
];

export interface SecurityHeaders {
  /** The URL of the response the headers were read from. */
  url: string;
  /** Whether that response came over HTTPS. */
  https: boolean;
  strict_transport_security: HstsFinding;
  content_security_policy: CspFinding;
  frame_ancestors: HeaderFinding;
  x_frame_options: HeaderFinding;
  x_content_type_options: HeaderFinding;
  referrer_policy: HeaderFinding & { policy: string | null };
  permissions_policy: PermissionsPolicyFinding;
  cross_origin_opener_policy: HeaderFinding;
  cross_origin_resource_policy: HeaderFinding;
  cross_origin_embedder_policy: HeaderFinding;
  /** 0..100, from GRADE_WEIGHTS. */
  score: number;
  grade: Grade;
  /** Why the grade is not higher, one sentence each. */
  grade_notes: string[];
}

/** Judges every security header of one response. */
export function evaluateSecurityHeaders(url: string, headers: ResponseHeaders): SecurityHeaders {
  const https = url.startsWith('https:');
  const lines = (name: string) => fieldLines(headers[name]);
  const csp = evaluateCsp(lines('content-security-policy'), lines('content-security-policy-report-only'));
  const frameAncestors = evaluateFrameAncestors(csp.policies);
  const findings = {
    strict_transport_security: evaluateHsts(lines('strict-transport-security'), { https }),
    content_security_policy: csp,
    frame_ancestors: frameAncestors,
    x_frame_options: evaluateFrameOptions(lines('x-frame-options'), frameAncestors),
    x_content_type_options: evaluateContentTypeOptions(lines('x-content-type-options')),
    referrer_policy: evaluateReferrerPolicy(lines('referrer-policy')),
    permissions_policy: evaluatePermissionsPolicy(lines('permissions-policy'), lines('feature-policy')),
    cross_origin_opener_policy: evaluateCoop(lines('cross-origin-opener-policy')),
    cross_origin_resource_policy: evaluateCorp(lines('cross-origin-resource-policy')),
    cross_origin_embedder_policy: evaluateCoep(lines('cross-origin-embedder-policy')),
  };
  return { url, https, ...findings, ...gradeOf(findings, https) };
}

const CREDIT: Record<Verdict, number> = { good: 1, weak: 0.5, bad: 0, missing: 0 };

type Findings = Omit<SecurityHeaders, 'url' | 'https' | 'score' | 'grade' | 'grade_notes'>;

/** The score and grade of a set of findings (rules: docs/security-headers.md). */
export function gradeOf(f: Findings, https: boolean): { score: number; grade: Grade; grade_notes: string[] } {
  const notes: string[] = [];
  // Framing protection counts once, from whichever mechanism browsers follow and protects best.
  const framing = Math.max(CREDIT[f.frame_ancestors.verdict], CREDIT[f.x_frame_options.verdict]);
  const credits: Record<keyof typeof GRADE_WEIGHTS, number> = {
    strict_transport_security: CREDIT[f.strict_transport_security.verdict],
    content_security_policy: CREDIT[f.content_security_policy.verdict],
    framing,
    x_content_type_options: CREDIT[f.x_content_type_options.verdict],
    referrer_policy: CREDIT[f.referrer_policy.verdict],
    permissions_policy: CREDIT[f.permissions_policy.verdict],
  };
  let points = 0;
  for (const [name, weight] of Object.entries(GRADE_WEIGHTS) as [keyof typeof GRADE_WEIGHTS, number][]) {
    const credit = credits[name];
    points += weight * credit;
    if (credit < 1)
      notes.push(`${name}: ${credit === 0 ? 'no credit' : 'half credit'} (${weight} points possible)`);
  }
  const score = Math.floor(points);
  let grade: Grade = GRADE_FLOORS.find(([, floor]) => score >= floor)?.[0] ?? 'F';
  if (score === 100) {
    if (f.cross_origin_opener_policy.verdict === 'good') grade = 'A+';
    else notes.push('A+ needs Cross-Origin-Opener-Policy: same-origin as well');
  }
  // Over plain HTTP any header can be stripped or rewritten in transit, so none can be relied on.
  if (!https && (grade === 'A+' || grade === 'A' || grade === 'B' || grade === 'C')) {
    grade = 'D';
    notes.push('graded at most D: the response did not come over HTTPS');
  }
  return { score, grade, grade_notes: notes };
}
