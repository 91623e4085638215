/**
 * HTTP Strict Transport Security (RFC 6797): parsing, a verdict, and
 * eligibility for the browsers' preload list (https://hstspreload.org).
 * Pure functions; the service hands in what the fetches saw.
 */
import { organizationalDomain } from '../../net/organizational-domain.js';
import { isToken, splitOutsideQuotes, unquote } from './header-syntax.js';
import { type HeaderFinding, missing } from './verdict.js';

export interface HstsPolicy {
  /** Seconds (RFC 6797 §6.1.1). */
  max_age: number;
  include_subdomains: boolean;
  /** Not part of RFC 6797: the opt-in hstspreload.org asks for. */
  preload: boolean;
}

export type HstsParse = { ok: true; policy: HstsPolicy; notes: string[] } | { ok: false; error: string };

/**
 * Parses one Strict-Transport-Security field value (RFC 6797 §6.1):
 *
 *   Strict-Transport-Security = [ directive ] *( ";" [ directive ] )
 *   directive = directive-name [ "=" directive-value ]   ; value: token / quoted-string
 *
 * Names are case-insensitive (§6.1 rule 3), unknown directives are ignored
 * (rule 4), but a directive given twice (rule 2), a missing or non-numeric
 * max-age (§6.1.1), a value on the valueless includeSubDomains (§6.1.2) or any
 * other syntax error makes the whole header invalid: a user agent MUST ignore
 * a non-conforming STS header (§6.1, §8.1).
 */
export function parseHsts(value: string): HstsParse {
  const seen = new Map<string, string | null>();
  const notes: string[] = [];
  for (const part of splitOutsideQuotes(value, ';')) {
    if (part === '') continue;
    const eq = part.indexOf('=');
    const name = (eq === -1 ? part : part.slice(0, eq)).trim();
    if (!isToken(name)) return { ok: false, error: `"${name}" is not a valid directive name` };
    let directiveValue: string | null = null;
    if (eq !== -1) {
      const raw = part.slice(eq + 1).trim();
      const text = raw.startsWith('"') ? unquote(raw) : isToken(raw) ? raw : undefined;
      if (text === undefined) return { ok: false, error: `directive ${name} has a malformed value` };
      directiveValue = text;
    }
    const key = name.toLowerCase();
    if (seen.has(key))
      return { ok: false, error: `directive ${name} appears more than once (RFC 6797 §6.1)` };
    seen.set(key, directiveValue);
  }

  if (!seen.has('max-age'))
    return { ok: false, error: 'the required max-age directive is missing (RFC 6797 §6.1.1)' };
  const maxAge = seen.get('max-age');
  if (maxAge === null || maxAge === undefined || !/^[0-9]+$/.test(maxAge)) {
    return { ok: false, error: 'max-age must be a number of seconds (RFC 6797 §6.1.1)' };
  }
  const sub = seen.get('includesubdomains');
  if (sub !== undefined && sub !== null) {
    return { ok: false, error: 'includeSubDomains takes no value (RFC 6797 §6.1.2)' };
  }
  const preload = seen.get('preload');
  if (preload !== undefined && preload !== null) notes.push('preload is meant to be given without a value');
  for (const key of seen.keys()) {
    if (!['max-age', 'includesubdomains', 'preload'].includes(key))
      notes.push(`unknown directive ${key} is ignored`);
  }
  return {
    ok: true,
    // Digits only, so this is finite; absurd values compare as "long enough" and nothing else.
    policy: {
      max_age: Number(maxAge),
      include_subdomains: sub !== undefined,
      preload: preload !== undefined,
    },
    notes,
  };
}

/**
 * Six months: the shortest max-age Mozilla's HTTP Observatory counts as
 * effective (https://developer.mozilla.org/en-US/observatory/docs/tests_and_scoring).
 */
export const HSTS_MIN_EFFECTIVE_MAX_AGE = 15_768_000;
/** One year: the minimum hstspreload.org accepts. */
export const HSTS_PRELOAD_MIN_MAX_AGE = 31_536_000;

