/**
 * The CT lookups with their providers and resolver handed in as fakes (the
 * real chain, loader and memory cache): one cached history under both
 * endpoints, expiry against the clock, bounded live resolution, and what is
 * (not) cached.
 */
import { describe, expect, it } from 'vitest';
import { CachedLoader } from '../../../../src/cache/cached.js';
import { MemoryCache } from '../../../../src/cache/memory.js';
import { AppError, ProviderError, upstreamFailed } from '../../../../src/errors.js';
import {
  FALLBACK_TTL,
  lookupCertificates,
  lookupSubdomains,
  MAX_HOSTS,
  MAX_RESOLVED_NAMES,
  parseCtDomain,
  RESOLVE_CONCURRENCY,
  type SubdomainDeps,
} from '../../../../src/features/ct/ct.service.js';
import { ProviderChain } from '../../../../src/providers/chain.js';
import type { CtGap, CtIssuance, CtProvider, CtRecords } from '../../../../src/providers/ct/types.js';
import type { DnsAnswer, DnsRecordType } from '../../../../src/providers/dns/types.js';
import { ProviderRegistry } from '../../../../src/providers/registry.js';

const NOW = Date.parse('2025-06-01T00:00:00Z');
const FLAGS = { aa: false, tc: false, rd: true, ra: true, ad: false, cd: false };

class FakeCt implements CtProvider {
  calls = 0;
  readonly info;
  constructor(
    id: string,
    private readonly answer: () => CtRecords,
  ) {
    this.info = {
      id,
      name: `Fake ${id}`,
      capabilities: ['ct'],
      docs_url: 'https://example.test',
      access: 'none' as const,
      configured: true,
      endpoint: 'https://example.test',
    };
  }
  async issuances(): Promise<CtRecords> {
    this.calls++;
    return this.answer();
  }
}

function issuance(i: number, over: Partial<CtIssuance> = {}): CtIssuance {
  const day = String((i % 28) + 1).padStart(2, '0');
  return {
    id: String(i),
    source_id: 'fake',
    serial: i.toString(16),
    issuer: { name: 'R3', organization: "Let's Encrypt" },
    common_name: null,
    dns_names: [`h${i}.example.com`],
    not_before: `2025-05-${day}T00:00:00Z`,
    not_after: `2025-08-${day}T00:00:00Z`,
    ...over,
  };
}

type Resolve = (name: string, type: DnsRecordType) => Promise<DnsAnswer>;
const noData = async (): Promise<DnsAnswer> => ({
  rcode: 'NXDOMAIN',
  flags: FLAGS,
  answers: [],
  authorities: [],
  ede: [],
});

const EXPIRED_EXCLUDED: CtGap = { reason: 'expired_excluded', detail: 'Expired left out to answer in time.' };
const RESULT_CAP: CtGap = { reason: 'result_cap', detail: 'An arbitrary subset.' };
const UNEXPIRED_ONLY: CtGap = { reason: 'unexpired_only', detail: 'Lists unexpired certificates only.' };

function setup(provider: FakeCt | FakeCt[], resolve: Resolve = noData) {
  const clock = () => NOW;
  const loader = new CachedLoader(new MemoryCache({ clock }), { clock });
  const chain = new ProviderChain({ loader, registry: new ProviderRegistry(clock), timeoutMs: 1000 });
  let labels = 0;
  const deps: SubdomainDeps = {
    chain,
    providers: Array.isArray(provider) ? provider : [provider],
    clock,
    loader,
    dns: {
      resolve: (name, type) =>
        resolve(name, type).then((value) => ({
          value,
          source: 'fake',
          source_id: 'fake',
          providers_tried: [],
          cache: { hit: false, maxAge: 0, expiresAt: 0 },
        })),
    },
    randomLabel: () => `probe${labels++}`,
  };
  return deps;
}

