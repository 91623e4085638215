/**
 * The Globalping adapter against a fake Globalping on loopback (real TLS and
 * HTTP, the production HttpClient). Time between polls is virtual: the
 * adapter's sleep records each wait and moves a virtual clock, so the pacing
 * rules (500 ms after each response, Retry-After honoured, ~20 s deadline) are
 * asserted on the waits requested, and the suite never sleeps for real. The
 * fake's own limits (the hourly test quota, 5 reads per 2 s per measurement)
 * follow the same virtual clock.
 */

import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { formatDateTime } from '../../src/client/words.js';
import { testConfig } from '../../src/config/index.js';
import { ProviderError, type ProviderFailureKind } from '../../src/errors.js';
import {
  createGlobalDnsProviders,
  DEFAULT_DEADLINE_MS,
  GlobalpingAdapter,
  MIN_POLL_INTERVAL_MS,
  type QuotaRefusal,
} from '../../src/providers/global-dns/index.js';
import { HttpClient } from '../../src/providers/http-client.js';
import { rejectionOf } from '../expect-error.js';
import {
  type FakeGlobalping,
  GLOBALPING_FINISHED as FINISHED,
  GLOBALPING_CREATED,
  startGlobalping,
} from '../fakes/globalping.js';
import { type FakeReply, fixture, startFakeUpstream } from '../fakes/https-upstream.js';
import { getTestPki } from '../fakes/test-ca.js';
import { hasShared, sharedFixture } from '../shared-data.js';

const COUNTRIES = ['US', 'BR', 'GB', 'DE', 'ZA', 'IN', 'SG', 'JP', 'AU', 'CA'];
const QUESTION = { target: 'cdn.jsdelivr.net', type: 'A' as const, countries: COUNTRIES };
const scenario = (name: string) => fixture(`globalping/scenarios/${name}`);
const CREATED_ID = (GLOBALPING_CREATED.json as { id: string }).id;
const IN_PROGRESS: FakeReply = { json: scenario('ten-in-progress.json') };

let gp: FakeGlobalping;
let http: HttpClient;

beforeAll(async () => {
  http = new HttpClient({ ca: (await getTestPki()).caPem });
  gp = await startGlobalping({ prefix: '/gp' });
});
afterAll(async () => {
  await http.close();
  await gp.close();
});
beforeEach(() => {
  gp.reset();
});

/** A virtual clock that only the adapter's waits move. */
function virtualTime() {
  let now = Date.UTC(2025, 0, 1);
  const waits: number[] = [];
  return {
    waits,
    clock: () => now,
    sleep: async (ms: number, signal: AbortSignal) => {
      signal.throwIfAborted();
      waits.push(ms);
      now += ms;
    },
  };
}

function adapter(
  opts: {
    token?: string;
    pollIntervalMs?: number;
    requestTimeoutMs?: number;
    onQuotaSpent?: (refusal: QuotaRefusal) => void;
  } = {},
) {
  const time = virtualTime();
  gp.clock = time.clock;
  const config = testConfig({ globalpingUrl: gp.url, globalpingToken: opts.token, providerTimeoutMs: 2_000 });
  const [provider] = createGlobalDnsProviders(config, http, {
    clock: time.clock,
    sleep: time.sleep,
    pollIntervalMs: opts.pollIntervalMs,
    onQuotaSpent: opts.onQuotaSpent,
  });
  if (opts.requestTimeoutMs !== undefined) {
    const fast = new GlobalpingAdapter({
      info: provider!.info,
      baseUrl: gp.url,
      http,
      requestTimeoutMs: opts.requestTimeoutMs,
      clock: time.clock,
      sleep: time.sleep,
    });
    return { provider: fast, ...time };
  }
  return { provider: provider!, ...time };
}

const signal = () => AbortSignal.timeout(10_000);

const failure = (promise: Promise<unknown>) => rejectionOf(promise, ProviderError);

