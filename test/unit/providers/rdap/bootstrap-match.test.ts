import { describe, expect, it } from 'vitest';
import { ProviderError } from '../../../../src/errors.js';
import {
  indexBootstrap,
  objectUrl,
  preferredBaseUrls,
} from '../../../../src/providers/rdap/bootstrap-match.js';
import { fixture } from '../../../fakes/https-upstream.js';

const dns = indexBootstrap('dns', fixture('rdap/bootstrap/dns.json'));
const ipv4 = indexBootstrap('ipv4', fixture('rdap/bootstrap/ipv4.json'));
const ipv6 = indexBootstrap('ipv6', fixture('rdap/bootstrap/ipv6.json'));

const domain = (name: string) => ({ kind: 'domain' as const, name });
const ip = (address: string) => ({
  kind: 'ip' as const,
  address,
  version: address.includes(':') ? (6 as const) : (4 as const),
});

describe('dns.json matching (RFC 9224 §4, longest match on labels)', () => {
  it('finds the registry of a TLD in the real IANA file', () => {
    expect(dns.publication).toBe('2024-07-25T00:00:01Z');
    expect(dns.match(domain('google.com'))).toEqual({
      entry: 'com',
      urls: ['https://rdap.verisign.com/com/v1/'],
    });
    expect(dns.match(domain('www.home.moscow'))?.urls).toEqual(['https://flexireg.net/moscow/rdap/']);
    // IDN TLDs are listed in A-label form.
    expect(dns.match(domain('xn--d1acufc.xn--p1acf'))?.entry).toBe('xn--p1acf');
  });

  it('returns undefined for a TLD without RDAP service', () => {
    expect(dns.match(domain('example.invalid'))).toBeUndefined();
  });

  it('prefers the longest label suffix and never matches inside a label', () => {
    const index = indexBootstrap('dns', {
      services: [
        [['uk'], ['https://uk.example/']],
        [['co.uk'], ['https://co-uk.example/']],
        [['le.com'], ['https://le-com.example/']],
      ],
    });
    expect(index.match(domain('shop.co.uk'))?.urls).toEqual(['https://co-uk.example/']);
    expect(index.match(domain('example.uk'))?.urls).toEqual(['https://uk.example/']);
    expect(index.match(domain('example.com'))).toBeUndefined();
    expect(index.match(domain('x.le.com'))?.entry).toBe('le.com');
  });
});

describe('ipv4.json / ipv6.json matching (RFC 9224 §5, longest prefix)', () => {
  it('finds the RIR for an address in the real IANA files', () => {
    expect(ipv4.match(ip('1.1.1.1'))?.urls).toEqual(['https://rdap.apnic.net/']);
    expect(ipv4.match(ip('193.0.6.139'))?.urls).toEqual(['https://rdap.db.ripe.net/']);
    // Legacy space is listed under ARIN, which redirects to RIPE for SWITCH's 130.59/16.
    expect(ipv4.match(ip('130.59.1.1'))?.urls).toEqual(['https://rdap.arin.net/registry/']);
    expect(ipv6.match(ip('2606:4700:4700::1111'))?.urls).toEqual(['https://rdap.arin.net/registry/']);
  });

  it('prefers the longest prefix', () => {
    const index = indexBootstrap('ipv4', {
      services: [
        [['10.0.0.0/8'], ['https://wide.example/']],
        [['10.1.0.0/16'], ['https://narrow.example/']],
      ],
    });
    expect(index.match(ip('10.1.2.3'))?.urls).toEqual(['https://narrow.example/']);
    expect(index.match(ip('10.2.2.3'))?.urls).toEqual(['https://wide.example/']);
    expect(index.match(ip('11.0.0.1'))).toBeUndefined();
  });

  it('does not answer for the other family or for a domain', () => {
    expect(ipv4.match(ip('2606:4700::1'))).toBeUndefined();
    expect(ipv6.match(domain('example.com'))).toBeUndefined();
  });
});

describe('base URLs', () => {
  it('prefers https (RFC 9224 §3) and keeps http only when nothing else is offered', () => {
    expect(preferredBaseUrls(['http://a.example/', 'https://b.example/'])).toEqual(['https://b.example/']);
    expect(preferredBaseUrls(['http://a.example/'])).toEqual(['http://a.example/']);
    // AFRINIC lists both; only https is used.
    expect(ipv6.match(ip('2c0f:f000::1'))?.urls).toEqual(['https://rdap.afrinic.net/rdap/']);
  });

  it('joins a base URL with or without its trailing slash, keeping the path prefix', () => {
    expect(objectUrl('https://rdap.verisign.com/com/v1/', domain('google.com'))).toBe(
      'https://rdap.verisign.com/com/v1/domain/google.com',
    );
    expect(objectUrl('https://rdap.verisign.com/com/v1', domain('google.com'))).toBe(
      'https://rdap.verisign.com/com/v1/domain/google.com',
    );
    expect(objectUrl('https://rdap.arin.net/registry', ip('2606:4700::1'))).toBe(
      'https://rdap.arin.net/registry/ip/2606:4700::1',
    );
  });
});

describe('malformed bootstrap files', () => {
  it('are a bad_response of the source, never "no RDAP service"', () => {
    for (const data of [null, {}, { services: 'x' }, { services: [[['com'], []]] }]) {
      expect(() => indexBootstrap('dns', data)).toThrow(ProviderError);
    }
  });

  it('skip malformed services and entries but keep the rest', () => {
    const index = indexBootstrap('ipv4', {
      services: [
        [
          ['not-a-cidr', '192.0.2.0/24'],
          ['https://ok.example/', 'ftp://no.example/'],
        ],
        'junk',
        [['10.0.0.0/8']],
      ],
    });
    expect(index.match(ip('192.0.2.1'))?.urls).toEqual(['https://ok.example/']);
  });
});
