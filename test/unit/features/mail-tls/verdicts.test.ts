/**
 * The verdicts of GET /api/mail-tls from the evidence: per address, per host
 * (every path must hold), for the domain, and the plain finding when every
 * host timed out at connect (this service's port 25 is the likely culprit).
 */
import { describe, expect, it } from 'vitest';
import type { MailTlsAddress, MailTlsHost } from '../../../../src/features/mail-tls/mail-tls.schema.js';
import { domainStatus, hostStatus, portBlocked } from '../../../../src/features/mail-tls/verdicts.js';

function address(
  status: MailTlsAddress['status'],
  failure?: NonNullable<MailTlsAddress['smtp']>['failure'],
): MailTlsAddress {
  return {
    address: '192.0.2.25',
    family: 4,
    status,
    ptr: [],
    fcrdns: null,
    smtp:
      status === 'refused'
        ? null
        : {
            banner: null,
            ehlo_extensions: [],
            starttls_offered: null,
            ehlo_after_tls: null,
            timings: [],
            ...(failure ? { failure } : {}),
          },
    tls: null,
    dane: null,
  };
}

function host(status: MailTlsHost['status'], addresses: MailTlsAddress[]): MailTlsHost {
  return {
    host: 'mx.example.com',
    preference: 10,
    status,
    addresses,
    dane: null,
    mta_sts: { mode: null, matches_policy: null, deliverable: null },
    findings: [],
  };
}

const timeout = { stage: 'connect' as const, kind: 'timeout' as const, message: 'connect timed out' };

describe('portBlocked', () => {
  it('says plainly that outbound port 25 is likely blocked when every contacted address timed out at connect', () => {
    const f = portBlocked([
      host('unreachable', [address('unreachable', timeout)]),
      host('unreachable', [address('unreachable', timeout), address('refused')]),
    ]);
    expect(f?.message).toMatch(/this service’s own network blocks outbound port 25/);
  });

  it('blames nobody when one host answered, refused the connection, or nothing was contacted', () => {
    expect(
      portBlocked([host('unreachable', [address('unreachable', timeout)]), host('pass', [address('pass')])]),
    ).toBeUndefined();
    expect(
      portBlocked([host('unreachable', [address('unreachable', { ...timeout, kind: 'refused' })])]),
    ).toBeUndefined();
    expect(portBlocked([host('refused', [address('refused')])])).toBeUndefined();
  });
});

describe('hostStatus and domainStatus', () => {
  it('a host is as good as its worst reachable address, and warns when another address is unreachable', () => {
    expect(hostStatus([address('pass'), address('warn')], null, null, [])).toBe('warn');
    expect(hostStatus([address('pass'), address('unreachable', timeout)], null, null, [])).toBe('warn');
    expect(hostStatus([address('fail'), address('pass')], null, null, [])).toBe('fail');
    expect(hostStatus([address('refused')], null, null, [])).toBe('refused');
    expect(hostStatus([], null, null, [])).toBe('fail');
  });

  it('the domain fails when a reachable host fails, and is unreachable only when no host could be reached', () => {
    expect(domainStatus([host('pass', []), host('fail', [])])).toBe('fail');
    expect(domainStatus([host('pass', []), host('unreachable', [])])).toBe('warn');
    expect(domainStatus([host('unreachable', []), host('refused', [])])).toBe('unreachable');
    expect(domainStatus([host('pass', []), host('pass', [])])).toBe('pass');
  });
});
