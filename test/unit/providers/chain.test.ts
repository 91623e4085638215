import { describe, expect, it } from 'vitest';
import { CachedLoader } from '../../../src/cache/cached.js';
import { MemoryCache } from '../../../src/cache/memory.js';
import { AppError, ProviderError } from '../../../src/errors.js';
import { ProviderChain } from '../../../src/providers/chain.js';
import { ProviderRegistry } from '../../../src/providers/registry.js';
import { NO_DATA, type Provider, type ProviderInfo } from '../../../src/providers/types.js';

type Answer = { kind: 'found'; value: string } | { kind: 'not_found' };

/** A fake adapter: counts calls and does what its script says. */
class FakeProvider implements Provider {
  calls = 0;
  readonly info: ProviderInfo;
  constructor(
    id: string,
    private readonly behaviour: () => Promise<Answer>,
    configured = true,
  ) {
    this.info = {
      id,
      name: `Fake ${id}`,
      capabilities: ['test'],
      docs_url: 'https://example.test/docs',
      access: configured ? 'none' : 'api_key',
      configured,
      endpoint: 'https://example.test',
    };
  }
  lookup(): Promise<Answer> {
    this.calls++;
    return this.behaviour();
  }
}

const ok = (value: string) => async (): Promise<Answer> => ({ kind: 'found', value });
const notFound = async (): Promise<Answer> => ({ kind: 'not_found' });
const http503 = async (): Promise<Answer> => {
  throw new ProviderError('http_status', 'HTTP 503 from example.test');
};
const never = () => new Promise<Answer>(() => {});

function setup(timeoutMs = 1000) {
  let now = 1_000_000;
  const clock = () => now;
  const registry = new ProviderRegistry(clock);
  const chain = new ProviderChain({
    loader: new CachedLoader(new MemoryCache({ clock }), { clock }),
    registry,
    timeoutMs,
  });
  return { chain, registry, advance: (ms: number) => (now += ms) };
}

function run(chain: ProviderChain, providers: FakeProvider[], key: string | undefined = 'q') {
  return chain.run({
    capability: 'test',
    providers,
    key,
    call: (p) => p.lookup(),
    ttl: (answer) => (answer.kind === 'found' ? 60 : 30),
  });
}