export interface HstsFinding extends HeaderFinding {
  max_age: number | null;
  include_subdomains: boolean;
  preload: boolean;
}

/**
 * The verdict on the STS field lines of one response. Only a response
 * received over HTTPS counts: a UA ignores STS over plain HTTP (RFC 6797 §8.1),
 * so its presence there is reported but protects nothing.
 */
export function evaluateHsts(lines: readonly string[], opts: { https: boolean }): HstsFinding {
  const none = { max_age: null, include_subdomains: false, preload: false };
  if (lines.length === 0) {
    return {
      ...missing(opts.https ? undefined : 'no response came over HTTPS, where HSTS would have to be sent'),
      ...none,
    };
  }
  const value = lines.join(', ');
  const notes: string[] = [];
  if (!opts.https) {
    return {
      present: true,
      value,
      verdict: 'bad',
      notes: ['sent over plain HTTP, where browsers ignore it (RFC 6797 §8.1)'],
      ...none,
    };
  }
  // RFC 6797 §8.1: with several STS header fields the UA processes only the first.
  if (lines.length > 1) notes.push(`${lines.length} header fields sent; browsers use only the first`);
  const parsed = parseHsts(lines[0] as string);
  if (!parsed.ok) {
    return {
      present: true,
      value,
      verdict: 'bad',
      notes: [...notes, `ignored by browsers: ${parsed.error}`],
      ...none,
    };
  }
  const { policy } = parsed;
  notes.push(...parsed.notes);
  let verdict: HstsFinding['verdict'] = 'good';
  if (policy.max_age === 0) {
    verdict = 'bad';
    notes.push('max-age=0 tells browsers to forget the HSTS policy (RFC 6797 §6.1.1)');
  } else if (policy.max_age < HSTS_MIN_EFFECTIVE_MAX_AGE) {
    verdict = 'weak';
    notes.push(`max-age ${policy.max_age} s is shorter than six months (${HSTS_MIN_EFFECTIVE_MAX_AGE} s)`);
  }
  if (!policy.include_subdomains) notes.push('without includeSubDomains, subdomains are not covered');
  return { present: true, value, verdict, notes, ...policy };
}

export type CheckStatus = 'pass' | 'fail' | 'unverified';

export interface PreloadCheck {
  requirement: string;
  status: CheckStatus;
  detail: string;
}

export interface PreloadEligibility {
  /** True when no check failed; `unverified` checks (which we cannot see from outside) do not count. */
  eligible: boolean;
  checks: PreloadCheck[];
}

/** What the inspector saw, as far as the preload rules need it. */
export interface PreloadFacts {
  host: string;
  /** An IP literal target: the preload list holds names only. */
  literal: boolean;
  /** The first response to https://HOST/ (possibly a redirect); undefined when HTTPS failed. */
  firstHttps?: { status: number; stsLines: readonly string[]; certificateValid: boolean };
  /** The first response to http://HOST/, or how that request failed. */
  firstHttp:
    | { kind: 'response'; status: number; location: string | null }
    | { kind: 'failed'; stage: string; notListening: boolean };
}

/**
 * hstspreload.org's submission requirements (https://hstspreload.org/#submission-requirements):
 *  1. serve a valid certificate;
 *  2. redirect from HTTP to HTTPS on the same host, if listening on port 80;
 *  3. serve all subdomains over HTTPS (not verifiable from one host: unverified);
 *  4. on the base domain, an HSTS header on HTTPS responses with max-age of at
 *     least one year, includeSubDomains and preload; when the HTTPS site
 *     redirects, the redirect itself must carry the header.
 * Only registrable domains can be submitted: a subdomain fails, naming the
 * registrable domain to submit instead, and so does a public suffix itself
 * (hstspreload's domain.is_subdomain and domain.format.public_suffix, decided
 * by Go's publicsuffix package, which carries the private section of the list
 * as our organizationalDomain does). IP literals fail: the list holds names.
 */
