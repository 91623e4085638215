import fc from 'fast-check';
import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import type { TrustProxy } from '../../../src/config/index.js';
import {
  canonicalIp,
  clientIp,
  rateLimitKey,
  rawClientIp,
  trustRule,
} from '../../../src/plugins/client-address.js';

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

describe('rawClientIp', () => {
  const address = fc.oneof(
    fc.ipV4(),
    fc.ipV6(),
    fc.constantFrom('198.51.100.7:4000', '[2001:db8::1]:443', '::ffff:203.0.113.9', 'unknown', ''),
  );
  const trusts: TrustProxy[] = [false, true, 1, 2, ['127.0.0.0/8'], ['10.0.0.0/8', '127.0.0.1/32']];

  it('is clientIp() for a request Fastify has not seen, under every TRUST_PROXY: property-checked', async () => {
    for (const trust of trusts) {
      const rule = trust === false ? undefined : trustRule(trust);
      const app = Fastify({ trustProxy: rule ?? false });
      app.get('/', async (request) => ({ fastify: clientIp(request), raw: rawClientIp(request.raw, rule) }));
      await fc.assert(
        fc.asyncProperty(fc.array(address, { maxLength: 4 }), fc.boolean(), async (hops, joined) => {
          const headers: Record<string, string | string[]> =
            hops.length === 0 ? {} : { 'x-forwarded-for': joined ? hops.join(', ') : hops };
          const answer = (await app.inject({ url: '/', headers })).json() as { fastify: string; raw: string };
          expect(answer.raw).toBe(answer.fastify);
        }),
        { numRuns: 150 },
      );
      await app.close();
    }
  });
});
