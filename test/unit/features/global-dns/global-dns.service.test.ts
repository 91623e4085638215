/**
 * The service over the real provider chain and cache, with a scripted
 * provider: reuse of identical measurements for 60 s (and only complete ones),
 * joining a measurement in flight, the chain's timeout sized for polling, and
 * the shape of the answer.
 */
import { describe, expect, it } from 'vitest';
import { CachedLoader } from '../../../../src/cache/cached.js';
import { MemoryCache } from '../../../../src/cache/memory.js';
import { AppError, ProviderError } from '../../../../src/errors.js';
import {
  createGlobalDnsService,
  REUSE_SECONDS,
} from '../../../../src/features/global-dns/global-dns.service.js';
import { ProviderChain } from '../../../../src/providers/chain.js';
import type {
  GlobalDnsMeasurement,
  GlobalDnsProbeResult,
  GlobalDnsProvider,
  GlobalDnsQuestion,
  QuotaRefusal,
} from '../../../../src/providers/global-dns/index.js';
import { ProviderRegistry } from '../../../../src/providers/registry.js';

const COUNTRIES = ['US', 'BR', 'GB', 'DE', 'ZA', 'IN', 'SG', 'JP', 'AU', 'CA'];

const probe = (country: string, address: string): GlobalDnsProbeResult => ({
  country,
  city: 'City',
  continent: 'EU',
  asn: 64500,
  network: 'Net',
  resolver: '192.0.2.53',
  status: 'finished',
  rcode: 'NOERROR',
  answers: [{ name: 'example.com', type: 'A', ttl: 60, value: address }],
  time_ms: 10,
});

class ScriptedProvider implements GlobalDnsProvider {
  readonly info = {
    id: 'scripted',
    name: 'Scripted',
    capabilities: ['global-dns'],
    docs_url: 'https://example.test',
    access: 'none' as const,
    configured: true,
    endpoint: 'https://example.test',
  };
  readonly questions: GlobalDnsQuestion[] = [];
  signals: AbortSignal[] = [];
  /** What quotaRefusal() answers, and the country counts it was asked about. */
  refusal: QuotaRefusal | undefined;
  readonly refusalAsked: number[] = [];
  constructor(
    public next: () => Promise<GlobalDnsMeasurement>,
    readonly maxDurationMs = 30_000,
  ) {}
  measure(question: GlobalDnsQuestion, signal: AbortSignal): Promise<GlobalDnsMeasurement> {
    this.questions.push(question);
    this.signals.push(signal);
    return this.next();
  }
  quotaRefusal(countries: number): QuotaRefusal | undefined {
    this.refusalAsked.push(countries);
    return this.refusal;
  }
}

const complete = async (): Promise<GlobalDnsMeasurement> => ({
  id: 'm1',
  complete: true,
  probes: COUNTRIES.filter((c) => c !== 'ZA').map((c) => probe(c, '192.0.2.1')),
});

function setup(provider: ScriptedProvider, chainTimeoutMs = 5_000) {
  let now = Date.UTC(2025, 0, 1);
  const clock = () => now;
  const chain = new ProviderChain({
    loader: new CachedLoader(new MemoryCache({ clock }), { clock }),
    registry: new ProviderRegistry(clock),
    timeoutMs: chainTimeoutMs,
  });
  const service = createGlobalDnsService({ chain, providers: [provider], countries: COUNTRIES, clock });
  return { service, advance: (ms: number) => (now += ms) };
}

