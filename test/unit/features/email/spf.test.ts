/**
 * The email-security check's SPF verdict: its status and findings for how a
 * domain's record ends, no record, and a DNS failure in the tree.
 */
import { describe, expect, it } from 'vitest';
import { createMailDns } from '../../../../src/features/email/mail-dns.js';
import { evaluateSpf } from '../../../../src/features/email/spf.js';
import { makeZone, TLD_ZONE, zoneResolver } from './zone-resolver.js';

const Z = 'spf.test';
function evaluate(rows: [string, string, unknown][], domain = Z, fail?: (name: string) => boolean) {
  const dns = createMailDns(zoneResolver([TLD_ZONE, makeZone(Z, rows)], { fail: fail && ((n) => fail(n)) }));
  return evaluateSpf(domain, dns);
}

describe('the SPF check: status and findings (RFC 7208 §4.7, §5.1, §8.2, §2.6.6)', () => {
  it.each([
    [
      'v=spf1 mx',
      null,
      'warning',
      'The record ends without "all" or "redirect": unlisted hosts get the default result, neutral.',
    ],
    [
      'v=spf1 mx ?all',
      '?all',
      'warning',
      '"?all" (neutral) gives receivers no instruction for unlisted hosts.',
    ],
    ['v=spf1 +all', '+all', 'error', '"+all" authorizes every host on the Internet to send as this domain.'],
  ])('%s fails: %s', async (record, all, severity, message) => {
    const result = await evaluate([
      [Z, 'TXT', record],
      [Z, 'MX', { preference: 10, exchange: 'mx.spf.test' }],
    ]);
    expect(result).toMatchObject({ effectiveAll: all, status: 'fail', permerror: false });
    expect(result.findings).toContainEqual(expect.objectContaining({ severity, message }));
  });

  it('no SPF record: state none, fail', async () => {
    const result = await evaluate([[Z, 'TXT', 'google-site-verification=abc']]);
    expect(result).toMatchObject({ state: 'none', recordCount: 0, status: 'fail', tree: [] });
  });

  it('a DNS failure anywhere in the tree is a temperror: status error', async () => {
    const result = await evaluate(
      [
        [Z, 'TXT', 'v=spf1 include:slow.spf.test -all'],
        ['slow.spf.test', 'TXT', 'v=spf1 -all'],
      ],
      Z,
      (name) => name === 'slow.spf.test',
    );
    expect(result).toMatchObject({ state: 'error', status: 'error', permerror: false });
    expect(result.tree[1]).toMatchObject({
      state: 'error',
      problem: 'DNS lookup failed: timeout: no answer within 5000 ms',
    });
  });
});
