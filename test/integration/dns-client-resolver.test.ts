/**
 * The resolver facade through the real provider chain, cache and registry,
 * against the fake resolver: fallback only on operational failure, negative
 * answers stop the chain, TTL-bounded caching with a controlled clock.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CachedLoader } from '../../src/cache/cached.js';
import { MemoryCache } from '../../src/cache/memory.js';
import { AppError } from '../../src/errors.js';
import { ProviderChain } from '../../src/providers/chain.js';
import {
  createDnsProviders,
  DnsResolver,
  type DnsTransportProvider,
  InvalidDnsNameError,
} from '../../src/providers/dns/index.js';
import { ProviderRegistry } from '../../src/providers/registry.js';
import { type FakeDnsServer, startFakeDnsServer } from '../fakes/dns-server.js';

let dns: FakeDnsServer;
const opened: DnsResolver[] = [];

beforeAll(async () => {
  dns = await startFakeDnsServer();
});

afterEach(() => dns.reset());

afterAll(async () => {
  await Promise.all(opened.map((r) => r.close()));
  await dns.close();
});

/** A resolver over [UDP primary, DoH fallback] with its own cache and a clock the test moves. */
function setup(opts: { timeoutMs?: number; urls?: string[] } = {}) {
  let now = Date.UTC(2025, 0, 1);
  const clock = () => now;
  const registry = new ProviderRegistry(clock);
  const providers: DnsTransportProvider[] = createDnsProviders(opts.urls ?? [dns.udp, dns.doh], {
    ca: dns.caPem,
    udpRetryAfterMs: 100,
  });
  registry.registerChain('dns', providers);
  const chain = new ProviderChain({
    loader: new CachedLoader(new MemoryCache({ clock }), { clock }),
    registry,
    timeoutMs: opts.timeoutMs ?? 2000,
  });
  const resolver = new DnsResolver(chain, providers);
  opened.push(resolver);
  const [primary, fallback] = providers.map((p) => p.info);
  return {
    resolver,
    registry,
    primary: primary!,
    fallback: fallback!,
    advance: (seconds: number) => {
      now += seconds * 1000;
    },
  };
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (err) {
    return err;
  }
  throw new Error('expected a rejection');
}

