/** MX (RFC 5321 §5.1, RFC 7505): presence, null MX, and whether each exchange resolves. */
import { describe, expect, it } from 'vitest';
import { createMailDns } from '../../../../src/features/email/mail-dns.js';
import { evaluateMx } from '../../../../src/features/email/mx.js';
import { makeZone, TLD_ZONE, zoneResolver } from './zone-resolver.js';

const Z = 'mx.test';
const run = (rows: [string, string, unknown][], domain = Z, fail?: (n: string) => boolean) =>
  evaluateMx(
    domain,
    createMailDns(zoneResolver([TLD_ZONE, makeZone(Z, rows)], { fail: fail && ((n) => fail(n)) })),
  );
const mx = (priority: number, exchange: string): [string, string, unknown] => [
  Z,
  'MX',
  { preference: priority, exchange },
];

describe('MX', () => {
  it('lists exchanges by preference with their addresses', async () => {
    const result = await run([
      mx(20, 'b.mx.test'),
      mx(10, 'a.mx.test'),
      ['a.mx.test', 'A', '192.0.2.1'],
      ['a.mx.test', 'AAAA', '2001:db8::1'],
      ['b.mx.test', 'A', '192.0.2.2'],
    ]);
    expect(result).toMatchObject({ state: 'present', allResolve: true, status: 'pass', findings: [] });
    expect(result.hosts).toEqual([
      { priority: 10, exchange: 'a.mx.test', addresses: ['192.0.2.1', '2001:db8::1'] },
      { priority: 20, exchange: 'b.mx.test', addresses: ['192.0.2.2'] },
    ]);
  });

  it('an exchange without an address is reported; all of them unresolvable fails', async () => {
    const some = await run([mx(10, 'a.mx.test'), mx(20, 'gone.mx.test'), ['a.mx.test', 'A', '192.0.2.1']]);
    expect(some).toMatchObject({
      allResolve: false,
      status: 'warn',
      summary: '1 of 2 MX exchanges do not resolve to an address.',
    });
    expect(some.findings.map((f) => f.message)).toEqual([
      'MX exchange gone.mx.test has no A or AAAA record.',
    ]);
    expect(await run([mx(10, 'gone.mx.test')])).toMatchObject({ allResolve: false, status: 'fail' });
  });

  it('an exchange that is a CNAME is a warning (RFC 2181 §10.3)', async () => {
    const result = await run([
      mx(10, 'alias.mx.test'),
      ['alias.mx.test', 'CNAME', 'real.mx.test'],
      ['real.mx.test', 'A', '192.0.2.3'],
    ]);
    expect(result).toMatchObject({ allResolve: true, status: 'warn' });
    expect(result.findings.map((f) => f.message)).toEqual([
      'MX exchange alias.mx.test is an alias (CNAME to real.mx.test); it must name a host directly.',
    ]);
  });

  it('null MX: accepts no mail; mixed with other MX records it is invalid (RFC 7505 §3)', async () => {
    expect(await run([mx(0, '.')])).toMatchObject({
      state: 'null_mx',
      status: 'pass',
      hosts: [{ priority: 0, exchange: '.', addresses: [] }],
    });
    expect((await run([mx(5, '.')])).findings.map((f) => f.message)).toEqual([
      'Null MX: the domain declares that it accepts no mail.',
      'The null MX should have preference 0, not 5.',
    ]);
    expect(await run([mx(0, '.'), mx(10, 'a.mx.test')])).toMatchObject({
      state: 'invalid_null_mx',
      status: 'fail',
    });
  });

  it('no MX: the implicit MX is the domain’s own address (RFC 5321 §5.1)', async () => {
    expect(await run([[Z, 'A', '192.0.2.9']])).toMatchObject({
      state: 'none',
      status: 'warn',
      implicitAddresses: ['192.0.2.9'],
    });
    expect(await run([[Z, 'TXT', 'hello']])).toMatchObject({
      state: 'none',
      status: 'fail',
      implicitAddresses: [],
    });
  });

  it('NXDOMAIN and a failed lookup are different results', async () => {
    expect(await run([], 'nope.mx.test')).toMatchObject({ state: 'nxdomain', status: 'fail' });
    expect(await run([mx(10, 'a.mx.test')], Z, (n) => n === Z)).toMatchObject({
      state: 'error',
      status: 'error',
    });
    // The MX answer is fine but an exchange's lookup failed: unknown, not "does not resolve".
    const unknown = await run([mx(10, 'a.mx.test')], Z, (n) => n === 'a.mx.test');
    expect(unknown).toMatchObject({ state: 'present', allResolve: undefined, status: 'warn' });
  });
});