describe('parseCtDomain', () => {
  it('normalizes like every domain input, naming `domain` in errors', () => {
    expect(parseCtDomain('Example.COM.')).toBe('example.com');
    expect(() => parseCtDomain('exa mple.com')).toThrow(/^domain /);
  });
  it('refuses an IP address with a message about CT, not about /api/dns', () => {
    expect(() => parseCtDomain('192.0.2.1')).toThrow(/^domain must be a domain name, not an IP address/);
    expect(() => parseCtDomain('[2001:db8::1]')).toThrow(/not an IP address/);
  });
  it('refuses a bare TLD, which would ask CT for a whole zone', () => {
    const err = (() => {
      try {
        parseCtDomain('com');
      } catch (e) {
        return e as AppError;
      }
    })();
    expect(err?.statusCode).toBe(400);
    expect(err?.message).toMatch(/^domain /);
  });
});

describe('lookupCertificates', () => {
  it('marks issuances expired against the clock, at response time', async () => {
    const provider = new FakeCt('fake', () => ({
      issuances: [
        issuance(1, { not_after: '2025-05-31T23:59:59Z' }),
        issuance(2, { not_before: '2025-05-01T00:00:00Z', not_after: '2025-06-01T00:00:01Z' }),
      ],
      gaps: [],
    }));
    const { body } = await lookupCertificates(setup(provider), 'example.com');
    // Newest not_before first: 1 (May 2) before 2 (May 1).
    expect(body.issuances.map((i) => [i.id, i.expired])).toEqual([
      ['1', true],
      ['2', false],
    ]);
    expect(body).toMatchObject({ domain: 'example.com', total: 2, truncated: false, source_id: 'fake' });
  });

  it('a whole history has no gaps', async () => {
    const { body } = await lookupCertificates(
      setup(new FakeCt('fake', () => ({ issuances: [issuance(1)], gaps: [] }))),
      'example.com',
    );
    expect(body).toMatchObject({ truncated: false, expired_excluded: false, gaps: [] });
  });

  it('an exclude=expired history is flagged both ways, and says why', async () => {
    const provider = new FakeCt('fake', () => ({ issuances: [], gaps: [EXPIRED_EXCLUDED] }));
    const { body } = await lookupCertificates(setup(provider), 'example.com');
    expect(body.truncated).toBe(true);
    expect(body.expired_excluded).toBe(true);
    expect(body.gaps).toEqual([EXPIRED_EXCLUDED]);
  });

  it("a provider's result limit makes the list truncated, not expired_excluded", async () => {
    const provider = new FakeCt('fake', () => ({ issuances: [issuance(1)], gaps: [RESULT_CAP] }));
    const { body } = await lookupCertificates(setup(provider), 'example.com');
    expect(body).toMatchObject({ truncated: true, expired_excluded: false, gaps: [RESULT_CAP] });
  });

  it('the unexpired-only fallback answering says that expired history is missing, and why it answered', async () => {
    const primary = new FakeCt('primary', () => {
      throw new ProviderError('http_status', 'HTTP 503 from example.test');
    });
    const fallback = new FakeCt('fallback', () => ({ issuances: [issuance(1)], gaps: [UNEXPIRED_ONLY] }));
    const deps = setup([primary, fallback]);
    const { body } = await lookupCertificates(deps, 'example.com');
    expect(body).toMatchObject({ truncated: true, expired_excluded: true, source_id: 'fallback' });
    expect(body.gaps).toEqual([
      {
        reason: 'unexpired_only',
        detail:
          'Fake primary failed (see providers_tried), so the fallback answered. Lists unexpired certificates only.',
      },
    ]);
    // The same words from the cache, and in /api/subdomains.
    expect((await lookupCertificates(deps, 'example.com')).body.gaps).toEqual(body.gaps);
    expect((await lookupSubdomains(deps, 'example.com')).body.gaps).toEqual(body.gaps);
    expect(fallback.calls).toBe(1);
  });

  it(`issue 29: a history the fallback gave is reused ${FALLBACK_TTL} s, and a subdomains answer built on it too`, async () => {
    let failing = true;
    const primary = new FakeCt('primary', () => {
      if (failing) throw new ProviderError('http_status', 'HTTP 503 from example.test');
      return { issuances: [issuance(1)], gaps: [] };
    });
    const fallback = new FakeCt('fallback', () => ({ issuances: [issuance(2)], gaps: [UNEXPIRED_ONLY] }));
    const deps = setup([primary, fallback]);
    const certificates = await lookupCertificates(deps, 'example.com');
    expect(certificates.cache).toEqual({
      hit: false,
      maxAge: FALLBACK_TTL,
      expiresAt: NOW + FALLBACK_TTL * 1000,
    });
    const subdomains = await lookupSubdomains(deps, 'example.com');
    expect(subdomains.body.source_id).toBe('fallback');
    expect(subdomains.cache).toEqual({
      hit: false,
      maxAge: FALLBACK_TTL,
      expiresAt: NOW + FALLBACK_TTL * 1000,
    });
    // The primary answering is reused the full hour.
    failing = false;
    const direct = await lookupCertificates(setup([primary, fallback]), 'example.com');
    expect(direct.body.source_id).toBe('primary');
    expect(direct.cache.maxAge).toBe(3600);
  });

  it('an unexpired-only provider answering first says only what it lists', async () => {
    const only = new FakeCt('only', () => ({ issuances: [], gaps: [UNEXPIRED_ONLY] }));
    const { body } = await lookupCertificates(setup(only), 'example.com');
    expect(body.gaps).toEqual([UNEXPIRED_ONLY]);
    expect(body.expired_excluded).toBe(true);
  });
});

