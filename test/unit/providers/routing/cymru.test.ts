/** Team Cymru's DNS interface: query names, TXT parsing, most-specific route, failures. */
import { describe, expect, it } from 'vitest';
import { AppError, ProviderError } from '../../../../src/errors.js';
import type { DnsAnswer } from '../../../../src/providers/dns/types.js';
import {
  CymruRouting,
  cymruOriginName,
  parseAsTxt,
  parseOriginTxt,
  type TxtResolver,
} from '../../../../src/providers/routing/cymru.js';
import type { ProviderInfo } from '../../../../src/providers/types.js';

const info: ProviderInfo = {
  id: 'cymru',
  name: 'Team Cymru',
  capabilities: ['routing'],
  docs_url: 'https://www.team-cymru.com/ip-asn-mapping',
  access: 'none',
  configured: true,
  endpoint: 'origin.asn.cymru.com via DNS',
};

function answer(rcode: string, texts: string[] = []): DnsAnswer {
  return {
    rcode,
    flags: { aa: false, tc: false, rd: true, ra: true, ad: false, cd: false },
    answers: texts.map((text) => ({ name: 'q', type: 'TXT', ttl: 60, data: { text, strings: [text] } })),
    authorities: [],
    ede: [],
  };
}

function fakeDns(zone: Record<string, DnsAnswer | Error>): TxtResolver & { asked: string[] } {
  const asked: string[] = [];
  return {
    asked,
    async resolve(name) {
      asked.push(name);
      const a = zone[name] ?? answer('NXDOMAIN');
      if (a instanceof Error) throw a;
      return { value: a };
    },
  };
}

describe('cymruOriginName', () => {
  it('reverses IPv4 octets under origin.asn.cymru.com', () => {
    expect(cymruOriginName('216.90.108.31')).toBe('31.108.90.216.origin.asn.cymru.com');
  });

  it('reverses all 32 IPv6 nibbles under origin6.asn.cymru.com', () => {
    expect(cymruOriginName('2606:4700::1')).toBe(
      '1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.7.4.6.0.6.2.origin6.asn.cymru.com',
    );
  });
});

describe('TXT parsing', () => {
  it('reads origin answers, including a multi-origin prefix', () => {
    expect(parseOriginTxt('23028 | 216.90.108.0/24 | US | arin | 1998-09-25')).toEqual({
      asns: [23028],
      prefix: '216.90.108.0/24',
      bits: 24,
    });
    expect(parseOriginTxt('64500 64501 | 2001:DB8::/32 | ZZ | ripencc | ')?.asns).toEqual([64500, 64501]);
    expect(parseOriginTxt('garbage')).toBeUndefined();
    expect(parseOriginTxt('x | 1.2.3.0/24')).toBeUndefined();
  });

  it('reads AS answers, whose name may contain commas', () => {
    expect(parseAsTxt('13335 | US | arin | 2010-07-14 | CLOUDFLARENET, US')).toEqual({
      asn: 13335,
      holder: 'CLOUDFLARENET, US',
    });
    expect(parseAsTxt('13335 | US | arin')).toBeUndefined();
  });
});

describe('CymruRouting.origin', () => {
  const signal = new AbortController().signal;

  it('picks the most specific route and names its holder', async () => {
    const dns = fakeDns({
      '1.2.0.192.origin.asn.cymru.com': answer('NOERROR', [
        '64500 | 192.0.0.0/16 | ZZ | arin | 2000-01-01',
        '64501 | 192.0.2.0/24 | ZZ | arin | 2000-01-01',
      ]),
      'AS64501.asn.cymru.com': answer('NOERROR', [
        '64501 | ZZ | arin | 2000-01-01 | EXAMPLE-NET Example, ZZ',
      ]),
    });
    const origin = await new CymruRouting(info, dns).origin('192.0.2.1', signal);
    expect(origin).toEqual({
      announced: true,
      prefix: '192.0.2.0/24',
      origins: [{ asn: 64501, holder: 'EXAMPLE-NET Example, ZZ' }],
    });
    expect(dns.asked).toEqual(['1.2.0.192.origin.asn.cymru.com', 'AS64501.asn.cymru.com']);
  });

  it('answers "not announced" for NXDOMAIN, without asking for a holder', async () => {
    const dns = fakeDns({});
    expect(await new CymruRouting(info, dns).origin('192.0.2.1', signal)).toEqual({
      announced: false,
      prefix: null,
      origins: [],
    });
    expect(dns.asked).toHaveLength(1);
  });

  it('turns a failed DNS lookup into a ProviderError, so the chain records it', async () => {
    const dns = fakeDns({
      '1.2.0.192.origin.asn.cymru.com': new AppError(502, 'upstream_failed', 'dns: every provider failed'),
    });
    await expect(new CymruRouting(info, dns).origin('192.0.2.1', signal)).rejects.toBeInstanceOf(
      ProviderError,
    );
  });
});
