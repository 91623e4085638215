import { describe, expect, it } from 'vitest';
import {
  blocklistQueryName,
  InvalidNameError,
  type InvalidNameReason,
  normalizeDomain,
  reverseName,
} from '../../../src/net/names.js';

describe('normalizeDomain', () => {
  it.each([
    ['Example.TEST.', 'example.test'],
    ['bücher.example', 'xn--bcher-kva.example'],
    ['XN--BCHER-KVA.example', 'xn--bcher-kva.example'],
  ])('%s → %s', (input, name) => {
    expect(normalizeDomain(input)).toBe(name);
  });

  it('admits `_` labels only when asked to', () => {
    expect(normalizeDomain('_dmarc.Example.test', { allowUnderscore: true })).toBe('_dmarc.example.test');
    expect(() => normalizeDomain('_dmarc.example.test')).toThrow(
      expect.objectContaining({ reason: 'underscore' }),
    );
  });

  it.each<[string, InvalidNameReason]>([
    ['', 'empty'],
    ['a'.repeat(1025), 'too_long'],
    [`${'a'.repeat(63)}.`.repeat(4), 'too_long'],
    ['.', 'root'],
    ['example.test/path', 'not_bare'],
    ['example%2Etest', 'not_bare'],
    ['exa mple.test', 'not_idna'],
    ['a..test', 'empty_label'],
    [`${'a'.repeat(64)}.test`, 'label_too_long'],
    ['-a.test', 'invalid_label'],
    ['1.2.3.4', 'numeric_tld'],
    ['printer.local', 'special_use'],
    ['pаypal.com', 'mixed_scripts'], // Cyrillic а
  ])('refuses %j with reason %s', (input, reason) => {
    expect(() => normalizeDomain(input)).toThrow(expect.objectContaining({ reason }));
  });

  it('names the parameter in the 400 it throws', () => {
    expect(() => normalizeDomain('localhost', { param: 'domain' })).toThrow(InvalidNameError);
    expect(() => normalizeDomain('localhost', { param: 'domain' })).toThrow(
      expect.objectContaining({
        statusCode: 400,
        code: 'bad_request',
        param: 'domain',
        detail: expect.stringMatching(/^is a localhost name/),
        message: expect.stringMatching(/^domain is a localhost name/),
      }),
    );
  });
});

describe('reverseName', () => {
  it('writes the in-addr.arpa and ip6.arpa names (RFC 1035 §3.5, RFC 3596 §2.5)', () => {
    expect(reverseName('192.0.2.10')).toBe('10.2.0.192.in-addr.arpa');
    expect(reverseName('2001:db8::1')).toBe(
      '1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.8.b.d.0.1.0.0.2.ip6.arpa',
    );
  });
});

describe('blocklistQueryName', () => {
  it('reverses an address under the list zone: octets, or nibbles (RFC 5782 §2.1, §2.4)', () => {
    expect(blocklistQueryName({ ip: '192.0.2.10' }, 'dnsbl.example')).toBe('10.2.0.192.dnsbl.example');
    expect(blocklistQueryName({ ip: '2001:db8::1' }, 'dnsbl6.example.')).toBe(
      '1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.8.b.d.0.1.0.0.2.dnsbl6.example',
    );
    // The RFC 5782 §5 IPv6 test point is asked as IPv6, not as 127.0.0.2.
    expect(blocklistQueryName({ ip: '::ffff:7f00:2' }, 'bl.example')).toBe(
      '2.0.0.0.0.0.f.7.f.f.f.f.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.bl.example',
    );
  });

  it('puts a domain in front of the zone as it is (RFC 5782 §3.1)', () => {
    expect(blocklistQueryName({ domain: 'spam.test.' }, 'dbl.example')).toBe('spam.test.dbl.example');
  });
});
