import { describe, expect, it } from 'vitest';
import {
  classifyHost,
  type DnsWildcard,
  type HostDns,
  hostDnsFrom,
  wildcardFrom,
} from '../../../../src/features/ct/live-hosts.js';
import type { DnsAnswer, DnsRR } from '../../../../src/providers/dns/types.js';

const FLAGS = { aa: false, tc: false, rd: true, ra: true, ad: false, cd: false };
const answer = (answers: DnsRR[], rcode = 'NOERROR'): DnsAnswer => ({
  rcode,
  flags: FLAGS,
  answers,
  authorities: [],
  ede: [],
});
const a = (name: string, address: string): DnsRR => ({ name, type: 'A', ttl: 60, data: { address } });
const aaaa = (name: string, address: string): DnsRR => ({ name, type: 'AAAA', ttl: 60, data: { address } });
const cname = (name: string, target: string): DnsRR => ({ name, type: 'CNAME', ttl: 60, data: { target } });

const dns = (over: Partial<HostDns>): HostDns => ({ addresses: [], cname: null, failed: false, ...over });
const NO_WILDCARD: DnsWildcard = { detected: false, addresses: [], cnames: [] };
const WILDCARD: DnsWildcard = { detected: true, addresses: ['192.0.2.99'], cnames: ['lb.example.net'] };

describe('hostDnsFrom', () => {
  it('collects addresses after the CNAME chain and the name’s own CNAME', () => {
    const www = 'www.example.com';
    expect(
      hostDnsFrom(www, [
        answer([cname(www, 'alias.example.com'), a('alias.example.com', '192.0.2.20')]),
        answer([cname(www, 'alias.example.com'), aaaa('alias.example.com', '2001:db8::20')]),
        answer([cname(www, 'alias.example.com')]),
      ]),
    ).toEqual({ addresses: ['192.0.2.20', '2001:db8::20'], cname: 'alias.example.com', failed: false });
  });

  it('a dangling CNAME (NXDOMAIN with the CNAME, RFC 6604) still shows the CNAME', () => {
    expect(
      hostDnsFrom('x.example.com', [answer([cname('x.example.com', 'gone.example.com')], 'NXDOMAIN')]).cname,
    ).toBe('gone.example.com');
  });

  it('marks a failed lookup', () => {
    expect(hostDnsFrom('x.example.com', [undefined, answer([])])).toEqual({
      addresses: [],
      cname: null,
      failed: true,
    });
  });
});

describe('wildcardFrom', () => {
  it('detected, with every answer any probe got', () => {
    expect(
      wildcardFrom([
        dns({ addresses: ['192.0.2.1'] }),
        dns({ addresses: ['192.0.2.2'] }),
        dns({ cname: 'lb.example.net' }),
      ]),
    ).toEqual({ detected: true, addresses: ['192.0.2.1', '192.0.2.2'], cnames: ['lb.example.net'] });
  });
  it('not detected when every probe answered nothing', () => {
    expect(wildcardFrom([dns({}), dns({}), dns({})]).detected).toBe(false);
  });
  it('unknown when a probe failed and none answered', () => {
    expect(wildcardFrom([dns({}), dns({ failed: true }), dns({})]).detected).toBeNull();
  });
});

describe('classifyHost', () => {
  const D = 'example.com';
  it('active, historical, lookup_failed without a wildcard', () => {
    expect(classifyHost('a.example.com', D, dns({ addresses: ['192.0.2.1'] }), NO_WILDCARD)).toBe('active');
    expect(classifyHost('a.example.com', D, dns({ cname: 'x.example.net' }), NO_WILDCARD)).toBe('active');
    expect(classifyHost('a.example.com', D, dns({}), NO_WILDCARD)).toBe('historical');
    expect(classifyHost('a.example.com', D, dns({ failed: true }), NO_WILDCARD)).toBe('lookup_failed');
    // One query failed but another answered: the answer stands.
    expect(
      classifyHost('a.example.com', D, dns({ addresses: ['192.0.2.1'], failed: true }), NO_WILDCARD),
    ).toBe('active');
  });

  it('wildcard when the answer is only what the wildcard gives anyone', () => {
    expect(classifyHost('old.example.com', D, dns({ addresses: ['192.0.2.99'] }), WILDCARD)).toBe('wildcard');
    expect(
      classifyHost(
        'old.example.com',
        D,
        dns({ cname: 'lb.example.net', addresses: ['198.51.100.1'] }),
        WILDCARD,
      ),
    ).toBe('wildcard');
  });

  it('active when it answers with anything of its own', () => {
    expect(
      classifyHost('www.example.com', D, dns({ addresses: ['192.0.2.99', '192.0.2.10'] }), WILDCARD),
    ).toBe('active');
    // Its own CNAME, even to addresses the wildcard shares.
    expect(
      classifyHost(
        'www.example.com',
        D,
        dns({ cname: 'cdn.example.net', addresses: ['192.0.2.99'] }),
        WILDCARD,
      ),
    ).toBe('active');
  });

  it('the domain itself is never wildcard-synthesized (RFC 4592)', () => {
    expect(classifyHost(D, D, dns({ addresses: ['192.0.2.99'] }), WILDCARD)).toBe('active');
  });

  it('an unknown wildcard does not turn answers into wildcard', () => {
    expect(
      classifyHost('a.example.com', D, dns({ addresses: ['192.0.2.99'] }), { ...WILDCARD, detected: null }),
    ).toBe('active');
  });
});
