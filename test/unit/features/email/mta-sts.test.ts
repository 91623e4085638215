/**
 * MTA-STS (RFC 8461): the TXT record, the policy body, MX pattern matching,
 * and how a fetched (or failed) policy is judged. The fetch itself is the
 * integration tests' business; here the response is handed in.
 */
import { describe, expect, it } from 'vitest';
import {
  evaluateMtaSts,
  type MtaStsInput,
  mxPatternMatches,
  parseMtaStsPolicy,
  parseMtaStsRecord,
} from '../../../../src/features/email/mta-sts.js';
import type { DnsOutcome, FetchOutcome } from '../../../../src/features/email/types.js';

const txt = (...records: string[]): DnsOutcome<string> => ({
  kind: 'answer',
  rcode: 'NOERROR',
  records,
  aliases: [],
});
const served = (
  body: string,
  status = 200,
  headers: Record<string, string> = { 'content-type': 'text/plain' },
): FetchOutcome => ({
  ok: true,
  response: { status, headers, body: Buffer.from(body), truncated: false },
});
const POLICY =
  'version: STSv1\nmode: enforce\nmx: mail.example.test\nmx: *.backup.example.test\nmax_age: 604800\n';

function evaluate(overrides: Partial<MtaStsInput>) {
  return evaluateMtaSts({
    domain: 'example.test',
    txt: txt('v=STSv1; id=20240101'),
    fetched: served(POLICY),
    mxHosts: ['mail.example.test', 'mx1.backup.example.test'],
    ...overrides,
  });
}

describe('MTA-STS TXT record (RFC 8461 §3.1)', () => {
  it.each([
    [['v=STSv1; id=20240101;'], 'ok', '20240101'],
    [['v=STSv1;id=abc'], 'ok', 'abc'],
    [['something else'], 'none', null],
    [['v=STSv1; id=2024-01-01'], 'invalid', null],
    [['v=STSv1; id='], 'invalid', null],
    [[`v=STSv1; id=${'a'.repeat(33)}`], 'invalid', null],
    [['v=STSv1;'], 'invalid', null],
    [['v=STSv1; id=a', 'v=STSv1; id=b'], 'invalid', null],
    [['V=STSV1; id=a'], 'none', null],
  ])('%j → %s', (records, state, id) => {
    expect(parseMtaStsRecord(records)).toMatchObject({ state, id });
  });
});

describe('MTA-STS policy (RFC 8461 §3.2)', () => {
  it('parses LF and CRLF policies, keeping every mx pattern', () => {
    const crlf = parseMtaStsPolicy(POLICY.replace(/\n/g, '\r\n'));
    expect(crlf).toMatchObject({
      valid: true,
      policy: {
        version: 'STSv1',
        mode: 'enforce',
        max_age: 604800,
        mx: ['mail.example.test', '*.backup.example.test'],
      },
      findings: [],
    });
  });

  it.each([
    ['mode: enforce\nmx: a.example.test\nmax_age: 86400', 'The policy has no "version: STSv1" line.'],
    ['version: STSv2\nmode: enforce\nmx: a.example.test\nmax_age: 86400', 'version: STSv2 is not STSv1.'],
    [
      'version: STSv1\nmode: strict\nmx: a.example.test\nmax_age: 86400',
      'mode: strict is not enforce, testing or none.',
    ],
    [
      'version: STSv1\nmode: enforce\nmx: a.example.test\nmax_age: 31557601',
      'max_age: 31557601 must be an integer from 0 to 31557600.',
    ],
    [
      'version: STSv1\nmode: enforce\nmx: a.example.test\nmax_age: -1',
      'max_age: -1 must be an integer from 0 to 31557600.',
    ],
    ['version: STSv1\nmode: enforce\nmax_age: 86400', 'mode enforce needs at least one mx pattern.'],
    [
      'version: STSv1\nmode: enforce\nmx: **.example.test\nmax_age: 86400',
      'mx: **.example.test is not a host name or "*." pattern.',
    ],
    ['version: STSv1\nmode: testing\nmx: a.example.test', 'The policy has no max_age.'],
  ])('%j is invalid: %s', (body, message) => {
    const parsed = parseMtaStsPolicy(body);
    expect(parsed.valid).toBe(false);
    expect(parsed.findings.map((f) => f.message)).toContain(message);
  });

  it('mode none needs no mx; a short max_age is noted; duplicates keep the first value', () => {
    expect(parseMtaStsPolicy('version: STSv1\nmode: none\nmax_age: 0').valid).toBe(true);
    const parsed = parseMtaStsPolicy(
      'version: STSv1\nmode: testing\nmode: enforce\nmx: a.example.test\nmax_age: 3600\nfuture: x',
    );
    expect(parsed.policy.mode).toBe('testing');
    expect(parsed.findings.map((f) => `${f.severity}: ${f.message}`)).toEqual([
      'warning: "mode" appears more than once; the first value is used.',
      'info: Unknown field "future" is ignored.',
      'info: max_age 3600 s is under a week; RFC 8461 expects weeks or more so a policy outlives an attack.',
    ]);
  });
});

