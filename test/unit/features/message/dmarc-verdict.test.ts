import { describe, expect, it } from 'vitest';
import type { DmarcEvaluation } from '../../../../src/features/email/dmarc.js';
import { parseDmarcRecord } from '../../../../src/features/email/dmarc.js';
import { aligned, dmarcVerdict } from '../../../../src/features/message/dmarc-verdict.js';

function found(record: string, policy: 'none' | 'quarantine' | 'reject'): DmarcEvaluation {
  return {
    state: 'found',
    record,
    recordDomain: 'example.com',
    inherited: false,
    parsed: parseDmarcRecord(record),
    policyTag: 'p',
    requestedPolicy: policy,
    effectivePolicy: policy,
    testing: false,
    subPoliciesNotWeaker: true,
    hasRua: false,
    destinations: [],
    lookups: [],
    status: 'pass',
    summary: '',
    findings: [],
  } as unknown as DmarcEvaluation;
}

describe('alignment (RFC 7489 §3.1)', () => {
  it('relaxed: the same organizational domain; strict: the same name', () => {
    expect(aligned('mail.example.com', 'example.com', 'relaxed')).toBe(true);
    expect(aligned('mail.example.com', 'example.com', 'strict')).toBe(false);
    expect(aligned('Example.COM.', 'example.com', 'strict')).toBe(true);
    expect(aligned('example.co.uk', 'other.co.uk', 'relaxed')).toBe(false);
  });
});

describe('dmarcVerdict', () => {
  const evaluation = found('v=DMARC1; p=reject; adkim=s', 'reject');

  it('passes on an aligned DKIM pass, in the strict mode the record asks', () => {
    const { dmarc, dkimAligned } = dmarcVerdict({
      fromDomain: 'example.com',
      evaluation,
      spf: { result: 'fail', domain: 'bounce.example.com' },
      dkim: [
        { domain: 'mail.example.com', result: 'pass' },
        { domain: 'example.com', result: 'pass' },
      ],
    });
    expect(dkimAligned).toEqual([false, true]);
    expect(dmarc).toMatchObject({
      result: 'pass',
      dkim_aligned: true,
      spf_aligned: false,
      alignment: { dkim: 'strict', spf: 'relaxed' },
      disposition: 'none',
    });
  });

  it('passes on SPF alone in relaxed mode (a subdomain of From)', () => {
    const { dmarc } = dmarcVerdict({
      fromDomain: 'example.com',
      evaluation: found('v=DMARC1; p=quarantine', 'quarantine'),
      spf: { result: 'pass', domain: 'bounce.example.com' },
      dkim: [],
    });
    expect(dmarc).toMatchObject({ result: 'pass', spf_aligned: true, dkim_aligned: false });
  });

  it('fails when nothing aligned authenticated, and the disposition is the policy', () => {
    const { dmarc } = dmarcVerdict({
      fromDomain: 'example.com',
      evaluation,
      spf: { result: 'pass', domain: 'elsewhere.net' },
      dkim: [{ domain: 'example.com', result: 'fail' }],
    });
    expect(dmarc).toMatchObject({ result: 'fail', disposition: 'reject' });
    expect(dmarc.summary).toMatch(/reject the message/);
  });

  it('is none without a policy, temperror when the lookup failed, permerror without a From domain', () => {
    const none = dmarcVerdict({
      fromDomain: 'example.com',
      evaluation: { ...evaluation, state: 'none', effectivePolicy: null } as DmarcEvaluation,
      spf: null,
      dkim: [],
    });
    expect(none.dmarc.result).toBe('none');
    const error = dmarcVerdict({
      fromDomain: 'example.com',
      evaluation: { ...evaluation, state: 'error', summary: 'SERVFAIL' } as DmarcEvaluation,
      spf: null,
      dkim: [],
    });
    expect(error.dmarc).toMatchObject({ result: 'temperror' });
    expect(dmarcVerdict({ fromDomain: null, evaluation: null, spf: null, dkim: [] }).dmarc.result).toBe(
      'permerror',
    );
  });
});