describe('lookupSubdomains', () => {
  it('reads the history /api/certificates cached: one provider call for both', async () => {
    const provider = new FakeCt('fake', () => ({
      issuances: [issuance(1)],
      gaps: [],
    }));
    const deps = setup(provider);
    await lookupCertificates(deps, 'example.com');
    const { body, cache } = await lookupSubdomains(deps, 'example.com');
    expect(provider.calls).toBe(1);
    expect(body.hosts.map((h) => h.name)).toEqual(['h1.example.com']);
    expect(body).toMatchObject({ truncated: false, gaps: [] });
    expect(cache).toEqual({ hit: false, maxAge: 1800, expiresAt: NOW + 1_800_000 });
    expect((await lookupSubdomains(deps, 'example.com')).cache.hit).toBe(true);
  });

  it("carries the history's gaps: a provider's result limit makes the host list truncated too", async () => {
    const provider = new FakeCt('fake', () => ({ issuances: [issuance(1)], gaps: [RESULT_CAP] }));
    const { body } = await lookupSubdomains(setup(provider), 'example.com');
    expect(body).toMatchObject({ checked_count: 1, truncated: true, gaps: [RESULT_CAP] });
  });

  it(`resolves at most ${MAX_RESOLVED_NAMES} names, ${RESOLVE_CONCURRENCY} at a time, after the wildcard probes`, async () => {
    const provider = new FakeCt('fake', () => ({
      issuances: Array.from({ length: 70 }, (_, i) => issuance(i)),
      gaps: [],
    }));
    const asked: { name: string; type: string }[] = [];
    const inFlightNames = new Set<string>();
    let peak = 0;
    const resolve: Resolve = async (name, type) => {
      asked.push({ name, type });
      inFlightNames.add(name);
      peak = Math.max(peak, inFlightNames.size);
      await new Promise((r) => setTimeout(r, 2));
      inFlightNames.delete(name);
      return noData();
    };
    const { body } = await lookupSubdomains(setup(provider, resolve), 'example.com');
    expect(body.discovered_count).toBe(70);
    expect(body.checked_count).toBe(50);
    expect(body.truncated).toBe(true);
    expect(body.gaps).toEqual([
      {
        reason: 'unchecked_names',
        detail:
          '20 of 70 names were not resolved (only the 50 most recently valid are): they are marked unchecked.',
      },
    ]);
    expect(peak).toBeLessThanOrEqual(RESOLVE_CONCURRENCY);
    // The three probes come first, A and AAAA each.
    expect(asked.slice(0, 6).map((q) => q.name)).toEqual([
      'probe0.example.com',
      'probe0.example.com',
      'probe1.example.com',
      'probe1.example.com',
      'probe2.example.com',
      'probe2.example.com',
    ]);
    const hostQueries = asked.slice(6);
    expect(hostQueries).toHaveLength(150);
    expect(new Set(hostQueries.map((q) => q.type))).toEqual(new Set(['A', 'AAAA', 'CNAME']));
    const resolved = new Set(hostQueries.map((q) => q.name));
    expect(resolved).toEqual(new Set(body.hosts.slice(0, 50).map((h) => h.name)));
    expect(body.hosts.slice(50).every((h) => h.status === 'unchecked' && h.addresses.length === 0)).toBe(
      true,
    );
  });

  it(`lists at most ${MAX_HOSTS} hosts, and says so`, async () => {
    const provider = new FakeCt('fake', () => ({
      issuances: Array.from({ length: 505 }, (_, i) =>
        issuance(i, { dns_names: [`a${i}.example.com`, `b${i}.example.com`] }),
      ),
      gaps: [],
    }));
    const { body } = await lookupSubdomains(setup(provider), 'example.com');
    expect(body.discovered_count).toBe(1010);
    expect(body.hosts).toHaveLength(MAX_HOSTS);
    expect(body.truncated).toBe(true);
    expect(body.gaps.map((g) => g.reason)).toEqual(['unchecked_names', 'host_cap']);
    expect(body.gaps[1]?.detail).toBe('Only the first 1000 of 1010 names are listed.');
  });

  it('a failed lookup is lookup_failed and the answer is not cached', async () => {
    const provider = new FakeCt('fake', () => ({
      issuances: [issuance(1), issuance(2)],
      gaps: [],
    }));
    let failing = true;
    const resolve: Resolve = async (name, type) => {
      if (failing && name === 'h1.example.com' && type === 'A') throw upstreamFailed('dns', []);
      return noData();
    };
    const deps = setup(provider, resolve);
    const first = await lookupSubdomains(deps, 'example.com');
    expect(first.body.hosts.find((h) => h.name === 'h1.example.com')?.status).toBe('lookup_failed');
    expect(first.body.hosts.find((h) => h.name === 'h2.example.com')?.status).toBe('historical');
    expect(first.cache).toEqual({ hit: false, maxAge: 0, expiresAt: 0 });
    failing = false;
    const second = await lookupSubdomains(deps, 'example.com');
    expect(second.cache.hit).toBe(false);
    expect(second.body.hosts.find((h) => h.name === 'h1.example.com')?.status).toBe('historical');
    // The CT part stayed cached.
    expect(provider.calls).toBe(1);
  });

  it('failed wildcard probes make the wildcard unknown, and the answer uncached', async () => {
    const provider = new FakeCt('fake', () => ({
      issuances: [issuance(1)],
      gaps: [],
    }));
    const resolve: Resolve = async (name) => {
      if (name.startsWith('probe')) throw upstreamFailed('dns', []);
      return noData();
    };
    const { body, cache } = await lookupSubdomains(setup(provider, resolve), 'example.com');
    expect(body.dns_wildcard.detected).toBeNull();
    expect(cache.maxAge).toBe(0);
  });

  it('a bug in the resolver is not disguised as lookup_failed', async () => {
    const provider = new FakeCt('fake', () => ({
      issuances: [issuance(1)],
      gaps: [],
    }));
    const resolve: Resolve = async () => {
      throw new TypeError('bug');
    };
    await expect(lookupSubdomains(setup(provider, resolve), 'example.com')).rejects.toThrow(TypeError);
  });

  it('a CT failure is a 502 and nothing is cached', async () => {
    let fail = true;
    const provider = new FakeCt('fake', () => {
      if (fail) throw new ProviderError('http_status', 'HTTP 503 from example.test');
      return { issuances: [], gaps: [] };
    });
    const deps = setup(provider);
    const err = await lookupSubdomains(deps, 'example.com').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).statusCode).toBe(502);
    fail = false;
    const { body } = await lookupSubdomains(deps, 'example.com');
    expect(body.hosts).toEqual([]);
    expect(provider.calls).toBe(2);
  });
});