describe('ProviderChain', () => {
  it('uses the primary and never calls the fallback when the primary answers', async () => {
    const { chain } = setup();
    const primary = new FakeProvider('primary', ok('a'));
    const fallback = new FakeProvider('fallback', ok('b'));
    const result = await run(chain, [primary, fallback]);
    expect(result.value).toEqual({ kind: 'found', value: 'a' });
    expect(result.source).toBe('Fake primary');
    expect(result.source_id).toBe('primary');
    expect(result.providers_tried).toEqual([{ id: 'primary', name: 'Fake primary', status: 'ok' }]);
    expect(fallback.calls).toBe(0);
  });

  it('falls back after a 503 and records [failed, ok]', async () => {
    const { chain } = setup();
    const primary = new FakeProvider('primary', http503);
    const fallback = new FakeProvider('fallback', ok('b'));
    const result = await run(chain, [primary, fallback]);
    expect(result.source_id).toBe('fallback');
    expect(result.providers_tried.map((a) => [a.id, a.status])).toEqual([
      ['primary', 'failed'],
      ['fallback', 'ok'],
    ]);
    expect(result.providers_tried[0]?.error).toMatch(/http_status/);
  });

  it('stops at a valid negative answer: no fallback', async () => {
    const { chain } = setup();
    const primary = new FakeProvider('primary', notFound);
    const fallback = new FakeProvider('fallback', ok('b'));
    const result = await run(chain, [primary, fallback]);
    expect(result.value).toEqual({ kind: 'not_found' });
    expect(fallback.calls).toBe(0);
  });

  it('answers 502 with providers_tried when all fail, and caches nothing', async () => {
    const { chain } = setup();
    const primary = new FakeProvider('primary', http503);
    const fallback = new FakeProvider('fallback', http503);
    const err = await run(chain, [primary, fallback]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).statusCode).toBe(502);
    expect((err as AppError).toBody().providers_tried?.map((a) => a.status)).toEqual(['failed', 'failed']);
    // Not cached: a second request asks the providers again.
    await run(chain, [primary, fallback]).catch(() => undefined);
    expect(primary.calls).toBe(2);
    expect(fallback.calls).toBe(2);
  });

  it('skips a fallback whose key is not configured, and does not list it as tried', async () => {
    const { chain } = setup();
    const primary = new FakeProvider('primary', http503);
    const keyless = new FakeProvider('keyless', ok('b'), false);
    const err = (await run(chain, [primary, keyless]).catch((e: unknown) => e)) as AppError;
    expect(err.statusCode).toBe(502);
    expect(err.toBody().providers_tried?.map((a) => a.id)).toEqual(['primary']);
    expect(keyless.calls).toBe(0);
  });

  it('coalesces 50 concurrent identical requests into one upstream call', async () => {
    const { chain } = setup();
    let release: (a: Answer) => void = () => {};
    const primary = new FakeProvider('primary', () => new Promise<Answer>((r) => (release = r)));
    const pending = Array.from({ length: 50 }, () => run(chain, [primary]));
    await new Promise((r) => setImmediate(r));
    release({ kind: 'found', value: 'x' });
    const results = await Promise.all(pending);
    expect(primary.calls).toBe(1);
    expect(results.every((r) => r.value.kind === 'found')).toBe(true);
  });

  it('serves a cached answer (HIT) until its lifetime ends, then asks again', async () => {
    const { chain, advance } = setup();
    const primary = new FakeProvider('primary', ok('a'));
    const first = await run(chain, [primary]);
    const second = await run(chain, [primary]);
    expect(first.cache).toEqual({ hit: false, maxAge: 60, expiresAt: 1_000_000 + 60_000 });
    expect(second.cache.hit).toBe(true);
    expect(second.providers_tried).toEqual(first.providers_tried);
    advance(30_000);
    expect((await run(chain, [primary])).cache).toEqual({
      hit: true,
      maxAge: 30,
      expiresAt: 1_000_000 + 60_000,
    });
    advance(31_000);
    expect((await run(chain, [primary])).cache.hit).toBe(false);
    expect(primary.calls).toBe(2);
  });

  it('times an attempt out after timeoutMs even if the adapter ignores its signal', async () => {
    const { chain } = setup(50);
    const primary = new FakeProvider('primary', never);
    const fallback = new FakeProvider('fallback', ok('b'));
    const result = await run(chain, [primary, fallback]);
    expect(result.providers_tried[0]).toMatchObject({ id: 'primary', status: 'failed' });
    expect(result.providers_tried[0]?.error).toMatch(/^timeout/);
    expect(result.source_id).toBe('fallback');
  });

  it('passes an AbortSignal that fires at the timeout', async () => {
    const { chain } = setup(50);
    let seen: AbortSignal | undefined;
    const err = await chain
      .run({
        capability: 'test',
        providers: [new FakeProvider('p', never)],
        call: (_p, signal) => {
          seen = signal;
          return never();
        },
        ttl: () => 0,
      })
      .catch((e: unknown) => e);
    expect((err as AppError).statusCode).toBe(502);
    expect(seen?.aborted).toBe(true);
  });

  it('lets one request override the per-attempt timeout (long measurements), both ways', async () => {
    const { chain } = setup(50);
    const slow = () =>
      new FakeProvider(
        'slow',
        () => new Promise<Answer>((r) => setTimeout(() => r({ kind: 'found', value: 'late' }), 120)),
      );
    const request = (timeoutMs: number) =>
      chain.run({
        capability: 'test',
        providers: [slow()],
        call: (p) => p.lookup(),
        ttl: () => 0,
        timeoutMs,
      });
    // Longer than the chain default: the 120 ms answer arrives.
    expect((await request(1000)).value).toEqual({ kind: 'found', value: 'late' });
    // Shorter than the answer: a timeout naming the overriding value.
    const err = (await request(20).catch((e: unknown) => e)) as AppError;
    expect(err.statusCode).toBe(502);
    expect(err.providersTried?.[0]?.error).toBe('timeout: no answer within 20 ms');
  });

  it('lets a bug in an adapter (a TypeError) through as itself: no failure recorded, no fallback asked', async () => {
    const { chain, registry } = setup();
    const broken = new FakeProvider('broken', async () => {
      throw new TypeError("Cannot read properties of undefined (reading 'x')");
    });
    registry.registerChain('test', [broken]);
    const fallback = new FakeProvider('fallback', ok('b'));
    await expect(run(chain, [broken, fallback])).rejects.toBeInstanceOf(TypeError);
    expect(fallback.calls).toBe(0);
    expect(registry.list()[0]?.status).toMatchObject({ consecutive_failures: 0, last_error: null });
    // Nothing was cached: the next call asks again.
    await expect(run(chain, [broken, fallback])).rejects.toBeInstanceOf(TypeError);
    expect(broken.calls).toBe(2);
  });

  it('takes NO_DATA as "nothing here": the next provider is asked, and it is not a failure', async () => {
    const { chain, registry } = setup();
    const empty = new FakeProvider('empty', ok('unused'));
    const fallback = new FakeProvider('fallback', ok('b'));
    registry.registerChain('test', [empty, fallback]);
    const result = await chain.run({
      capability: 'test',
      providers: [empty, fallback],
      key: 'nd',
      call: async (p) => {
        if (p !== empty) return p.lookup();
        p.calls++;
        return NO_DATA;
      },
      ttl: () => 60,
    });
    expect(result.value).toEqual({ kind: 'found', value: 'b' });
    expect(empty.calls).toBe(1);
    expect(result.providers_tried).toEqual([
      { id: 'empty', name: 'Fake empty', status: 'no_data' },
      { id: 'fallback', name: 'Fake fallback', status: 'ok' },
    ]);
    const status = registry.list().find((p) => p.id === 'empty')?.status;
    expect(status).toMatchObject({ consecutive_failures: 0, last_error: null, last_failure_at: null });
    expect(status?.last_success_at).toEqual(expect.any(String));
  });

  it('answers 404 with providers_tried when every provider had no data, 502 when one of them failed', async () => {
    const { chain } = setup();
    const a = new FakeProvider('a', ok('x'));
    const b = new FakeProvider('b', http503);
    const noData = (providers: FakeProvider[], key: string) =>
      chain.run({
        capability: 'test',
        providers,
        key,
        call: async (p) => (p === a ? NO_DATA : p.lookup()),
        ttl: () => 60,
      });
    const none = await noData([a], 'k1').catch((err: unknown) => err);
    expect(none).toBeInstanceOf(AppError);
    expect(none).toMatchObject({ statusCode: 404, code: 'not_found' });
    expect((none as AppError).providersTried).toEqual([{ id: 'a', name: 'Fake a', status: 'no_data' }]);
    const failed = await noData([a, b], 'k2').catch((err: unknown) => err);
    expect(failed).toMatchObject({ statusCode: 502, code: 'upstream_failed' });
  });

  it('records a timeout, not a bug, when an adapter rejects with an AbortError after its deadline', async () => {
    const { chain } = setup(50);
    const late = new FakeProvider('late', async () => {
      await new Promise((r) => setTimeout(r, 80));
      throw new DOMException('This operation was aborted', 'AbortError');
    });
    const fallback = new FakeProvider('fallback', ok('b'));
    const result = await run(chain, [late, fallback]);
    expect(result.providers_tried[0]?.error).toMatch(/^timeout: /);
  });

  it('reports runtime status to the registry for registered providers', async () => {
    const { chain, registry } = setup();
    const primary = new FakeProvider('primary', http503);
    const fallback = new FakeProvider('fallback', ok('b'));
    registry.registerChain('test', [primary, fallback]);
    await run(chain, [primary, fallback], undefined);
    const byId = Object.fromEntries(registry.list().map((p) => [p.id, p]));
    expect(byId.primary?.roles).toEqual({ test: 'primary' });
    expect(byId.fallback?.roles).toEqual({ test: 'fallback' });
    expect(byId.primary?.status.consecutive_failures).toBe(1);
    expect(byId.primary?.status.last_error).toMatch(/HTTP 503/);
    expect(byId.fallback?.status.last_success_at).toBe(new Date(1_000_000).toISOString());
  });
});
