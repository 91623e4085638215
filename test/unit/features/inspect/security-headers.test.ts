/**
 * The remaining security headers, each against the spec that defines it, and
 * the grade rules of docs/security-headers.md.
 */
import { describe, expect, it } from 'vitest';
import { evaluateFrameAncestors, parseCspHeader } from '../../../../src/features/inspect/csp.js';
import {
  evaluateCoep,
  evaluateContentTypeOptions,
  evaluateCoop,
  evaluateCorp,
  evaluateFrameOptions,
  evaluatePermissionsPolicy,
  evaluateReferrerPolicy,
  evaluateSecurityHeaders,
  GRADE_WEIGHTS,
} from '../../../../src/features/inspect/security-headers.js';

describe('X-Content-Type-Options (Fetch "determine nosniff")', () => {
  it.each([
    [['nosniff'], 'good'],
    [['NoSniff'], 'good'],
    [['nosniff, foo'], 'good'],
    [['foo, nosniff'], 'bad'],
    [['sniff'], 'bad'],
    [[], 'missing'],
  ])('%j → %s', (lines, verdict) => {
    expect(evaluateContentTypeOptions(lines).verdict).toBe(verdict);
  });
});

describe('X-Frame-Options (HTML processing model)', () => {
  const none = evaluateFrameAncestors([]);
  it.each([
    [['DENY'], 'good'],
    [['sameorigin'], 'good'],
    [['deny, DENY'], 'good'], // one value after lower-casing into a set
    [['deny', 'sameorigin'], 'good'], // conflicting: framing refused altogether
    [['ALLOW-FROM https://a.example'], 'bad'],
    [['allowall'], 'bad'],
    [['foo, bar'], 'bad'],
    [[], 'missing'],
  ])('%j → %s', (lines, verdict) => {
    expect(evaluateFrameOptions(lines, none).verdict).toBe(verdict);
  });

  it('says when CSP frame-ancestors supersedes it', () => {
    const fa = evaluateFrameAncestors(parseCspHeader(["frame-ancestors 'none'"]));
    expect(evaluateFrameOptions(['DENY'], fa).notes.join(' ')).toMatch(/superseded/);
    expect(evaluateFrameOptions([], fa).notes.join(' ')).toMatch(/not needed/);
  });
});

describe('Referrer-Policy (W3C Referrer Policy §8.1)', () => {
  it.each([
    ['no-referrer', 'good', 'no-referrer'],
    ['strict-origin-when-cross-origin', 'good', 'strict-origin-when-cross-origin'],
    ['same-origin', 'good', 'same-origin'],
    ['strict-origin', 'good', 'strict-origin'],
    ['origin', 'weak', 'origin'],
    ['origin-when-cross-origin', 'weak', 'origin-when-cross-origin'],
    ['no-referrer-when-downgrade', 'weak', 'no-referrer-when-downgrade'],
    ['unsafe-url', 'bad', 'unsafe-url'],
    // The last token browsers know wins; unknown ones are fallbacks for other browsers.
    ['no-referrer, strict-origin-when-cross-origin', 'good', 'strict-origin-when-cross-origin'],
    ['strict-origin, unsafe-url, made-up', 'bad', 'unsafe-url'],
    ['made-up', 'bad', null],
    ['NO-REFERRER', 'bad', null],
  ])('%s → %s', (value, verdict, policy) => {
    expect(evaluateReferrerPolicy([value])).toMatchObject({ verdict, policy });
  });

  it('is missing with the browser default named', () => {
    expect(evaluateReferrerPolicy([]).notes[0]).toMatch(/strict-origin-when-cross-origin/);
  });
});

