import { describe, expect, it } from 'vitest';
import { canonicalIp, rateLimitKey } from '../../../src/plugins/client-address.js';

describe('canonicalIp', () => {
  it.each([
    ['203.0.113.13', '203.0.113.13'],
    ['203.0.113.13:40001', '203.0.113.13'],
    ['203.0.113.13:0', '203.0.113.13'],
    ['::ffff:203.0.113.13', '203.0.113.13'],
    ['[::ffff:203.0.113.13]:443', '203.0.113.13'],
    ['2001:DB8:0:0::1', '2001:db8::1'],
    ['[2001:db8::1]', '2001:db8::1'],
    ['[2001:db8::1]:65535', '2001:db8::1'],
  ])('%s → %s', (text, canonical) => {
    expect(canonicalIp(text)).toBe(canonical);
  });

  it.each([
    '011.110.009.009',
    '1.2.3.4.',
    '1.2.3.4:65536',
    '1.2.3.4:',
    '0x7f.1',
    '2130706433',
    '[2001:db8::1',
    '[2001:db8::1]:x',
    '[2001:db8::1]443',
    'fe80::1%eth0',
    'unknown',
    '',
  ])('%s is no address', (text) => {
    expect(canonicalIp(text)).toBeUndefined();
  });
});

describe('rateLimitKey', () => {
  it('keys IPv4 by address and IPv6 by /64', () => {
    expect(rateLimitKey('198.51.100.7')).toBe('198.51.100.7');
    expect(rateLimitKey('2001:db8:1:2::5')).toBe('2001:db8:1:2::/64');
    expect(rateLimitKey('2001:db8:1:2:ffff::1')).toBe('2001:db8:1:2::/64');
  });
});