describe('global DNS service', () => {
  it('shapes one result per country, unmeasured ones included, with the summary and attribution', async () => {
    const provider = new ScriptedProvider(complete);
    const { service } = setup(provider);
    const body = await service.measure('Example.COM.', 'A');
    expect(provider.questions).toEqual([{ target: 'example.com', type: 'A', countries: COUNTRIES }]);
    expect(body).toMatchObject({
      target: 'example.com',
      type: 'A',
      measurement_id: 'm1',
      measured_at: '2025-01-01T00:00:00.000Z',
      reused: false,
      complete: true,
      countries_requested: COUNTRIES,
      source: 'Scripted',
      source_id: 'scripted',
      providers_tried: [{ id: 'scripted', name: 'Scripted', status: 'ok' }],
      summary: { measured: 9, answered: 9, unmeasured: ['ZA'], distinct_answer_sets: 1, consistent: true },
    });
    expect(body.results.map((r) => r.country)).toEqual(COUNTRIES);
    expect(body.results[4]).toMatchObject({ country: 'ZA', status: 'no_probe' });
  });

  it(`reuses an identical complete measurement for ${REUSE_SECONDS} s and says so, then measures again`, async () => {
    let n = 0;
    const provider = new ScriptedProvider(async () => ({ ...(await complete()), id: `m${++n}` }));
    const { service, advance } = setup(provider);
    const first = await service.measure('example.com', 'A');
    advance(59_000);
    const second = await service.measure('EXAMPLE.com.', 'A');
    expect(second).toMatchObject({ reused: true, measurement_id: 'm1', measured_at: first.measured_at });
    // A different question is a different measurement.
    expect((await service.measure('example.com', 'AAAA')).reused).toBe(false);
    advance(2_000);
    expect(await service.measure('example.com', 'A')).toMatchObject({ reused: false, measurement_id: 'm3' });
    expect(provider.questions).toHaveLength(3);
  });

  it('does not keep a partial measurement (deadline passed): the next caller gets a new one', async () => {
    const provider = new ScriptedProvider(async () => ({ id: 'partial', complete: false, probes: [] }));
    const { service } = setup(provider);
    expect((await service.measure('example.com', 'A')).complete).toBe(false);
    expect((await service.measure('example.com', 'A')).reused).toBe(false);
    expect(provider.questions).toHaveLength(2);
  });

  it('joins concurrent identical requests to one measurement; the joiners are told it is reused', async () => {
    let release: () => void = () => {};
    const gate = new Promise<void>((r) => {
      release = r;
    });
    const provider = new ScriptedProvider(async () => {
      await gate;
      return complete();
    });
    const { service } = setup(provider);
    const calls = [
      service.measure('example.com', 'A'),
      service.measure('example.com', 'A'),
      service.measure('example.com', 'A'),
    ];
    release();
    const bodies = await Promise.all(calls);
    expect(provider.questions).toHaveLength(1);
    expect(bodies.map((b) => b.reused)).toEqual([false, true, true]);
  });

  it('never keeps a failure: a 502 with providers_tried, and the next call asks again', async () => {
    const provider = new ScriptedProvider(async () => {
      throw new ProviderError('http_status', 'HTTP 503 from api.globalping.io');
    });
    const { service } = setup(provider);
    const err = (await service.measure('example.com', 'A').catch((e: unknown) => e)) as AppError;
    expect(err).toBeInstanceOf(AppError);
    expect(err.statusCode).toBe(502);
    expect(err.providersTried).toEqual([
      {
        id: 'scripted',
        name: 'Scripted',
        status: 'failed',
        error: 'http_status: HTTP 503 from api.globalping.io',
      },
    ]);
    provider.next = complete;
    expect((await service.measure('example.com', 'A')).reused).toBe(false);
    expect(provider.questions).toHaveLength(2);
  });

  // Regression guard: with the chain's default 5 s per attempt, every measurement
  // (create + ~20 s of polling) would be cut off as a timeout.
  it("gives the provider its own worst case, not the chain's default per-attempt timeout", async () => {
    const provider = new ScriptedProvider(async () => {
      await new Promise((r) => setTimeout(r, 150));
      return complete();
    }, 200);
    const { service } = setup(provider, 50);
    expect((await service.measure('example.com', 'A')).complete).toBe(true);
  });

  describe('while the provider reports its quota spent', () => {
    const SPENT: QuotaRefusal = {
      resetAt: Date.UTC(2025, 0, 1, 0, 30),
      retryAfterSeconds: 1800,
      reason: '5 of 250 tests left this hour, a measurement needs 10; resets at 2025-01-01 00:30 UTC',
    };
    const quotaFailure = async () => {
      throw new ProviderError('rate_limited', 'hourly test quota spent (...); not asked');
    };

    it('answers 503 (not 502, not 429) naming the reason and the reset, Retry-After counting down to it', async () => {
      const provider = new ScriptedProvider(quotaFailure);
      provider.refusal = SPENT;
      const { service } = setup(provider);
      const err = (await service.measure('example.com', 'A').catch((e: unknown) => e)) as AppError;
      expect(err).toBeInstanceOf(AppError);
      expect(err.statusCode).toBe(503);
      expect(err.code).toBe('unavailable');
      expect(err.headers).toEqual({ 'retry-after': '1800' });
      expect(err.message).toBe(
        'global DNS measurements are paused until 2025-01-01 00:30 UTC: the measurement quota of this ' +
          `service is spent (Scripted: ${SPENT.reason})`,
      );
      expect(err.providersTried).toEqual([
        {
          id: 'scripted',
          name: 'Scripted',
          status: 'failed',
          error: expect.stringMatching(/^rate_limited: /),
        },
      ]);
      // Asked about a measurement from the ten configured countries.
      expect(provider.refusalAsked).toEqual([10]);
    });

    it('still answers a reusable measurement from the cache', async () => {
      const provider = new ScriptedProvider(complete);
      const { service } = setup(provider);
      await service.measure('example.com', 'A');
      provider.next = quotaFailure;
      provider.refusal = SPENT;
      expect((await service.measure('example.com', 'A')).reused).toBe(true);
    });

    it('leaves any other failure a 502, even a 429 the quota does not explain', async () => {
      const provider = new ScriptedProvider(async () => {
        throw new ProviderError('http_status', 'HTTP 503 from api.globalping.io');
      });
      provider.refusal = SPENT;
      const { service } = setup(provider);
      const failed = (await service.measure('example.com', 'A').catch((e: unknown) => e)) as AppError;
      expect(failed.statusCode).toBe(502);
      provider.next = quotaFailure;
      provider.refusal = undefined;
      const limited = (await service.measure('example.com', 'A').catch((e: unknown) => e)) as AppError;
      expect(limited.statusCode).toBe(502);
    });
  });

  it('rejects bad input before any measurement', async () => {
    const provider = new ScriptedProvider(complete);
    const { service } = setup(provider);
    const err = (await service.measure('192.0.2.1', 'A').catch((e: unknown) => e)) as AppError;
    expect(err.statusCode).toBe(400);
    expect(provider.questions).toHaveLength(0);
  });
});
