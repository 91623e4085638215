import { describe, expect, it } from 'vitest';
import {
  answerTtl,
  createDnsProviders,
  type DnsAnswer,
  type DnsRR,
  InvalidDnsNameError,
  normalizeDnsName,
  parseResolverUrl,
  resolverInfo,
} from '../../../../src/providers/dns/index.js';
import { thrownBy } from '../../../expect-error.js';

const FLAGS = { aa: false, tc: false, rd: true, ra: true, ad: false, cd: false };

function answer(rcode: string, answers: DnsRR[], authorities: DnsRR[] = []): DnsAnswer {
  return { rcode, flags: FLAGS, answers, authorities, ede: [] };
}

const soa = (ttl: number, minimum: number): DnsRR => ({
  name: 'example.test',
  type: 'SOA',
  ttl,
  data: {
    mname: 'ns1.example.test',
    rname: 'hostmaster.example.test',
    serial: 1,
    refresh: 7200,
    retry: 3600,
    expire: 1209600,
    minimum,
  },
});
const a = (ttl: number): DnsRR => ({
  name: 'alias.example.test',
  type: 'A',
  ttl,
  data: { address: '192.0.2.1' },
});
const cname = (ttl: number): DnsRR => ({
  name: 'www.example.test',
  type: 'CNAME',
  ttl,
  data: { target: 'alias.example.test' },
});

describe('answerTtl', () => {
  it('is the smallest TTL of the answer section, CNAMEs included', () => {
    expect(answerTtl(answer('NOERROR', [cname(600), a(120)]), 'A')).toBe(120);
    expect(answerTtl(answer('NOERROR', [cname(60), a(120)]), 'A')).toBe(60);
  });

  it('caps positive answers at one day', () => {
    expect(answerTtl(answer('NOERROR', [a(2_000_000)]), 'A')).toBe(86_400);
  });

  it('is 0 for a zero TTL (not stored)', () => {
    expect(answerTtl(answer('NOERROR', [a(0)]), 'A')).toBe(0);
  });

  it('uses min(SOA TTL, SOA minimum) for NXDOMAIN and NODATA (RFC 2308 §5)', () => {
    expect(answerTtl(answer('NXDOMAIN', [], [soa(3600, 60)]), 'A')).toBe(60);
    expect(answerTtl(answer('NOERROR', [], [soa(30, 600)]), 'A')).toBe(30);
  });

  it('caps negative answers at 300 s', () => {
    expect(answerTtl(answer('NXDOMAIN', [], [soa(3600, 86_400)]), 'A')).toBe(300);
  });

  it('never keeps a negative answer longer than the CNAME that led to it', () => {
    expect(answerTtl(answer('NXDOMAIN', [cname(20)], [soa(3600, 600)]), 'A')).toBe(20);
  });

  it('treats an answer lacking the asked type (a CNAME only) as negative', () => {
    expect(answerTtl(answer('NOERROR', [cname(600)], [soa(3600, 120)]), 'A')).toBe(120);
  });

  it('is 0 when a negative answer carries no SOA', () => {
    expect(answerTtl(answer('NXDOMAIN', []), 'A')).toBe(0);
    expect(answerTtl(answer('NOERROR', [cname(600)]), 'A')).toBe(0);
  });
});

