/**
 * BIMI assertion record discovery (bimi-discovery.ts): the selector at the
 * domain, then at its organizational domain only when the domain answered
 * without a BIMI record (draft-brand-indicators-for-message-identification,
 * "Assertion Record Discovery", steps 3 and 6). Issue 19: netdiag used to ask
 * the domain only.
 */
import { describe, expect, it, vi } from 'vitest';
import { discoverBimi } from '../../../../src/features/email/bimi-discovery.js';
import { createMailDns } from '../../../../src/features/email/mail-dns.js';
import type { ResourceFetcher } from '../../../../src/features/email/resource-fetcher.js';
import { makeZone, TLD_ZONE, zoneResolver } from './zone-resolver.js';

const ORG_RECORD = 'v=BIMI1; l=https://brand.test/logo.svg; a=';
const zone = makeZone('brand.test', [
  ['default._bimi.brand.test', 'TXT', ORG_RECORD],
  ['promo._bimi.brand.test', 'TXT', 'v=BIMI1; l=https://brand.test/promo.svg'],
  ['default._bimi.own.brand.test', 'TXT', 'v=BIMI1; l=https://own.brand.test/logo.svg'],
  ['default._bimi.other.brand.test', 'TXT', 'google-site-verification=abc'],
]);

function run(domain: string, selectors: string[], fail?: (name: string) => boolean) {
  const resolver = zoneResolver([TLD_ZONE, zone], fail ? { fail } : {});
  const fetcher = vi.fn<ResourceFetcher>(async () => ({ ok: false, reason: 'not served', temporary: false }));
  return {
    resolver,
    fetcher,
    result: discoverBimi(domain, selectors, createMailDns(resolver), fetcher),
  };
}

const names = (lookups: { name: string; domain: string }[]) => lookups.map((l) => `${l.name} @${l.domain}`);

describe('BIMI record discovery', () => {
  it('no record at the domain: the same selector at the organizational domain', async () => {
    const { result, fetcher } = run('news.brand.test', ['default']);
    const { lookups } = await result;
    expect(names(lookups)).toEqual([
      'default._bimi.news.brand.test @news.brand.test',
      'default._bimi.brand.test @brand.test',
    ]);
    // The organizational domain's record is the one used: its logo is fetched.
    expect(fetcher).toHaveBeenCalledWith({ url: 'https://brand.test/logo.svg', maxBytes: 32 * 1024 + 1 });
  });

  it('TXT records that are not BIMI records count as none, so the fallback is asked', async () => {
    const { lookups } = await run('other.brand.test', ['default']).result;
    expect(names(lookups)).toEqual([
      'default._bimi.other.brand.test @other.brand.test',
      'default._bimi.brand.test @brand.test',
    ]);
  });

  it('a record at the domain wins, and the organizational domain is not asked', async () => {
    const { result, resolver } = run('own.brand.test', ['default']);
    expect(names((await result).lookups)).toEqual(['default._bimi.own.brand.test @own.brand.test']);
    expect(resolver.asked.map((q) => q.name)).toEqual(['default._bimi.own.brand.test']);
  });

  it('each selector falls back to itself at the organizational domain, all selectors at once', async () => {
    const { lookups } = await run('news.brand.test', ['promo', 'default']).result;
    expect(names(lookups)).toEqual([
      'promo._bimi.news.brand.test @news.brand.test',
      'promo._bimi.brand.test @brand.test',
      'default._bimi.news.brand.test @news.brand.test',
      'default._bimi.brand.test @brand.test',
    ]);
  });

  it('a failed lookup at the domain does not fall back: its own record may be there', async () => {
    const { lookups } = await run('news.brand.test', ['default'], (name) => name.endsWith('news.brand.test'))
      .result;
    expect(lookups).toEqual([
      expect.objectContaining({
        domain: 'news.brand.test',
        outcome: expect.objectContaining({ kind: 'error' }),
      }),
    ]);
  });

  it('an organizational domain asks itself only', async () => {
    const { lookups } = await run('brand.test', ['default']).result;
    expect(names(lookups)).toEqual(['default._bimi.brand.test @brand.test']);
  });
});
