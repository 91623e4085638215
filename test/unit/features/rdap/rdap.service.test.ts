/**
 * lookupRdap with the real chain, loader and memory cache, and scripted
 * sources: outcomes, attribution, the registrar follow-up and cache lifetimes.
 * The adapters themselves are exercised over real sockets in
 * test/integration/rdap-api.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { CachedLoader } from '../../../../src/cache/cached.js';
import { MemoryCache } from '../../../../src/cache/memory.js';
import { AppError, ProviderError } from '../../../../src/errors.js';
import {
  lookupRdap,
  RDAP_NOT_FOUND_TTL_SECONDS,
  RDAP_TTL_SECONDS,
  type RdapLookupDeps,
} from '../../../../src/features/rdap/rdap.service.js';
import { ProviderChain } from '../../../../src/providers/chain.js';
import type {
  RdapAnswer,
  RdapDocument,
  RdapQuery,
  RdapSource,
} from '../../../../src/providers/rdap/index.js';
import { ProviderRegistry } from '../../../../src/providers/registry.js';
import type { ProviderInfo } from '../../../../src/providers/types.js';
import { rejectionOf } from '../../../expect-error.js';
import { fixture } from '../../../fakes/https-upstream.js';

type Step = RdapAnswer | ProviderError;

function source(id: string, steps: (query: RdapQuery) => Step): RdapSource & { calls: number } {
  const info: ProviderInfo = {
    id,
    name: id,
    capabilities: ['rdap'],
    docs_url: 'https://example.invalid/',
    access: 'none',
    configured: true,
    endpoint: `https://${id}.example`,
  };
  const s = {
    info,
    calls: 0,
    async lookup(query: RdapQuery) {
      s.calls++;
      const step = steps(query);
      if (step instanceof ProviderError) throw step;
      return step;
    },
  };
  return s;
}

const VERISIGN_URL = 'https://rdap.verisign.example/com/v1/domain/google.com';
const found = (object: unknown, url = VERISIGN_URL): RdapAnswer => ({
  outcome: 'found',
  url,
  object: object as never,
});

function setup(opts: {
  primary: (q: RdapQuery) => Step;
  fallback?: (q: RdapQuery) => Step;
  registrar?: (url: string) => Promise<RdapDocument>;
}) {
  let now = 1_700_000_000_000;
  const clock = () => now;
  const cache = new MemoryCache({ clock });
  const loader = new CachedLoader(cache, { clock });
  const registry = new ProviderRegistry(clock);
  const chain = new ProviderChain({ loader, registry, timeoutMs: 2000 });
  const primary = source('aggregator', opts.primary);
  const fallback = source('bootstrap', opts.fallback ?? (() => new ProviderError('network', 'unused')));
  const registrarUrls: string[] = [];
  const deps: RdapLookupDeps = {
    chain,
    loader,
    providers: [primary, fallback],
    registrar: {
      fetch: async (url) => {
        registrarUrls.push(url);
        if (!opts.registrar) throw new Error('no registrar expected');
        return opts.registrar(url);
      },
    },
    timeoutMs: 2000,
  };
  return {
    deps,
    primary,
    fallback,
    registrarUrls,
    advance: (seconds: number) => {
      now += seconds * 1000;
    },
  };
}

const rejection = (p: Promise<unknown>) => rejectionOf(p, AppError);

describe('lookupRdap', () => {
  it("follows the thin registry's related link to the registrar and caches the whole answer for 1 h", async () => {
    const t = setup({
      primary: () => found(fixture('rdap/verisign-com-domain-google.com.json')),
      registrar: async (url) => ({
        status: 'found',
        url,
        object: fixture('rdap/registrar-markmonitor-domain-google.com.json') as never,
        redirects: 0,
      }),
    });
    const first = await lookupRdap(t.deps, 'Google.COM.', 'domain');
    expect(first.cache).toEqual({
      hit: false,
      maxAge: RDAP_TTL_SECONDS,
      expiresAt: 1_700_000_000_000 + RDAP_TTL_SECONDS * 1000,
    });
    expect(first.body).toMatchObject({
      target: 'google.com',
      type: 'domain',
      registry: { url: VERISIGN_URL, ldh_name: 'google.com' },
      registrar: {
        url: 'https://rdap.markmonitor.com/rdap/domain/GOOGLE.COM',
        entities: { registrant: { organization: 'Google LLC' } },
      },
      notes: [],
      source: 'aggregator',
      source_id: 'aggregator',
      providers_tried: [{ id: 'aggregator', status: 'ok' }],
    });
    expect(t.registrarUrls).toEqual(['https://rdap.markmonitor.com/rdap/domain/GOOGLE.COM']);

    t.advance(RDAP_TTL_SECONDS - 1);
    const again = await lookupRdap(t.deps, 'google.com', 'domain');
    expect(again.cache).toEqual({
      hit: true,
      maxAge: 1,
      expiresAt: 1_700_000_000_000 + RDAP_TTL_SECONDS * 1000,
    });
    expect(t.primary.calls).toBe(1);
    expect(t.registrarUrls).toHaveLength(1);
  });

  it('a failing registrar leaves registrar null with a note, and the answer is not cached', async () => {
    const t = setup({
      primary: () => found(fixture('rdap/verisign-com-domain-google.com.json')),
      registrar: async () => {
        throw new ProviderError('http_status', 'HTTP 503 from rdap.markmonitor.com');
      },
    });
    const { body, cache } = await lookupRdap(t.deps, 'google.com', 'domain');
    expect(body.registrar).toBeNull();
    expect(body.notes).toEqual([
      expect.stringMatching(/registrar lookup at rdap\.markmonitor\.com failed \(http_status: HTTP 503/),
    ]);
    expect(body.registry).toMatchObject({ ldh_name: 'google.com' });
    expect(cache).toEqual({ hit: false, maxAge: 0, expiresAt: 0 });
    await lookupRdap(t.deps, 'google.com', 'domain');
    expect(t.primary.calls).toBe(2);
  });

  it('a registrar 404 is an answer: registrar null, a note, cached normally', async () => {
    const t = setup({
      primary: () => found(fixture('rdap/verisign-com-domain-google.com.json')),
      registrar: async (url) => ({ status: 'not_found', url, redirects: 0 }),
    });
    const { body, cache } = await lookupRdap(t.deps, 'google.com', 'domain');
    expect(body.registrar).toBeNull();
    expect(body.notes[0]).toMatch(/no record/);
    expect(cache.maxAge).toBe(RDAP_TTL_SECONDS);
  });

  it('does not follow a registrar link over plain http', async () => {
    const object = {
      objectClassName: 'domain',
      ldhName: 'a.test',
      links: [
        { rel: 'related', type: 'application/rdap+json', href: 'http://registrar.example/domain/a.test' },
      ],
    };
    const t = setup({ primary: () => found(object, 'https://reg.example/domain/a.test') });
    const { body } = await lookupRdap(t.deps, 'a.test', 'domain');
    expect(body.registrar).toBeNull();
    expect(body.notes[0]).toMatch(/not HTTPS/);
    expect(t.registrarUrls).toEqual([]);
  });

  it('falls back to the bootstrap after an operational failure: providers_tried [failed, ok]', async () => {
    const t = setup({
      primary: () => new ProviderError('http_status', 'HTTP 503 from rdap.org'),
      fallback: () =>
        found(fixture('rdap/cctld-fr-domain-lemonde.fr.json'), 'https://rdap.nic.fr/domain/lemonde.fr'),
    });
    const { body } = await lookupRdap(t.deps, 'lemonde.fr', 'domain');
    expect(body.source_id).toBe('bootstrap');
    expect(body.providers_tried).toEqual([
      {
        id: 'aggregator',
        name: 'aggregator',
        status: 'failed',
        error: 'http_status: HTTP 503 from rdap.org',
      },
      { id: 'bootstrap', name: 'bootstrap', status: 'ok' },
    ]);
    expect(body.registrar).toBeNull();
    expect(body.notes).toEqual([]); // a thick registry has no referral: nothing to explain
  });

  it('not registered → 404 naming the registry, with providers_tried, cached 5 min', async () => {
    const t = setup({
      primary: () => ({
        outcome: 'not_registered',
        url: 'https://rdap.verisign.example/com/v1/domain/nope.com',
      }),
    });
    const err = await rejection(lookupRdap(t.deps, 'nope.com', 'domain'));
    expect(err).toMatchObject({ statusCode: 404, code: 'not_registered' });
    expect(err.message).toMatch(/nope\.com is not registered/);
    expect(err.providersTried).toEqual([{ id: 'aggregator', name: 'aggregator', status: 'ok' }]);

    t.advance(RDAP_NOT_FOUND_TTL_SECONDS - 1);
    await rejection(lookupRdap(t.deps, 'nope.com', 'domain'));
    expect(t.primary.calls).toBe(1);
    t.advance(1);
    await rejection(lookupRdap(t.deps, 'nope.com', 'domain'));
    expect(t.primary.calls).toBe(2);
  });

  it('a TLD without RDAP service → 404 saying so', async () => {
    const t = setup({
      primary: () => new ProviderError('upstream_error', 'rdap.org answered 404 itself'),
      fallback: () => ({ outcome: 'no_service', scope: '.example' }),
    });
    const err = await rejection(lookupRdap(t.deps, 'a.example', 'domain'));
    expect(err).toMatchObject({ statusCode: 404, code: 'no_rdap_service' });
    expect(err.message).toMatch(/\.example TLD publishes no RDAP service/);
    expect(err.providersTried?.map((a) => a.status)).toEqual(['failed', 'ok']);
  });

  it('every source failing → 502 with providers_tried, not cached', async () => {
    const t = setup({
      primary: () => new ProviderError('timeout', 'no answer'),
      fallback: () => new ProviderError('rate_limited', 'HTTP 429 from rdap.example'),
    });
    const err = await rejection(lookupRdap(t.deps, 'a.test', 'domain'));
    expect(err).toMatchObject({ statusCode: 502, code: 'upstream_failed' });
    expect(err.providersTried?.map((a) => a.status)).toEqual(['failed', 'failed']);
    await rejection(lookupRdap(t.deps, 'a.test', 'domain'));
    expect(t.primary.calls).toBe(2);
  });

  it('IP networks: canonical address, no registrar follow-up', async () => {
    const seen: RdapQuery[] = [];
    const t = setup({
      primary: (q) => {
        seen.push(q);
        return found(
          fixture('rdap/arin-ip-2606-4700-4700--1111.json'),
          'https://rdap.arin.example/registry/ip/2606:4700:4700::1111',
        );
      },
    });
    const { body } = await lookupRdap(t.deps, '2606:4700:4700:0:0:0:0:1111', 'ip');
    expect(seen).toEqual([{ kind: 'ip', address: '2606:4700:4700::1111', version: 6 }]);
    expect(body).toMatchObject({
      target: '2606:4700:4700::1111',
      type: 'ip',
      registrar: null,
      registry: { cidrs: ['2606:4700::/32'] },
    });
  });

  it('bad input is a 400 before any source is asked', async () => {
    const t = setup({ primary: () => new ProviderError('network', 'unused') });
    for (const [target, type] of [
      ['10.0.0.1', 'ip'],
      ['::1', 'ip'],
      ['[::ffff:127.0.0.1]', 'ip'],
      ['example.com', 'ip'],
      ['exa mple.com', 'domain'],
      ['1.1.1.1', 'domain'],
    ] as const) {
      const err = await rejection(lookupRdap(t.deps, target, type));
      expect(err.statusCode, `${target} ${type}`).toBe(400);
    }
    expect(t.primary.calls).toBe(0);
  });
});
