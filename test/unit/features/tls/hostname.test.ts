import { describe, expect, it } from 'vitest';
import { hostnameMatches } from '../../../../src/features/tls/hostname.js';

const names = (dnsNames: string[], ipAddresses: string[] = []) => ({ dnsNames, ipAddresses });

describe('hostnameMatches (RFC 6125 §6.4, CA/B BRs; the CN is never used)', () => {
  it.each([
    ['example.com', ['example.com'], true],
    ['example.com', ['EXAMPLE.COM.'], true],
    ['www.example.com', ['example.com'], false],
    ['a.example.com', ['*.example.com'], true],
    ['example.com', ['*.example.com'], false], // a wildcard needs a label to stand for
    ['a.b.example.com', ['*.example.com'], false], // and stands for exactly one
    ['a.com', ['*.com'], false], // never a whole TLD
    ['foo.example.com', ['f*.example.com'], false], // partial-label wildcards are not honoured
    ['a.example.com', ['a.*.com'], false],
    ['xn--bcher-kva.example', ['xn--bcher-kva.example'], true],
    ['example.com', [], false],
  ])('%s against %j → %s', (host, dns, expected) => {
    expect(hostnameMatches(host, names(dns))).toBe(expected);
  });

  it('an IP target matches only an iPAddress entry, in any spelling', () => {
    expect(hostnameMatches('192.0.2.1', names([], ['192.0.2.1']))).toBe(true);
    expect(hostnameMatches('192.0.2.1', names(['192.0.2.1']))).toBe(false);
    expect(hostnameMatches('192.0.2.1', names(['*.2.1']))).toBe(false);
    expect(hostnameMatches('2001:db8::1', names([], ['2001:0db8:0:0:0:0:0:1']))).toBe(true);
    expect(hostnameMatches('2001:db8::2', names([], ['2001:db8::1']))).toBe(false);
  });
});
