/**
 * HSTS per RFC 6797 §6.1 and the hstspreload.org submission rules: one row
 * per grammar rule, each edge of the verdict thresholds, each preload check.
 */
import { describe, expect, it } from 'vitest';
import {
  evaluateHsts,
  HSTS_MIN_EFFECTIVE_MAX_AGE,
  HSTS_PRELOAD_MIN_MAX_AGE,
  hstsPreloadEligibility,
  type PreloadFacts,
  parseHsts,
} from '../../../../src/features/inspect/hsts.js';

describe('parseHsts (RFC 6797 §6.1)', () => {
  it.each([
    ['max-age=31536000', { max_age: 31536000, include_subdomains: false, preload: false }],
    [
      'max-age=63072000; includeSubDomains; preload',
      { max_age: 63072000, include_subdomains: true, preload: true },
    ],
    // §6.1 rule 1: order is not significant; rule 3: names are case-insensitive.
    ['PRELOAD;INCLUDESUBDOMAINS;MAX-AGE=10', { max_age: 10, include_subdomains: true, preload: true }],
    // directive-value may be a quoted-string (§6.1).
    ['max-age="600"', { max_age: 600, include_subdomains: false, preload: false }],
    // [ directive ] *( ";" [ directive ] ): empty directives and whitespace are fine.
    [' ; max-age=5 ;; includeSubDomains ; ', { max_age: 5, include_subdomains: true, preload: false }],
    // §6.1 rule 4: unknown directives are ignored.
    ['max-age=5; foo=bar; baz', { max_age: 5, include_subdomains: false, preload: false }],
  ])('%s', (value, policy) => {
    const parsed = parseHsts(value);
    expect(parsed.ok).toBe(true);
    if (parsed.ok) expect(parsed.policy).toEqual(policy);
  });

  it.each([
    ['includeSubDomains', /max-age directive is missing/],
    ['', /max-age directive is missing/],
    ['max-age=1; max-age=2', /more than once/],
    ['max-age=1; includeSubDomains; includesubdomains', /more than once/],
    ['max-age=-1', /number of seconds/],
    ['max-age=1.5', /number of seconds/],
    ['max-age', /number of seconds/],
    ['max-age="12', /malformed value/],
    ['max-age=1; includeSubDomains=yes', /takes no value/],
    ['max age=1', /not a valid directive name/],
  ])('invalid: %s', (value, error) => {
    const parsed = parseHsts(value);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.error).toMatch(error);
  });

  it('notes unknown directives without failing', () => {
    const parsed = parseHsts('max-age=5; report-uri="x"');
    expect(parsed.ok && parsed.notes).toEqual(['unknown directive report-uri is ignored']);
  });
});

describe('evaluateHsts', () => {
  it('is missing when absent', () => {
    expect(evaluateHsts([], { https: true })).toMatchObject({
      present: false,
      verdict: 'missing',
      max_age: null,
    });
  });

  it('is good at six months and weak one second below', () => {
    expect(evaluateHsts([`max-age=${HSTS_MIN_EFFECTIVE_MAX_AGE}`], { https: true }).verdict).toBe('good');
    expect(evaluateHsts([`max-age=${HSTS_MIN_EFFECTIVE_MAX_AGE - 1}`], { https: true }).verdict).toBe('weak');
  });

  it('is bad for max-age=0, which deletes the policy (§6.1.1)', () => {
    const f = evaluateHsts(['max-age=0'], { https: true });
    expect(f.verdict).toBe('bad');
    expect(f.notes.join(' ')).toMatch(/forget/);
  });

  it('is bad when malformed: browsers ignore the whole header', () => {
    expect(evaluateHsts(['max-age=1; max-age=1'], { https: true })).toMatchObject({
      verdict: 'bad',
      max_age: null,
    });
  });

  it('uses only the first of several header fields (§8.1)', () => {
    const f = evaluateHsts(['max-age=31536000', 'max-age=0'], { https: true });
    expect(f).toMatchObject({ verdict: 'good', max_age: 31536000, value: 'max-age=31536000, max-age=0' });
    expect(f.notes[0]).toMatch(/only the first/);
  });

  it('counts for nothing over plain HTTP (§8.1)', () => {
    expect(evaluateHsts(['max-age=31536000'], { https: false })).toMatchObject({
      present: true,
      verdict: 'bad',
    });
  });
});