export function hstsPreloadEligibility(facts: PreloadFacts): PreloadEligibility {
  const checks: PreloadCheck[] = [];
  const add = (requirement: string, status: CheckStatus, detail: string) =>
    checks.push({ requirement, status, detail });

  if (facts.literal) add('domain name', 'fail', 'the preload list holds domain names, not IP addresses');
  else addRegistrable(facts.host, add);

  const https = facts.firstHttps;
  if (!https) add('valid certificate', 'fail', `https://${facts.host}/ gave no response`);
  else if (https.certificateValid) add('valid certificate', 'pass', 'the certificate verified');
  else add('valid certificate', 'fail', 'the certificate did not verify');

  const http = facts.firstHttp;
  if (http.kind === 'failed') {
    if (http.notListening) add('HTTP redirects to HTTPS', 'pass', 'nothing listens on port 80');
    else add('HTTP redirects to HTTPS', 'unverified', `http://${facts.host}/ failed (${http.stage})`);
  } else {
    const target = http.location ? safeUrl(http.location) : undefined;
    if (http.status < 300 || http.status > 399 || !target) {
      add(
        'HTTP redirects to HTTPS',
        'fail',
        `http://${facts.host}/ answers ${http.status} without redirecting`,
      );
    } else if (target.protocol !== 'https:') {
      add(
        'HTTP redirects to HTTPS',
        'fail',
        `http://${facts.host}/ redirects to ${target.protocol}//${target.host}`,
      );
    } else if (target.hostname.toLowerCase().replace(/^\[|\]$/g, '') !== facts.host) {
      add(
        'HTTP redirects to HTTPS',
        'fail',
        `http://${facts.host}/ must redirect to https://${facts.host} first, not to ${target.host}`,
      );
    } else {
      add('HTTP redirects to HTTPS', 'pass', `redirects to ${target.origin}`);
    }
  }

  add('all subdomains serve HTTPS', 'unverified', 'cannot be seen from one host');

  const parsed = https && https.stsLines.length > 0 ? parseHsts(https.stsLines[0] as string) : undefined;
  if (!https) {
    add('HSTS header', 'fail', 'no HTTPS response');
  } else if (!parsed) {
    add('HSTS header', 'fail', `https://${facts.host}/ (status ${https.status}) sends no HSTS header`);
  } else if (!parsed.ok) {
    add('HSTS header', 'fail', `the header is invalid: ${parsed.error}`);
  } else {
    const p = parsed.policy;
    add(
      'max-age of at least one year',
      p.max_age >= HSTS_PRELOAD_MIN_MAX_AGE ? 'pass' : 'fail',
      `max-age=${p.max_age} (needs ${HSTS_PRELOAD_MIN_MAX_AGE})`,
    );
    add(
      'includeSubDomains',
      p.include_subdomains ? 'pass' : 'fail',
      p.include_subdomains ? 'present' : 'absent',
    );
    add('preload directive', p.preload ? 'pass' : 'fail', p.preload ? 'present' : 'absent');
  }
  return { eligible: checks.every((c) => c.status !== 'fail'), checks };
}

function addRegistrable(
  host: string,
  add: (requirement: string, status: CheckStatus, detail: string) => void,
) {
  const registrable = organizationalDomain(host);
  if (registrable === null) {
    add(
      'registrable domain',
      'fail',
      `${host} is a public suffix (https://publicsuffix.org/), which cannot be submitted`,
    );
  } else if (registrable !== host) {
    add(
      'registrable domain',
      'fail',
      `${host} is a subdomain: only registrable domains can be submitted, so submit ${registrable} (its policy then covers ${host} through includeSubDomains)`,
    );
  } else {
    add('registrable domain', 'pass', `${host} is a registrable domain (Public Suffix List)`);
  }
}

function safeUrl(s: string): URL | undefined {
  try {
    return new URL(s);
  } catch {
    return undefined;
  }
}
