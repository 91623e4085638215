/** SMTP TLS Reporting records (RFC 8460 §3). */
import { describe, expect, it } from 'vitest';
import { evaluateTlsRpt } from '../../../../src/features/email/tls-rpt.js';
import type { DnsOutcome } from '../../../../src/features/email/types.js';

const txt = (...records: string[]): DnsOutcome<string> => ({
  kind: 'answer',
  rcode: 'NOERROR',
  records,
  aliases: [],
});

describe('TLS-RPT', () => {
  it('one record with mailto: and https: destinations is valid', () => {
    expect(
      evaluateTlsRpt('x.test', txt('v=TLSRPTv1; rua=mailto:tls@x.test, https://r.x.test/v1')),
    ).toMatchObject({
      state: 'valid',
      status: 'pass',
      rua: ['mailto:tls@x.test', 'https://r.x.test/v1'],
      findings: [],
    });
  });

  it.each([
    [
      ['v=TLSRPTv1; rua=ftp://x.test/r'],
      'rua "ftp://x.test/r": only mailto: and https: destinations are allowed.',
    ],
    [['v=TLSRPTv1; rua=mailto:nobody'], 'rua "mailto:nobody": not a valid mailto: address.'],
    [['v=TLSRPTv1;'], 'The record has no rua= field.'],
    [['v=TLSRPTv1; rua=mailto:a@x.test; rua=mailto:b@x.test'], 'rua= appears more than once.'],
    [
      ['v=TLSRPTv1; rua=mailto:a@x.test', 'v=TLSRPTv1; rua=mailto:b@x.test'],
      '2 "v=TLSRPTv1" records; exactly one is allowed.',
    ],
  ])('%j is invalid', (records, message) => {
    const result = evaluateTlsRpt('x.test', txt(...records));
    expect(result).toMatchObject({ state: 'invalid', status: 'fail' });
    expect(result.findings.map((f) => f.message)).toEqual([message]);
  });

  it('no record, or only other TXT records: none', () => {
    expect(evaluateTlsRpt('x.test', txt('v=spf1 -all'))).toMatchObject({ state: 'none', status: 'warn' });
  });

  it('a failed lookup: error', () => {
    expect(evaluateTlsRpt('x.test', { kind: 'error', message: 'timeout' })).toMatchObject({
      state: 'error',
      status: 'error',
    });
  });
});
