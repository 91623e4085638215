/**
 * CSP3 parsing (§2.2.1, §2.2.2), the unsafe-inline/unsafe-eval flags with the
 * nonce/hash/strict-dynamic exceptions (§6.7.3.3, §8.2), multiple policies,
 * and frame-ancestors.
 */
import { describe, expect, it } from 'vitest';
import {
  allowsAllInline,
  allowsAnyScriptHost,
  evaluateCsp,
  evaluateFrameAncestors,
  parseCspHeader,
  parseSerializedCsp,
} from '../../../../src/features/inspect/csp.js';

describe('parseSerializedCsp (CSP3 §2.2.1)', () => {
  it('splits on ";", lower-cases names, keeps values as written, first duplicate wins', () => {
    const p = parseSerializedCsp(
      " Default-Src 'self' ;;script-src  https://A.example  'NONCE-abc'; default-src *; img-src",
    );
    expect(p.directives).toEqual({
      'default-src': ["'self'"],
      'script-src': ['https://A.example', "'NONCE-abc'"],
      'img-src': [],
    });
  });

  it('skips a directive with non-ASCII characters', () => {
    expect(parseSerializedCsp("script-src 'self' é; img-src 'self'").directives).toEqual({
      'img-src': ["'self'"],
    });
  });
});

describe('parseCspHeader (CSP3 §2.2.2)', () => {
  it('makes every comma-separated member of every field line a policy, dropping empty ones', () => {
    const policies = parseCspHeader(["default-src 'self', script-src 'none'", ' ; ', 'img-src *']);
    expect(policies.map((p) => Object.keys(p.directives))).toEqual([
      ['default-src'],
      ['script-src'],
      ['img-src'],
    ]);
  });
});

describe('allowsAllInline (CSP3 §6.7.3.3)', () => {
  it.each([
    [["'unsafe-inline'"], 'script', true],
    [["'UNSAFE-INLINE'"], 'script', true],
    [["'unsafe-inline'", "'nonce-r4nd0m'"], 'script', false],
    [["'unsafe-inline'", "'sha256-abc='"], 'script', false],
    [["'unsafe-inline'", "'strict-dynamic'"], 'script', false],
    [["'unsafe-inline'", "'strict-dynamic'"], 'style', true],
    [["'self'"], 'script', false],
  ] as const)('%j (%s) → %s', (sources, type, expected) => {
    expect(allowsAllInline(sources, type)).toBe(expected);
  });

  it('any-host script sources are ignored under strict-dynamic (§8.2)', () => {
    expect(allowsAnyScriptHost(['https:'])).toBe(true);
    expect(allowsAnyScriptHost(['*'])).toBe(true);
    expect(allowsAnyScriptHost(['https:', "'strict-dynamic'", "'nonce-x'"])).toBe(false);
    expect(allowsAnyScriptHost(['https://cdn.example'])).toBe(false);
  });
});

describe('evaluateCsp', () => {
  it('is missing without the header, noting a report-only policy', () => {
    const f = evaluateCsp([], ["default-src 'self'"]);
    expect(f).toMatchObject({ present: false, verdict: 'missing', report_only: "default-src 'self'" });
    expect(f.notes.join(' ')).toMatch(/Report-Only/);
  });

  it('is good for a strict policy', () => {
    const f = evaluateCsp(
      ["default-src 'self'; object-src 'none'; base-uri 'self'; frame-ancestors 'none'"],
      [],
    );
    expect(f).toMatchObject({ verdict: 'good', unsafe_inline: false, unsafe_eval: false, flags: [] });
    expect(f.notes).toEqual([]);
  });

  it("flags 'unsafe-inline' and 'unsafe-eval' in script-src", () => {
    const f = evaluateCsp(["default-src 'self'; script-src 'self' 'unsafe-inline' 'unsafe-eval'"], []);
    expect(f).toMatchObject({ verdict: 'weak', unsafe_inline: true, unsafe_eval: true });
    expect(f.flags).toEqual([
      { policy: 0, directive: 'script-src', keyword: "'unsafe-inline'", effective: true },
      { policy: 0, directive: 'script-src', keyword: "'unsafe-eval'", effective: true },
    ]);
  });

  it('falls back to default-src for scripts', () => {
    expect(evaluateCsp(["default-src 'self' 'unsafe-inline'"], []).unsafe_inline).toBe(true);
    // script-src present: default-src is not consulted for scripts.
    expect(evaluateCsp(["default-src 'unsafe-inline'; script-src 'self'"], []).unsafe_inline).toBe(false);
  });

  it("reports 'unsafe-inline' beside a nonce as present but not effective", () => {
    const f = evaluateCsp(
      ["script-src 'nonce-abc' 'unsafe-inline' 'strict-dynamic'; object-src 'none'; base-uri 'none'"],
      [],
    );
    expect(f).toMatchObject({ verdict: 'good', unsafe_inline: false });
    expect(f.flags).toEqual([
      { policy: 0, directive: 'script-src', keyword: "'unsafe-inline'", effective: false },
    ]);
  });

  it('is weak when nothing restricts scripts', () => {
    const f = evaluateCsp(["img-src 'self'; frame-ancestors 'none'"], []);
    expect(f).toMatchObject({ verdict: 'weak', unsafe_inline: true, unsafe_eval: true });
    expect(f.notes[0]).toMatch(/not restricted/);
  });

  it('is weak when script sources allow any host', () => {
    expect(evaluateCsp(["script-src https:; object-src 'none'"], []).verdict).toBe('weak');
  });

  it('with two policies, one strict policy is enough (a load must pass both)', () => {
    const f = evaluateCsp(["script-src 'unsafe-inline' 'unsafe-eval'", "script-src 'self'"], []);
    expect(f).toMatchObject({ unsafe_inline: false, unsafe_eval: false, verdict: 'good' });
    expect(f.policies).toHaveLength(2);
  });

  it('notes style unsafe-inline, a missing object-src and nonces without base-uri', () => {
    const f = evaluateCsp(["script-src 'nonce-a'; style-src 'unsafe-inline'"], []);
    expect(f.verdict).toBe('good');
    expect(f.notes.join('\n')).toMatch(/styles allow 'unsafe-inline'/);
    expect(f.notes.join('\n')).toMatch(/object-src is not 'none'/);
    expect(f.notes.join('\n')).toMatch(/base-uri/);
  });

  it('is bad when the header holds no directive', () => {
    expect(evaluateCsp([' ; '], [])).toMatchObject({ present: true, verdict: 'bad' });
  });
});

describe('evaluateFrameAncestors', () => {
  const policies = (...lines: string[]) => parseCspHeader(lines);
  it.each([
    ["frame-ancestors 'none'", 'good'],
    ["frame-ancestors 'self' https://partner.example", 'good'],
    ['frame-ancestors', 'good'], // an empty source list is 'none'
    ['frame-ancestors *', 'weak'],
    ['frame-ancestors https:', 'weak'],
  ])('%s → %s', (line, verdict) => {
    expect(evaluateFrameAncestors(policies(line)).verdict).toBe(verdict);
  });

  it('does not fall back to default-src', () => {
    expect(evaluateFrameAncestors(policies("default-src 'none'")).verdict).toBe('missing');
  });
});