describe('DnsResolver', () => {
  it('answers from the primary and says so', async () => {
    const { resolver, primary } = setup();
    const result = await resolver.resolve('WWW.Example.Test.', 'A');
    expect(result.value.rcode).toBe('NOERROR');
    expect(result.value.answers.map((rr) => rr.type)).toEqual(['CNAME', 'A']);
    expect(result.source).toBe(primary.name);
    expect(result.source_id).toBe(primary.id);
    expect(result.providers_tried).toEqual([{ id: primary.id, name: primary.name, status: 'ok' }]);
    expect(result.cache).toEqual({ hit: false, maxAge: 120, expiresAt: Date.UTC(2025, 0, 1) + 120_000 });
    expect(dns.queries.map((q) => q.name)).toEqual(['www.example.test']);
  });

  it('falls back after a SERVFAIL, listing both attempts', async () => {
    const { resolver, primary, fallback, registry } = setup();
    dns.set({ rcode: 'SERVFAIL' }, 'udp');
    const result = await resolver.resolve('example.test', 'MX');
    expect(result.source_id).toBe(fallback.id);
    expect(result.providers_tried).toEqual([
      { id: primary.id, name: primary.name, status: 'failed', error: 'upstream_error: SERVFAIL' },
      { id: fallback.id, name: fallback.name, status: 'ok' },
    ]);
    expect(result.value.answers).toHaveLength(2);
    expect(registry.list().find((p) => p.id === primary.id)?.status.consecutive_failures).toBe(1);
  });

  it('falls back after a REFUSED and after a timeout', async () => {
    const { resolver, fallback } = setup({ timeoutMs: 300 });
    dns.set({ rcode: 'REFUSED' }, 'udp');
    expect((await resolver.resolve('example.test', 'A')).source_id).toBe(fallback.id);

    dns.reset();
    dns.set({ drop: true }, 'udp');
    const result = await resolver.resolve('example.test', 'AAAA');
    expect(result.source_id).toBe(fallback.id);
    expect(result.providers_tried[0]).toMatchObject({
      status: 'failed',
      error: expect.stringMatching(/^timeout: /),
    });
  });

  it('stops at NXDOMAIN: a negative answer is an answer', async () => {
    const { resolver, primary } = setup();
    const result = await resolver.resolve('nope.example.test', 'A');
    expect(result.value.rcode).toBe('NXDOMAIN');
    expect(result.providers_tried).toEqual([{ id: primary.id, name: primary.name, status: 'ok' }]);
    expect(dns.counts.doh).toBe(0);
  });

  it('stops at NODATA too', async () => {
    const { resolver } = setup();
    const result = await resolver.resolve('mail.example.test', 'AAAA');
    expect(result.value).toMatchObject({ rcode: 'NOERROR', answers: [] });
    expect(result.providers_tried).toHaveLength(1);
  });

  it('answers 502 with every attempt when all resolvers fail, and caches nothing', async () => {
    const { resolver, primary, fallback } = setup();
    dns.set({ rcode: 'SERVFAIL' });
    const err = await rejection(resolver.resolve('example.test', 'A'));
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).statusCode).toBe(502);
    expect((err as AppError).code).toBe('upstream_failed');
    expect((err as AppError).providersTried).toEqual([
      { id: primary.id, name: primary.name, status: 'failed', error: 'upstream_error: SERVFAIL' },
      { id: fallback.id, name: fallback.name, status: 'failed', error: 'upstream_error: SERVFAIL' },
    ]);

    dns.reset();
    const again = await resolver.resolve('example.test', 'A');
    expect(again.cache.hit).toBe(false);
    expect(dns.counts.udp).toBe(1);
  });

  it('caches an answer for its smallest TTL, then asks again', async () => {
    const { resolver, advance } = setup();
    const first = await resolver.resolve('www.example.test', 'A'); // CNAME 600, A 120
    expect(first.cache).toEqual({ hit: false, maxAge: 120, expiresAt: Date.UTC(2025, 0, 1) + 120_000 });

    advance(100);
    const second = await resolver.resolve('www.example.test.', 'A');
    // The entry's own expiry, 20 s ahead of the moved clock.
    expect(second.cache).toEqual({ hit: true, maxAge: 20, expiresAt: Date.UTC(2025, 0, 1) + 120_000 });
    expect(second.value).toEqual(first.value);
    expect(dns.counts.udp).toBe(1);

    advance(21);
    const third = await resolver.resolve('www.example.test', 'A');
    expect(third.cache.hit).toBe(false);
    expect(dns.counts.udp).toBe(2);
  });

  it('keys the cache by name and type', async () => {
    const { resolver } = setup();
    await resolver.resolve('example.test', 'A');
    await resolver.resolve('example.test', 'AAAA');
    await resolver.resolve('EXAMPLE.test', 'A');
    expect(dns.counts.udp).toBe(2);
  });

  it('caches NXDOMAIN for min(SOA TTL, SOA minimum), capped at 300 s', async () => {
    const { resolver, advance } = setup();
    // example.test: SOA TTL 3600, minimum 60.
    expect((await resolver.resolve('nope.example.test', 'A')).cache.maxAge).toBe(60);
    // example.com: SOA TTL 3600, minimum 600 → the 300 s cap.
    expect((await resolver.resolve('nope.example.com', 'A')).cache.maxAge).toBe(300);
    advance(61);
    expect((await resolver.resolve('nope.example.test', 'A')).cache.hit).toBe(false);
    expect((await resolver.resolve('nope.example.com', 'A')).cache.hit).toBe(true);
  });

  it('shares one upstream query between concurrent identical lookups', async () => {
    const { resolver } = setup();
    dns.set({ delayMs: 50 });
    const results = await Promise.all([1, 2, 3, 4, 5].map(() => resolver.resolve('example.test', 'TXT')));
    expect(results.every((r) => r.value.rcode === 'NOERROR')).toBe(true);
    expect(dns.counts.udp).toBe(1);
  });

  it('refuses an unaskable name with a 400 before any query', async () => {
    const { resolver } = setup();
    const err = await rejection(resolver.resolve(`${'a'.repeat(64)}.example.test`, 'A'));
    expect(err).toBeInstanceOf(InvalidDnsNameError);
    expect((err as AppError).statusCode).toBe(400);
    expect(dns.queries).toHaveLength(0);
  });

  it('ends a lookup when the caller aborts', async () => {
    const { resolver } = setup({ urls: [dns.doh] });
    dns.set({ delayMs: 1000 });
    const controller = new AbortController();
    const pending = resolver.resolve('example.test', 'A', { signal: controller.signal });
    setTimeout(() => controller.abort(), 50);
    const err = await rejection(pending);
    expect((err as AppError).statusCode).toBe(502);
    expect((err as AppError).providersTried).toHaveLength(1);
  });
});