async function expectFailure(promise: Promise<unknown>, kind: ProviderFailureKind, message?: RegExp) {
  const err = await failure(promise);
  expect(err.kind).toBe(kind);
  if (message) expect(err.message).toMatch(message);
}

describe('Globalping adapter: creating the measurement', () => {
  it('asks for one probe in each of the ten countries, the record type in measurementOptions', async () => {
    const { provider } = adapter();
    await provider.measure(QUESTION, signal());
    const post = gp.requests[0]!;
    expect(post.method).toBe('POST');
    expect(post.path).toBe('/v1/measurements');
    expect(post.headers['content-type']).toBe('application/json');
    expect(post.headers['user-agent']).toMatch(/^netdiag\//);
    expect(JSON.parse(post.body.toString())).toEqual({
      type: 'dns',
      target: 'cdn.jsdelivr.net',
      locations: COUNTRIES.map((country) => ({ country, limit: 1 })),
      measurementOptions: { query: { type: 'A' } },
    });
    // The prefix of GLOBALPING_URL is kept, and the poll names the created id.
    expect(gp.polls()[0]?.path).toBe(`/v1/measurements/${CREATED_ID}`);
  });

  it('sends no Authorization without a token, and Bearer <token> on every request with one', async () => {
    await adapter().provider.measure(QUESTION, signal());
    expect(gp.requests.every((r) => r.headers.authorization === undefined)).toBe(true);
    gp.reset();
    await adapter({ token: 'gp-token-123' }).provider.measure(QUESTION, signal());
    expect(gp.requests.length).toBe(2);
    expect(gp.requests.map((r) => r.headers.authorization)).toEqual([
      'Bearer gp-token-123',
      'Bearer gp-token-123',
    ]);
  });

  it('treats 422 no_probes_found as an answer: no measurement, every country unmeasured', async () => {
    gp.createReply = { status: 422, json: scenario('error-422-no-probes-found.json') };
    const result = await adapter().provider.measure(QUESTION, signal());
    expect(result).toEqual({ id: null, complete: true, probes: [] });
    expect(gp.polls()).toHaveLength(0);
  });

  it('503 on creation is an operational failure (http_status), never polled', async () => {
    gp.fault = '503';
    await expectFailure(adapter().provider.measure(QUESTION, signal()), 'http_status');
    expect(gp.requests).toHaveLength(1);
  });

  it("a 429 without Globalping's limit headers (something in front of it) is rate_limited, and stops nothing", async () => {
    gp.createReply = { status: 429, json: scenario('error-429-create-rate-limit-exceeded.json') };
    const { provider } = adapter();
    await expectFailure(provider.measure(QUESTION, signal()), 'rate_limited', /rate_limit_exceeded/);
    await expectFailure(provider.measure(QUESTION, signal()), 'rate_limited', /rate_limit_exceeded/);
    expect(gp.creations()).toHaveLength(2);
    expect(provider.quotaRefusal?.(10)).toBeUndefined();
  });

  it('a creation that never answers is a timeout after the request timeout', async () => {
    gp.fault = 'timeout';
    const started = Date.now();
    await expectFailure(
      adapter({ requestTimeoutMs: 200 }).provider.measure(QUESTION, AbortSignal.timeout(60_000)),
      'timeout',
    );
    // The request's own 200 ms, not the caller's 60 s.
    expect(Date.now() - started).toBeLessThan(15_000);
  });

  it('a 400 (a type Globalping does not offer, e.g. CAA) is a failure of this provider with its reason', async () => {
    gp.createReply = { status: 400, json: scenario('error-400-validation-caa.json') };
    await expectFailure(
      adapter().provider.measure({ ...QUESTION, type: 'CAA' }, signal()),
      'upstream_error',
      /HTTP 400: validation_error: .*must be one of/,
    );
  });

  it('a 202 without an id is a bad_response', async () => {
    gp.createReply = { status: 202, json: { probesCount: 10 } };
    await expectFailure(adapter().provider.measure(QUESTION, signal()), 'bad_response');
  });
});

describe('Globalping adapter: polling', () => {
  it('reads the status right after creation, then 500 ms after each response: in-progress, then finished', async () => {
    gp.pollReplies = [IN_PROGRESS, IN_PROGRESS, FINISHED];
    const { provider, waits } = adapter();
    const result = await provider.measure(QUESTION, signal());
    expect(waits).toEqual([500, 500]);
    expect(gp.polls()).toHaveLength(3);
    expect(result.complete).toBe(true);
    expect(result.id).toBe(CREATED_ID);
    expect(result.probes.map((p) => p.country)).toEqual(COUNTRIES);
    expect(result.probes.every((p) => p.status === 'finished')).toBe(true);
  });

  it('never polls faster than every 500 ms, even when asked to', async () => {
    gp.pollReplies = [IN_PROGRESS, FINISHED];
    const { provider, waits } = adapter({ pollIntervalMs: 10 });
    await provider.measure(QUESTION, signal());
    expect(waits).toEqual([MIN_POLL_INTERVAL_MS]);
  });

  it('honours Retry-After (seconds) on a 429 while polling, then carries on', async () => {
    const tooMany = scenario('error-429-poll-too-many-requests.json');
    gp.pollReplies = [IN_PROGRESS, { status: 429, headers: { 'retry-after': '4' }, json: tooMany }, FINISHED];
    const { provider, waits } = adapter();
    const result = await provider.measure(QUESTION, signal());
    // The wait after the 429 is the 4 s it asked for.
    expect(waits).toEqual([500, 4_000]);
    expect(result.complete).toBe(true);
  });

  it('honours Retry-After as an HTTP-date, and waits 1 s when a 429 gives none', async () => {
    const { provider, waits, clock } = adapter();
    const at = new Date(clock() + 4_000).toUTCString();
    gp.pollReplies = [
      { status: 429, headers: { 'retry-after': at }, json: {} },
      { status: 429, json: {} },
      FINISHED,
    ];
    await provider.measure(QUESTION, signal());
    expect(waits).toEqual([4_000, 1_000]);
  });

  it('retries a poll that fails (503, reset) instead of failing the running measurement', async () => {
    gp.pollReplies = [{ status: 503, json: {} }, FINISHED];
    const result = await adapter().provider.measure(QUESTION, signal());
    expect(result.complete).toBe(true);
    expect(gp.polls()).toHaveLength(2);
  });

  it(`answers with what it has at the ~${DEFAULT_DEADLINE_MS / 1000} s deadline: complete false, late probes timeout`, async () => {
    gp.pollReplies = [IN_PROGRESS];
    const { provider, waits } = adapter();
    const result = await provider.measure(QUESTION, signal());
    expect(result.complete).toBe(false);
    expect(waits.reduce((a, b) => a + b, 0)).toBe(DEFAULT_DEADLINE_MS);
    // One read right after creation, then one every 500 ms up to the deadline.
    expect(gp.polls()).toHaveLength(DEFAULT_DEADLINE_MS / 500 + 1);
    expect(result.probes.map((p) => p.status)).toEqual([
      'finished',
      'finished',
      'finished',
      'finished',
      'timeout',
      'timeout',
      'timeout',
      'timeout',
      'timeout',
      'timeout',
    ]);
  });

  it('does not poll past the deadline to obey a long Retry-After', async () => {
    gp.pollReplies = [IN_PROGRESS, { status: 429, headers: { 'retry-after': '60' }, json: {} }];
    const { provider, waits } = adapter();
    const result = await provider.measure(QUESTION, signal());
    expect(waits).toEqual([500]);
    expect(result.complete).toBe(false);
  });

  it('fails (timeout) when nothing at all could be read before the deadline', async () => {
    gp.pollReplies = [{ status: 503, json: {} }];
    await expectFailure(
      adapter().provider.measure(QUESTION, signal()),
      'timeout',
      /could not be read.*HTTP 503/,
    );
  });

  it('stops at any final status: timed-out is final but not complete', async () => {
    const timedOut = structuredClone(scenario('ten-in-progress.json')) as { status: string };
    timedOut.status = 'timed-out';
    gp.pollReplies = [IN_PROGRESS, { json: timedOut }];
    const result = await adapter().provider.measure(QUESTION, signal());
    expect(gp.polls()).toHaveLength(2);
    expect(result.complete).toBe(false);
    expect(result.probes.filter((p) => p.status === 'timeout')).toHaveLength(6);
  });

  it('revalidates with If-None-Match and keeps the last body on a 304', async () => {
    let reads = 0;
    gp.pollReplies = [];
    const etagged = await startFakeUpstream({
      routes: { 'POST /v1/measurements': GLOBALPING_CREATED },
      handler: (req) => {
        reads++;
        if (reads === 1) return { headers: { etag: '"v1"' }, json: scenario('ten-in-progress.json') };
        if (reads === 2)
          return req.headers['if-none-match'] === '"v1"' ? { status: 304 } : { status: 400, json: {} };
        return { headers: { etag: '"v2"' }, json: scenario('ten-finished-consistent.json') };
      },
    });
    try {
      const time = virtualTime();
      const [provider] = createGlobalDnsProviders(testConfig({ globalpingUrl: etagged.url }), http, time);
      const result = await provider!.measure(QUESTION, signal());
      const gets = etagged.requests.filter((r) => r.method === 'GET');
      expect(gets.map((r) => r.headers['if-none-match'])).toEqual([undefined, '"v1"', '"v1"']);
      expect(result.complete).toBe(true);
    } finally {
      await etagged.close();
    }
  });

  it('a 404 for the measurement is a failure, not retried', async () => {
    gp.pollReplies = [
      { status: 404, json: { error: { type: 'not_found', message: "Couldn't find the requested item." } } },
    ];
    await expectFailure(
      adapter().provider.measure(QUESTION, signal()),
      'upstream_error',
      /HTTP 404.*not_found/,
    );
    expect(gp.polls()).toHaveLength(1);
  });

  it('stops waiting at once when its signal aborts (the chain gave up), with the real timer', async () => {
    gp.pollReplies = [IN_PROGRESS];
    const config = testConfig({ globalpingUrl: gp.url });
    // A minute between polls: an abort that waited for the pause to end would take that long.
    const [provider] = createGlobalDnsProviders(config, http, {
      pollIntervalMs: 60_000,
      deadlineMs: 300_000,
    });
    const controller = new AbortController();
    const started = Date.now();
    const measuring = provider!.measure(QUESTION, controller.signal);
    setTimeout(() => controller.abort(), 100);
    const err = await measuring.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect((err as Error | undefined)?.name).toBe('AbortError');
    // Aborted inside the wait after the first read, at once: no second poll was sent.
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(gp.polls()).toHaveLength(1);
  });
});

describe('Globalping adapter: reading results', () => {
  it('normalizes each probe: place, resolver, rcode, answers without root dots, query time', async () => {
    const result = await adapter().provider.measure(QUESTION, signal());
    expect(result.probes[8]).toEqual({
      country: 'AU',
      city: 'Sydney',
      continent: 'OC',
      asn: 202422,
      network: 'G-Core Labs S.A.',
      resolver: '8.8.8.8',
      status: 'finished',
      rcode: 'NOERROR',
      answers: [
        { name: 'cdn.jsdelivr.net', type: 'CNAME', ttl: 124, value: 'jsdelivr.map.fastly.net' },
        { name: 'jsdelivr.map.fastly.net', type: 'A', ttl: 7, value: '151.101.1.229' },
        { name: 'jsdelivr.map.fastly.net', type: 'A', ttl: 7, value: '151.101.65.229' },
        { name: 'jsdelivr.map.fastly.net', type: 'A', ttl: 7, value: '151.101.129.229' },
        { name: 'jsdelivr.map.fastly.net', type: 'A', ttl: 7, value: '151.101.193.229' },
      ],
      time_ms: 92,
    });
  });

  it.skipIf(!hasShared)('reads the real single-probe sample unchanged', async () => {
    gp.pollReplies = [{ json: sharedFixture('globalping/get-measurement-dns.json') }];
    const result = await adapter().provider.measure(QUESTION, signal());
    expect(result.probes).toHaveLength(1);
    expect(result.probes[0]).toMatchObject({ country: 'AU', city: 'Sydney', rcode: 'NOERROR', time_ms: 99 });
    expect(result.probes[0]?.answers[0]).toEqual({
      name: 'cdn.jsdelivr.net',
      type: 'CNAME',
      ttl: 180,
      value: 'jsdelivr.map.fastly.net',
    });
  });

  it('reports a missing country by leaving it out, and a resolver failure as failed', async () => {
    gp.pollReplies = [{ json: scenario('nine-finished-no-probe-za.json') }];
    const result = await adapter().provider.measure(QUESTION, signal());
    expect(result.probes.map((p) => p.country)).not.toContain('ZA');
    expect(result.probes.find((p) => p.country === 'AU')).toMatchObject({
      status: 'failed',
      rcode: null,
      answers: [],
    });
  });

  it('a measurement body without results is a bad_response', async () => {
    gp.pollReplies = [{ json: { id: 'x', status: 'finished' } }];
    await expectFailure(adapter().provider.measure(QUESTION, signal()), 'bad_response');
  });
});

describe('Globalping adapter: the hourly test quota', () => {
  const resetAt = (clock: () => number, seconds: number) => new Date(clock() + seconds * 1000).toISOString();

  it('reads the quota from every create: ten tests spent per measurement, reset from X-RateLimit-Reset', async () => {
    const { provider, clock } = adapter();
    expect(provider.quota?.()).toBeUndefined();
    await provider.measure(QUESTION, signal());
    expect(provider.quota?.()).toEqual({
      limit: 250,
      remaining: 240,
      reset_at: resetAt(clock, 3600),
      observed_at: new Date(clock()).toISOString(),
    });
  });

  it("Globalping's 429 (X-RateLimit-*, no Retry-After) fails rate_limited naming the reset; nothing more is sent until it", async () => {
    const spent: QuotaRefusal[] = [];
    const { provider, clock, sleep } = adapter({ onQuotaSpent: (r) => spent.push(r) });
    gp.spend(245);
    const refusal = await failure(provider.measure(QUESTION, signal()));
    expect(refusal.kind).toBe('rate_limited');
    expect(refusal.message).toBe(
      'Globalping refused the measurement (rate_limit_exceeded: This measurement exceeds the remaining hourly ' +
        `rate limit for your IP address.; 5 of 250 tests left this hour, a measurement needs 10; resets at ${formatDateTime(resetAt(clock, 3600))})`,
    );
    const created = gp.creations();
    expect(created).toHaveLength(1);
    expect(gp.requests).toHaveLength(1);

    // Answered at once, without a request, for as long as the window lasts.
    const again = await failure(provider.measure(QUESTION, signal()));
    expect(again.kind).toBe('rate_limited');
    expect(again.message).toMatch(/^hourly test quota spent \(5 of 250 tests left .*\); not asked$/);
    expect(provider.quotaRefusal?.(10)).toMatchObject({ retryAfterSeconds: 3600 });
    await sleep(3_599_000, signal());
    expect(provider.quotaRefusal?.(10)?.retryAfterSeconds).toBe(1);
    await expectFailure(provider.measure(QUESTION, signal()), 'rate_limited', /not asked$/);
    expect(gp.requests).toHaveLength(1);
    expect(spent).toHaveLength(1);

    // The window has reset: measuring works again.
    await sleep(1_000, signal());
    expect(provider.quota?.()).toMatchObject({ remaining: 250, reset_at: null });
    const result = await provider.measure(QUESTION, signal());
    expect(result.complete).toBe(true);
    expect(gp.creations()).toHaveLength(2);
    expect(provider.quota?.()).toMatchObject({ limit: 250, remaining: 240 });
  });

  it('without a token, a 202 leaving fewer than ten tests stops the next create before it is refused', async () => {
    const spent: QuotaRefusal[] = [];
    const { provider } = adapter({ onQuotaSpent: (r) => spent.push(r) });
    gp.spend(235);
    await provider.measure(QUESTION, signal());
    expect(provider.quota?.()).toMatchObject({ remaining: 5 });
    expect(spent).toHaveLength(1);
    await expectFailure(
      provider.measure(QUESTION, signal()),
      'rate_limited',
      /5 of 250 tests left.*not asked$/,
    );
    expect(gp.creations()).toHaveLength(1);
  });

  it('with a token, 500 an hour; a shortfall is still asked (credits may pay) until Globalping refuses', async () => {
    const { provider } = adapter({ token: 'gp-token-123' });
    gp.spend(485, 'gp-token-123');
    await provider.measure(QUESTION, signal());
    expect(provider.quota?.()).toMatchObject({ limit: 500, remaining: 5 });
    await expectFailure(
      provider.measure(QUESTION, signal()),
      'rate_limited',
      /insufficient_credits.*5 of 500 tests left this hour, 0 credits left/,
    );
    await expectFailure(provider.measure(QUESTION, signal()), 'rate_limited', /not asked$/);
    expect(gp.creations()).toHaveLength(2);
  });
});

describe('Globalping adapter: polite reads', () => {
  it("stays within Globalping's 5 reads per 2 s of a measurement over a whole 20 s poll", async () => {
    // The fake refuses a 6th read in 2 s and blocks the measurement 5 s: a breach would show as a 5 s wait.
    gp.pollReplies = [IN_PROGRESS];
    const { provider, waits } = adapter();
    await provider.measure(QUESTION, signal());
    expect(new Set(waits)).toEqual(new Set([MIN_POLL_INTERVAL_MS]));
    expect(gp.polls()).toHaveLength(DEFAULT_DEADLINE_MS / MIN_POLL_INTERVAL_MS + 1);
  });

  it("waits out Globalping's own 429 (Retry-After 5) when the measurement's reads are already spent", async () => {
    gp.pollReplies = [FINISHED];
    const { provider, waits } = adapter();
    // Another reader of the same measurement from this address has used up the 2 s window.
    const url = `${gp.url}/v1/measurements/${CREATED_ID}`;
    for (let i = 0; i < 5; i++) await http.send(url, { signal: signal() });
    const result = await provider.measure(QUESTION, signal());
    expect(result.complete).toBe(true);
    // The 6th read was refused and blocked the measurement for 5 s; the next read came after it.
    expect(waits).toEqual([5_000]);
    expect(gp.polls()).toHaveLength(7);
  });

  it('asks for br or gzip, and reads a Brotli or gzip measurement as Globalping sends it', async () => {
    for (const encodings of [['br'], ['gzip'], []] as const) {
      gp.reset();
      gp.encodings = [...encodings];
      const result = await adapter().provider.measure(QUESTION, signal());
      expect(
        result.probes.map((p) => p.country),
        `encodings ${encodings.join()}`,
      ).toEqual(COUNTRIES);
      expect(gp.requests.every((r) => r.headers['accept-encoding'] === 'br, gzip')).toBe(true);
    }
  });

  it('a compressed body that does not decode is a bad_response on creation, a retried read while polling', async () => {
    gp.createReply = { status: 202, headers: { 'content-encoding': 'br' }, body: 'not brotli' };
    await expectFailure(
      adapter().provider.measure(QUESTION, signal()),
      'bad_response',
      /could not be decoded/,
    );
    gp.reset();
    gp.pollReplies = [{ headers: { 'content-encoding': 'gzip' }, body: 'not gzip' }, FINISHED];
    const result = await adapter().provider.measure(QUESTION, signal());
    expect(result.complete).toBe(true);
    expect(gp.polls()).toHaveLength(2);
  });
});
