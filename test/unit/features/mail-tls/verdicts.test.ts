/**
 * The verdicts of GET /api/mail-tls from the evidence: per address, per host
 * (every path must hold), for the domain, and the plain finding when every
 * host timed out at connect (this service's port 25 is the likely culprit).
 */
import { describe, expect, it } from 'vitest';
import type { MailTlsAddress, MailTlsHost } from '../../../../src/features/mail-tls/mail-tls.schema.js';
import {
  domainStatus,
  hostStatus,
  portBlocked,
  summarize,
} from '../../../../src/features/mail-tls/verdicts.js';

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

describe('summarize: the headline counts every host in its state (issue 31)', () => {
  it('a fail among warnings, an unreachable and a refused host: each is counted, worst first', () => {
    const hosts = [
      host('pass', [address('pass')]),
      host('fail', [address('fail')]),
      host('warn', [address('warn')]),
      host('warn', [address('warn')]),
      host('unreachable', [address('unreachable', timeout)]),
      host('refused', [address('refused')]),
    ];
    const summary = summarize('harbourpost.example', hosts, domainStatus(hosts));
    expect(summary).toMatch(
      /^harbourpost\.example's 6 MX hosts: 1 fails, 2 have warnings, 1 is unreachable, 1 was not contacted \(not a public address\), 1 passes\. /,
    );
  });

  it('warnings alone, and no reachable host among refused ones', () => {
    const warn = [host('pass', [address('pass')]), host('warn', [address('warn')])];
    expect(summarize('d.example', warn, domainStatus(warn))).toMatch(
      /^d\.example's 2 MX hosts: 1 has warnings, 1 passes\. /,
    );
    const none = [
      host('unreachable', [address('unreachable', timeout)]),
      host('refused', [address('refused')]),
    ];
    expect(summarize('d.example', none, domainStatus(none))).toBe(
      "d.example's 2 MX hosts: 1 is unreachable, 1 was not contacted (not a public address). None could be reached on port 25 from this service.",
    );
  });
});