describe('normalizeDnsName', () => {
  it('lower-cases and drops one trailing dot', () => {
    expect(normalizeDnsName('WWW.Example.TEST.')).toBe('www.example.test');
    expect(normalizeDnsName('_sip._tcp.example.test')).toBe('_sip._tcp.example.test');
    expect(normalizeDnsName('.')).toBe('.');
  });

  it.each([
    ['', 'empty'],
    ['a..b', 'empty label'],
    ['..', 'empty label'],
    [`${'a'.repeat(64)}.test`, 'label longer than 63'],
    [Array.from({ length: 64 }, () => 'abc').join('.'), 'longer than 253'],
    ['bücher.example', 'printable ASCII'],
    ['tab\there.test', 'printable ASCII'],
    ['back\\slash.test', 'printable ASCII'],
  ])('refuses %j (%s) with a 400 InvalidDnsNameError', (input, why) => {
    const caught = thrownBy(() => normalizeDnsName(input), InvalidDnsNameError);
    expect(caught.statusCode).toBe(400);
    expect(caught.message).toContain(why);
  });

  it('asks a name with a space as it is (SPF macros can produce one, RFC 7208 §7.1 "%_")', () => {
    expect(normalizeDnsName('macro%percent  space%20url-space.example.com')).toBe(
      'macro%percent  space%20url-space.example.com',
    );
  });

  it('accepts a 253-character name of 63-character labels', () => {
    const name = ['a'.repeat(63), 'b'.repeat(63), 'c'.repeat(63), 'd'.repeat(61)].join('.');
    expect(name.length).toBe(253);
    expect(normalizeDnsName(name)).toBe(name);
  });
});

describe('resolver identities', () => {
  it('names the well-known DoH resolvers after their vendors', () => {
    const [cf, google] = createDnsProviders([
      'https://cloudflare-dns.com/dns-query',
      'https://dns.google/dns-query',
    ]);
    expect(cf?.info).toEqual({
      id: 'cloudflare-doh',
      name: 'Cloudflare DoH',
      capabilities: ['dns'],
      docs_url: 'https://developers.cloudflare.com/1.1.1.1/encryption/dns-over-https/',
      access: 'none',
      configured: true,
      endpoint: 'https://cloudflare-dns.com/dns-query',
    });
    expect(cf?.transport).toBe('doh');
    expect(google?.info).toMatchObject({
      id: 'google-doh',
      name: 'Google DoH',
      docs_url: 'https://developers.google.com/speed/public-dns/docs/doh',
    });
  });

  it('derives ids and names from scheme, host and port for any other resolver', () => {
    const providers = createDnsProviders([
      'https://127.0.0.1:8443/dns-query',
      'udp://127.0.0.1:5353',
      'tcp://127.0.0.1:5353',
      'tls://[::1]:853',
      'udp://192.0.2.53',
      'tls://dns.example.test',
    ]);
    expect(providers.map((p) => [p.info.id, p.info.name, p.transport])).toEqual([
      ['doh-127.0.0.1-8443', 'DNS over HTTPS (127.0.0.1:8443)', 'doh'],
      ['udp-127.0.0.1-5353', 'DNS over UDP (127.0.0.1:5353)', 'udp'],
      ['tcp-127.0.0.1-5353', 'DNS over TCP (127.0.0.1:5353)', 'tcp'],
      ['dot-::1-853', 'DNS over TLS ([::1]:853)', 'dot'],
      ['udp-192.0.2.53-53', 'DNS over UDP (192.0.2.53:53)', 'udp'],
      ['dot-dns.example.test-853', 'DNS over TLS (dns.example.test:853)', 'dot'],
    ]);
    expect(providers.every((p) => p.info.capabilities.includes('dns') && p.info.access === 'none')).toBe(
      true,
    );
  });

  it('keeps ids unique when one host is listed twice', () => {
    const ids = createDnsProviders(['https://127.0.0.1:8443/a', 'https://127.0.0.1:8443/b']).map(
      (p) => p.info.id,
    );
    expect(ids).toEqual(['doh-127.0.0.1-8443', 'doh-127.0.0.1-8443-2']);
  });

  it('refuses a URL with a scheme it cannot speak', () => {
    expect(() => parseResolverUrl('http://127.0.0.1/dns-query')).toThrow(TypeError);
    expect(() => parseResolverUrl('not a url')).toThrow(TypeError);
  });

  it('parses default ports and IPv6 literals', () => {
    expect(parseResolverUrl('tls://[2001:db8::53]')).toMatchObject({
      transport: 'dot',
      host: '2001:db8::53',
      port: 853,
    });
    expect(resolverInfo(parseResolverUrl('https://dns.google/dns-query')).id).toBe('google-doh');
  });
});