describe('hstsPreloadEligibility (hstspreload.org)', () => {
  const eligible: PreloadFacts = {
    host: 'example.com',
    literal: false,
    firstHttps: {
      status: 301,
      stsLines: [`max-age=${HSTS_PRELOAD_MIN_MAX_AGE}; includeSubDomains; preload`],
      certificateValid: true,
    },
    firstHttp: { kind: 'response', status: 301, location: 'https://example.com/' },
  };
  const status = (facts: PreloadFacts, requirement: string) =>
    hstsPreloadEligibility(facts).checks.find((c) => c.requirement === requirement)?.status;

  it('accepts a site meeting every rule, leaving the invisible ones unverified', () => {
    const result = hstsPreloadEligibility(eligible);
    expect(result.eligible).toBe(true);
    expect(result.checks.filter((c) => c.status === 'unverified').map((c) => c.requirement)).toEqual([
      'all subdomains serve HTTPS',
    ]);
    expect(result.checks[0]).toEqual({
      requirement: 'registrable domain',
      status: 'pass',
      detail: 'example.com is a registrable domain (Public Suffix List)',
    });
  });

  it('refuses a subdomain, naming the registrable domain to submit (Public Suffix List)', () => {
    const www = hstsPreloadEligibility({
      ...eligible,
      host: 'www.example.co.uk',
      firstHttp: { kind: 'response', status: 301, location: 'https://www.example.co.uk/' },
    });
    expect(www.eligible).toBe(false);
    expect(www.checks.filter((c) => c.status === 'fail')).toEqual([
      {
        requirement: 'registrable domain',
        status: 'fail',
        detail:
          'www.example.co.uk is a subdomain: only registrable domains can be submitted, so submit example.co.uk (its policy then covers www.example.co.uk through includeSubDomains)',
      },
    ]);
    // The private section counts, as in hstspreload.org's own list: a user's github.io site is registrable.
    expect(status({ ...eligible, host: 'me.github.io' }, 'registrable domain')).toBe('pass');
    expect(status({ ...eligible, host: 'example.co.uk' }, 'registrable domain')).toBe('pass');
  });

  it('refuses a public suffix itself', () => {
    expect(hstsPreloadEligibility({ ...eligible, host: 'github.io' }).checks[0]).toEqual({
      requirement: 'registrable domain',
      status: 'fail',
      detail: 'github.io is a public suffix (https://publicsuffix.org/), which cannot be submitted',
    });
  });

  it('needs a max-age of a year, includeSubDomains and preload', () => {
    const with_ = (sts: string) => ({
      ...eligible,
      firstHttps: { ...eligible.firstHttps!, stsLines: [sts] },
    });
    expect(
      status(
        with_(`max-age=${HSTS_PRELOAD_MIN_MAX_AGE - 1}; includeSubDomains; preload`),
        'max-age of at least one year',
      ),
    ).toBe('fail');
    expect(status(with_('max-age=31536000; preload'), 'includeSubDomains')).toBe('fail');
    expect(status(with_('max-age=31536000; includeSubDomains'), 'preload directive')).toBe('fail');
    expect(hstsPreloadEligibility(with_('max-age=31536000; includeSubDomains')).eligible).toBe(false);
  });

  it('needs the header on the first HTTPS response, even a redirect', () => {
    const facts = { ...eligible, firstHttps: { status: 301, stsLines: [], certificateValid: true } };
    expect(status(facts, 'HSTS header')).toBe('fail');
  });

  it('needs a valid certificate', () => {
    const facts = { ...eligible, firstHttps: { ...eligible.firstHttps!, certificateValid: false } };
    expect(status(facts, 'valid certificate')).toBe('fail');
  });

  it('needs http:// to redirect to https:// on the same host first', () => {
    const to = (location: string) => ({
      ...eligible,
      firstHttp: { kind: 'response' as const, status: 301, location },
    });
    expect(status(to('https://www.example.com/'), 'HTTP redirects to HTTPS')).toBe('fail');
    expect(status(to('http://example.com/x'), 'HTTP redirects to HTTPS')).toBe('fail');
    expect(status(to('https://EXAMPLE.com/'), 'HTTP redirects to HTTPS')).toBe('pass');
    const noRedirect = { ...eligible, firstHttp: { kind: 'response' as const, status: 200, location: null } };
    expect(status(noRedirect, 'HTTP redirects to HTTPS')).toBe('fail');
  });

  it('passes the redirect rule when nothing listens on port 80, and leaves other failures unverified', () => {
    const refused = {
      ...eligible,
      firstHttp: { kind: 'failed' as const, stage: 'connect', notListening: true },
    };
    expect(status(refused, 'HTTP redirects to HTTPS')).toBe('pass');
    const timeout = {
      ...eligible,
      firstHttp: { kind: 'failed' as const, stage: 'connect', notListening: false },
    };
    expect(status(timeout, 'HTTP redirects to HTTPS')).toBe('unverified');
  });

  it('refuses IP literals and hosts without HTTPS', () => {
    expect(hstsPreloadEligibility({ ...eligible, host: '192.0.2.1', literal: true }).eligible).toBe(false);
    const { firstHttps: _, ...noHttps } = eligible;
    expect(hstsPreloadEligibility(noHttps).eligible).toBe(false);
  });
});