describe('Permissions-Policy (structured-field dictionary)', () => {
  it('lists every feature with its allowlist', () => {
    const f = evaluatePermissionsPolicy(
      ['camera=(), geolocation=(self "https://maps.example")', 'microphone=*'],
      [],
    );
    expect(f).toMatchObject({ verdict: 'good' });
    expect(f.features).toEqual({
      camera: [],
      geolocation: ['self', '"https://maps.example"'],
      microphone: ['*'],
    });
    expect(f.notes).toEqual(['microphone is allowed for every origin (*)']);
  });

  it('is bad when it does not parse (browsers drop it whole)', () => {
    expect(evaluatePermissionsPolicy(['camera=(self', 'x'], []).verdict).toBe('bad');
    // The legacy Feature-Policy syntax is not a dictionary.
    expect(evaluatePermissionsPolicy(["camera 'none'"], []).verdict).toBe('bad');
  });

  it('writes each allowlist member back in field syntax, a later duplicate key winning (RFC 9651 §4.2.2)', () => {
    const f = evaluatePermissionsPolicy(['camera=(), camera=("a\\"b" self), usb, fullscreen=?0'], []);
    expect(f.verdict).toBe('good');
    expect(f.features).toEqual({ camera: ['"a\\"b"', 'self'], usb: ['?1'], fullscreen: ['?0'] });
  });

  it.each([
    'Camera=()',
    'camera=(), ',
    'camera=() x',
    'camera=(self,"a")',
    'camera=(self)junk',
    'camera=("\\x")',
    'camera=1234567890123456',
    'camera=1.2345',
    'camera=?2',
    // RFC 9651 §4.2.7: a byte sequence whose base64 does not decode fails the field.
    'camera=:a:',
  ])('is bad for %j, which is no dictionary', (value) => {
    expect(evaluatePermissionsPolicy([value], []).verdict).toBe('bad');
  });

  it('reads the RFC 9651 Date and Display String types instead of dropping the field', () => {
    // The Date last: structured-headers 2.1.0 reads a Date only at the end of the field value.
    const f = evaluatePermissionsPolicy(['geolocation=(%"caf%c3%a9"), camera=(self);since=@1700000000'], []);
    expect(f.verdict).toBe('good');
    expect(f.features).toEqual({ geolocation: ['%"caf%c3%a9"'], camera: ['self'] });
  });

  it('mentions a lone Feature-Policy header', () => {
    expect(evaluatePermissionsPolicy([], ["camera 'none'"]).notes[0]).toMatch(/deprecated Feature-Policy/);
  });
});

describe('COOP, COEP (HTML) and CORP (Fetch)', () => {
  it.each([
    [['same-origin'], 'good'],
    [['same-origin; report-to="r"'], 'good'],
    [['  same-origin  '], 'good'],
    [['same-origin; report-to="r"; since=@1700000000'], 'good'], // an RFC 9651 Date parameter
    [['same-origin; report-to="r'], 'bad'],
    [['same-origin unsafe-none'], 'bad'],
    [[''], 'bad'],
    [['same-origin-allow-popups'], 'weak'],
    [['noopener-allow-popups'], 'weak'],
    [['unsafe-none'], 'weak'],
    [['"same-origin"'], 'bad'], // a string, not a token
    [['same-origin', 'unsafe-none'], 'bad'],
    [[], 'missing'],
  ])('COOP %j → %s', (lines, verdict) => {
    expect(evaluateCoop(lines).verdict).toBe(verdict);
  });

  it.each([
    [['require-corp'], 'good'],
    [['credentialless'], 'good'],
    [['unsafe-none'], 'weak'],
    [['require_corp'], 'bad'],
  ])('COEP %j → %s', (lines, verdict) => {
    expect(evaluateCoep(lines).verdict).toBe(verdict);
  });

  it.each([
    [['same-origin'], 'good'],
    [['same-site'], 'good'],
    [['cross-origin'], 'weak'],
    [['Same-Origin'], 'bad'], // byte-for-byte comparison
    [['same-origin', 'same-site'], 'bad'],
  ])('CORP %j → %s', (lines, verdict) => {
    expect(evaluateCorp(lines).verdict).toBe(verdict);
  });
});