describe('MX patterns (RFC 8461 §4.1): "*." stands for exactly one leftmost label', () => {
  it.each([
    ['mail.example.test', 'mail.example.test', true],
    ['mail.example.test', 'MAIL.Example.Test.', true],
    ['*.example.test', 'mail.example.test', true],
    ['*.example.test', 'example.test', false],
    ['*.example.test', 'a.mail.example.test', false],
    ['*.example.test', 'mailexample.test', false],
    ['mail.example.test', 'mail2.example.test', false],
  ])('%s vs %s → %s', (pattern, host, matches) => {
    expect(mxPatternMatches(pattern, host)).toBe(matches);
  });
});

describe('MTA-STS evaluation', () => {
  it('enforce covering every MX: pass', () => {
    expect(evaluate({})).toMatchObject({
      state: 'policy',
      status: 'pass',
      allMxCovered: true,
      http_status: 200,
    });
  });

  it('an uncovered MX in testing mode is a warning, in enforce a failure', () => {
    const hosts = { mxHosts: ['mail.example.test', 'other.example.net'] };
    expect(evaluate(hosts)).toMatchObject({
      status: 'fail',
      allMxCovered: false,
      uncovered_mx: ['other.example.net'],
    });
    const testing = evaluate({ ...hosts, fetched: served(POLICY.replace('enforce', 'testing')) });
    expect(testing).toMatchObject({ status: 'warn', allMxCovered: false });
    expect(testing.findings[0]).toMatchObject({ severity: 'warning' });
  });

  it.each([
    [
      served('', 301, { location: 'https://elsewhere.example.test/policy' }),
      'https://mta-sts.example.test/.well-known/mta-sts.txt answered 301 (redirect to https://elsewhere.example.test/policy); redirects must not be followed.',
    ],
    [
      served('not found', 404),
      'https://mta-sts.example.test/.well-known/mta-sts.txt answered HTTP 404; only 200 is a policy.',
    ],
    [
      { ok: false, reason: 'tls handshake: certificate has expired', temporary: false } as FetchOutcome,
      'Fetching https://mta-sts.example.test/.well-known/mta-sts.txt failed: tls handshake: certificate has expired.',
    ],
    [
      {
        ok: true,
        response: { status: 200, headers: {}, body: Buffer.alloc(10), truncated: true },
      } as FetchOutcome,
      'The policy is larger than 64 KB.',
    ],
  ])('a policy that cannot be used fails: %#', (fetched, message) => {
    const result = evaluate({ fetched });
    expect(result).toMatchObject({ state: 'invalid', status: 'fail' });
    expect(result.findings.map((f) => f.message)).toEqual([message]);
  });

  it('a DNS failure resolving the policy host is an error, not a failure', () => {
    expect(evaluate({ fetched: { ok: false, reason: 'DNS lookup failed', temporary: true } })).toMatchObject({
      state: 'error',
      status: 'error',
    });
  });

  it('warns when the policy is not served as text/plain', () => {
    const result = evaluate({ fetched: served(POLICY, 200, { 'content-type': 'text/html' }) });
    expect(result.status).toBe('warn');
    expect(result.findings.map((f) => f.message)).toEqual([
      'The policy is served as "text/html", not text/plain.',
    ]);
  });
});