describe('grade', () => {
  const best = {
    'strict-transport-security': 'max-age=63072000; includeSubDomains; preload',
    'content-security-policy':
      "default-src 'self'; object-src 'none'; base-uri 'self'; frame-ancestors 'none'",
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
    'permissions-policy': 'camera=(), microphone=()',
    'cross-origin-opener-policy': 'same-origin',
  };

  it('weights add up to 100', () => {
    expect(Object.values(GRADE_WEIGHTS).reduce((a, b) => a + b, 0)).toBe(100);
  });

  it('gives A+ for every header good plus COOP same-origin', () => {
    const r = evaluateSecurityHeaders('https://a.example/', best);
    expect(r).toMatchObject({ score: 100, grade: 'A+', https: true, url: 'https://a.example/' });
    expect(r.grade_notes).toEqual([]);
  });

  it('gives A without COOP, saying what A+ needs', () => {
    const { 'cross-origin-opener-policy': _, ...rest } = best;
    const r = evaluateSecurityHeaders('https://a.example/', rest);
    expect(r.grade).toBe('A');
    expect(r.grade_notes).toEqual(['A+ needs Cross-Origin-Opener-Policy: same-origin as well']);
  });

  it('counts X-Frame-Options when frame-ancestors is absent', () => {
    const r = evaluateSecurityHeaders('https://a.example/', {
      ...best,
      'content-security-policy': "default-src 'self'; object-src 'none'",
      'x-frame-options': 'DENY',
    });
    expect(r.score).toBe(100);
  });

  it('gives half credit for a weak header: unsafe-inline costs 12.5 points → B', () => {
    const r = evaluateSecurityHeaders('https://a.example/', {
      ...best,
      'content-security-policy': "default-src 'self' 'unsafe-inline'; frame-ancestors 'none'",
    });
    expect(r).toMatchObject({ score: 87, grade: 'B' });
    expect(r.grade_notes).toContain('content_security_policy: half credit (25 points possible)');
  });

  // Scores move in steps of 2.5 and 5, so each row is the reachable score on one side of a floor.
  it.each([
    [90, 'A'],
    [87, 'B'],
    [75, 'B'],
    [72, 'C'],
    [60, 'C'],
    [57, 'D'],
    [40, 'D'],
    [37, 'F'],
  ])('boundaries: %i → %s', (score, grade) => {
    // Build a response worth exactly `score` points from the weights (25, 25, 15, 15, 10, 10) and weak halves.
    const combos = combinations();
    const headers = combos.get(score);
    expect(headers, `no header set worth ${score}`).toBeDefined();
    expect(evaluateSecurityHeaders('https://a.example/', headers ?? {})).toMatchObject({ score, grade });
  });

  it('gives F with no security headers at all', () => {
    expect(evaluateSecurityHeaders('https://a.example/', {})).toMatchObject({ score: 0, grade: 'F' });
  });

  it('caps a plain-HTTP response at D', () => {
    const r = evaluateSecurityHeaders('http://a.example/', best);
    expect(r.strict_transport_security.verdict).toBe('bad');
    expect(r).toMatchObject({ https: false, score: 75, grade: 'D' });
    expect(r.grade_notes.at(-1)).toMatch(/did not come over HTTPS/);
  });
});

/** Header sets keyed by the score they are worth, for the boundary rows. */
function combinations(): Map<number, Record<string, string>> {
  const options: Record<string, [number, Record<string, string>][]> = {
    hsts: [
      [0, {}],
      [12.5, { 'strict-transport-security': 'max-age=600' }],
      [25, { 'strict-transport-security': 'max-age=31536000' }],
    ],
    csp: [
      [0, {}],
      [12.5, { 'content-security-policy': "default-src 'self' 'unsafe-inline'" }],
      [25, { 'content-security-policy': "default-src 'self'" }],
    ],
    framing: [
      [0, {}],
      [15, { 'x-frame-options': 'DENY' }],
    ],
    xcto: [
      [0, {}],
      [15, { 'x-content-type-options': 'nosniff' }],
    ],
    referrer: [
      [0, {}],
      [5, { 'referrer-policy': 'origin' }],
      [10, { 'referrer-policy': 'no-referrer' }],
    ],
    pp: [
      [0, {}],
      [10, { 'permissions-policy': 'camera=()' }],
    ],
  };
  const out = new Map<number, Record<string, string>>();
  const walk = (keys: string[], points: number, headers: Record<string, string>) => {
    const [key, ...rest] = keys;
    if (key === undefined) {
      const score = Math.floor(points);
      if (!out.has(score)) out.set(score, headers);
      return;
    }
    for (const [p, h] of options[key] ?? []) walk(rest, points + p, { ...headers, ...h });
  };
  walk(Object.keys(options), 0, {});
  return out;
}
