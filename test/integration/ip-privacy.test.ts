/**
 * GET /api/ip-privacy through the whole app, with the relay and Tor lists
 * served by a fake HTTPS upstream on loopback.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, onTestFinished, vi } from 'vitest';
import type { Config } from '../../src/config/index.js';
import { ListSource } from '../../src/providers/ip/list-source.js';
import { RelayLists } from '../../src/providers/ip/relay-lists.js';
import { type FakeUpstream, startFakeUpstream } from '../fakes/https-upstream.js';
import { getTestPki } from '../fakes/test-ca.js';
import { buildTestApp, capturingLogger } from '../helper.js';
import { hasShared, sharedFixturePath, sharedFixtureText } from '../shared-data.js';

/** The real lists (../shared); every test here reads them, so the file is skipped without it. */
const APPLE = hasShared ? sharedFixtureText('relay/egress-ip-ranges.excerpt.csv') : '';
const TOR = hasShared ? sharedFixtureText('relay/tor-torbulkexitlist.txt') : '';
const APPLE_FILE = hasShared ? sharedFixturePath('relay/egress-ip-ranges.excerpt.csv') : '';

let upstream: FakeUpstream;
/** While set, the list downloads wait for it: "not loaded yet" without racing a timer. */
let gate: Promise<void> | undefined;
const dirs: string[] = [];

beforeAll(async () => {
  upstream = await startFakeUpstream({
    routes: {
      '/egress-ip-ranges.csv': async () => {
        await gate;
        return { body: APPLE, headers: { 'content-type': 'text/csv', etag: '"a1"' } };
      },
      '/torbulkexitlist': async () => {
        await gate;
        return { body: TOR };
      },
    },
  });
});
afterEach(() => {
  upstream.reset();
  gate = undefined;
});
afterAll(async () => {
  await upstream.close();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function config(overrides: Partial<Config> = {}): Partial<Config> {
  const dir = mkdtempSync(join(tmpdir(), 'netdiag-ip-privacy-'));
  dirs.push(dir);
  return {
    relayRangesUrl: `${upstream.url}/egress-ip-ranges.csv`,
    torExitListUrl: `${upstream.url}/torbulkexitlist`,
    listCacheDir: dir,
    rateLimitGeneral: { points: 1000, seconds: 60 },
    ...overrides,
  };
}

/**
 * List URLs of a test's own: a download an earlier test's app started (and aborted at close)
 * may still reach the fake on a busy machine, and must not count as this test's.
 */
function ownLists(tag: string): Partial<Config> {
  return {
    relayRangesUrl: `${upstream.url}/egress-ip-ranges.csv?app=${tag}`,
    torExitListUrl: `${upstream.url}/torbulkexitlist?app=${tag}`,
  };
}
const requestsOf = (tag: string) => upstream.requests.filter((r) => r.query.get('app') === tag);

async function app(overrides: Partial<Config> = {}) {
  return buildTestApp({ config: config(overrides), ca: (await getTestPki()).caPem });
}

type App = Awaited<ReturnType<typeof app>>;
const ask = (a: App, ip: string) => a.inject(`/api/ip-privacy?ip=${encodeURIComponent(ip)}`);
/** Generous: a worker thread parses the lists, which takes seconds on a loaded 2-core machine. */
async function loaded(a: App): Promise<void> {
  await vi.waitFor(async () => expect((await ask(a, '8.8.8.8')).statusCode).toBe(200), {
    timeout: 15_000,
    interval: 20,
  });
}

describe.skipIf(!hasShared)('GET /api/ip-privacy', () => {
  it('answers 503 with Retry-After until the lists load — never a false "not a relay"', async () => {
    let release = () => {};
    gate = new Promise((resolve) => (release = resolve));
    const a = await app();
    const early = await ask(a, '8.8.8.8');
    expect(early.statusCode).toBe(503);
    expect(early.headers['retry-after']).toBe('30');
    expect(early.headers['cache-control']).toBe('no-store');
    expect(early.json()).toEqual({
      error: expect.stringContaining('not loaded yet'),
      code: 'unavailable',
      providers_tried: [
        expect.objectContaining({
          id: 'apple-private-relay',
          status: 'failed',
          error: expect.stringMatching(/under way/),
        }),
        expect.objectContaining({ id: 'tor-exit-list', status: 'failed' }),
      ],
    });
    release();
    await loaded(a);
    expect((await ask(a, '8.8.8.8')).json()).toMatchObject({ is_relay: false, relay: null });
  });

  it('matches iCloud Private Relay ranges at their edges, with the egress region', async () => {
    const a = await app();
    await loaded(a);
    const first = await ask(a, '172.224.226.0');
    expect(first.statusCode).toBe(200);
    expect(first.headers['cache-control']).toBe('public, max-age=3600');
    expect(first.headers['x-service-cache']).toBe('MISS');
    const body = first.json();
    expect(body).toMatchObject({
      ip: '172.224.226.0',
      is_relay: true,
      relay: {
        provider: 'iCloud Private Relay',
        prefix: '172.224.226.0/27',
        egress_region: { country: 'GB', region: 'GB-EN', city: 'London' },
      },
    });
    expect(body.note).toMatch(/does not reveal the original address/);
    expect(body.lists).toEqual([
      {
        provider: 'iCloud Private Relay',
        entries: 428,
        updated_at: expect.any(String),
        source_url: `${upstream.url}/egress-ip-ranges.csv`,
        loaded: true,
      },
      {
        provider: 'Tor',
        entries: TOR.split('\n').filter((l) => l.trim()).length,
        updated_at: expect.any(String),
        source_url: `${upstream.url}/torbulkexitlist`,
        loaded: true,
      },
    ]);
    expect((await ask(a, '172.224.226.31')).json().relay.prefix).toBe('172.224.226.0/27');
    expect((await ask(a, '172.224.241.255')).json().relay.egress_region.country).toBe('HK');
    expect((await ask(a, '172.224.242.0')).json().is_relay).toBe(false);
    // IPv6, and the address written IPv4-mapped or in brackets.
    expect((await ask(a, '[2a02:26f7:c700:4000::7]')).json().relay).toEqual({
      provider: 'iCloud Private Relay',
      prefix: '2a02:26f7:c700:4000::/64',
      egress_region: { country: 'MO', region: null, city: 'Macau' },
    });
    expect((await ask(a, '2a02:26f7:c700:4001::')).json().is_relay).toBe(false);
    expect((await ask(a, '::ffff:172.224.226.5')).json()).toMatchObject({
      ip: '172.224.226.5',
      is_relay: true,
    });
  });

  it('matches Tor exits as a second family', async () => {
    const a = await app();
    await loaded(a);
    expect((await ask(a, '185.220.101.18')).json()).toMatchObject({
      is_relay: true,
      relay: { provider: 'Tor', prefix: '185.220.101.18/32', egress_region: null },
    });
  });

  it('refuses special-use and malformed addresses with a 400 naming the parameter', async () => {
    const a = await app();
    const privateUse = await ask(a, '192.168.1.1');
    expect(privateUse.statusCode).toBe(400);
    expect(privateUse.json().error).toBe(
      'ip 192.168.1.1 is a special-use address (192.168.0.0/16 private-use, RFC 1918): only public addresses can be relay egress addresses',
    );
    expect((await ask(a, '2001:db8::1')).json().error).toMatch(/documentation, RFC 3849/);
    expect((await ask(a, 'relay.example')).json()).toEqual({
      error: 'ip must be an IPv4 or IPv6 address',
      code: 'bad_request',
    });
    expect((await a.inject('/api/ip-privacy')).statusCode).toBe(400);
  });

  it('serves RELAY_RANGES_FILE at once, without downloading the Apple list', async () => {
    gate = new Promise(() => {}); // the Tor list hangs: only a positive match can be answered
    // Its own URL: a download an earlier test's app started (and aborted at close) may still arrive
    // at the fake on a busy machine, and must not count as this app's.
    const url = `${upstream.url}/egress-ip-ranges.csv?app=file`;
    const a = await app({ relayRangesFile: APPLE_FILE, relayRangesUrl: url });
    const res = await ask(a, '172.224.226.34'); // 172.224.226.34/31,GB,GB-EN,Oxford,
    expect(res.statusCode).toBe(200);
    expect(res.json().relay.egress_region.city).toBe('Oxford');
    // The file's name, never the machine's directory layout (issue 16).
    expect(res.json().lists[0]).toMatchObject({ source_url: basename(APPLE_FILE), loaded: true });
    expect(res.json().lists[1]).toMatchObject({
      provider: 'Tor',
      loaded: false,
      entries: 0,
      updated_at: null,
    });
    // No match in the file, Tor not loaded: undetermined.
    expect((await ask(a, '8.8.8.8')).statusCode).toBe(503);
    expect(upstream.requests.filter((r) => r.query.get('app') === 'file')).toEqual([]);
  });

  it('after a restart, answers at once from the persisted copies while the upstream is down', async () => {
    const shared = config();
    const first = await buildTestApp({ config: shared, ca: (await getTestPki()).caPem });
    await loaded(first);
    await first.close();
    upstream.fault = 'timeout';
    const second = await buildTestApp({ config: shared, ca: (await getTestPki()).caPem });
    expect((await ask(second, '172.224.226.1')).json().is_relay).toBe(true);
    expect((await ask(second, '8.8.8.8')).json().is_relay).toBe(false);
  });

  it('closes promptly while a background download hangs', async () => {
    upstream.fault = 'timeout';
    const a = await app(ownLists('hang'));
    await vi.waitFor(() => expect(requestsOf('hang')).toHaveLength(2), { timeout: 15_000, interval: 10 });
    const started = Date.now();
    await a.close();
    // A hung download would hold close() for its two-minute timeout; a loaded machine takes seconds at most.
    expect(Date.now() - started).toBeLessThan(15_000);
  });

  // Issue 16: offline, every request answered 503 forever and logged an error with a stack trace.
  it('offline: answers 503 naming both lists in providers_tried, logs each refresh failure once, counts it', async () => {
    upstream.fault = 'reset';
    const { logger, lines } = capturingLogger('info');
    const a = await buildTestApp({
      config: config(ownLists('offline')),
      ca: (await getTestPki()).caPem,
      logger,
    });
    await vi.waitFor(() => expect(requestsOf('offline')).toHaveLength(2), { timeout: 15_000, interval: 10 });
    await vi.waitFor(() => expect(lines().filter((l) => l.msg === 'list refresh failed')).toHaveLength(2), {
      timeout: 15_000,
      interval: 10,
    });
    for (let i = 0; i < 5; i++) {
      const res = await ask(a, '8.8.8.8');
      expect(res.statusCode).toBe(503);
      expect(res.json().providers_tried).toEqual([
        {
          id: 'apple-private-relay',
          name: expect.any(String),
          status: 'failed',
          error: expect.stringMatching(/^network: /),
        },
        {
          id: 'tor-exit-list',
          name: expect.any(String),
          status: 'failed',
          error: expect.stringMatching(/^network: /),
        },
      ]);
    }
    // Two refresh failures, two warnings; five requests add no error line and no stack.
    expect(lines().filter((l) => l.msg === 'list refresh failed')).toHaveLength(2);
    expect(lines().filter((l) => Number(l.level) >= 50)).toEqual([]);
    const metrics = await a.ctx.metrics.registry.metrics();
    expect(metrics).toMatch(
      /netdiag_provider_attempts_total\{provider="tor-exit-list",outcome="failed",kind="network"\} 1/,
    );
    expect(metrics).toMatch(
      /netdiag_provider_attempts_total\{provider="apple-private-relay",outcome="failed",kind="network"\} 1/,
    );
  });

  it('shows both lists, with their refresh status, in /api/providers', async () => {
    upstream.fault = '503';
    const a = await app();
    await vi.waitFor(
      async () => {
        const providers = (await a.inject('/api/providers')).json().providers as {
          id: string;
          status: { last_error: string | null };
        }[];
        const status = (id: string) => providers.find((p) => p.id === id)?.status.last_error;
        expect(status('apple-private-relay')).toMatch(/^http_status: HTTP 503/);
        expect(status('tor-exit-list')).toMatch(/^http_status: HTTP 503/);
      },
      { timeout: 15_000, interval: 20 },
    );
  });
});

describe.skipIf(!hasShared)('the relayLists build option', () => {
  const build = async (tag: string, relayLists?: 'on-ready' | 'on-demand') =>
    buildTestApp({
      config: config(ownLists(tag)),
      ca: (await getTestPki()).caPem,
      ...(relayLists ? { relayLists } : {}),
    });

  it('on-ready (the default, the server): both lists download when the app is ready', async () => {
    const start = vi.spyOn(RelayLists.prototype, 'start');
    onTestFinished(() => start.mockRestore());
    await build('ready');
    expect(start).toHaveBeenCalledOnce();
    await vi.waitFor(
      () =>
        expect(
          requestsOf('ready')
            .map((r) => r.path)
            .sort(),
        ).toEqual(LIST_PATHS),
      {
        timeout: 15_000,
        interval: 20,
      },
    );
  });

  // A one-shot `netdiag dns` must not download two lists it never reads.
  it('on-demand: nothing starts until a lookup reads the lists, which then loads them', async () => {
    // start() is what begins the downloads; a request that never comes cannot be waited for.
    const start = vi.spyOn(RelayLists.prototype, 'start');
    onTestFinished(() => start.mockRestore());
    const a = await build('demand', 'on-demand');
    expect((await a.inject('/api/dns?target=example.com&type=A')).statusCode).toBeGreaterThan(0);
    expect((await a.inject('/api/providers')).statusCode).toBe(200);
    expect(start).not.toHaveBeenCalled();
    expect(requestsOf('demand')).toEqual([]);
    // The first lookup that reads them starts them; it is told they are loading, then answered.
    expect((await ask(a, '8.8.8.8')).statusCode).toBe(503);
    await loaded(a);
    expect(
      requestsOf('demand')
        .map((r) => r.path)
        .sort(),
    ).toEqual(LIST_PATHS);
  });

  it('on-demand: start() starts them once, however often it is called', async () => {
    const listStart = vi.spyOn(ListSource.prototype, 'start');
    onTestFinished(() => listStart.mockRestore());
    const a = await build('started', 'on-demand');
    await Promise.all([a.ipSources.relays.start(), a.ipSources.relays.start()]);
    await loaded(a);
    await a.ipSources.relays.start();
    expect(listStart).toHaveBeenCalledTimes(2); // one per list
    expect(
      requestsOf('started')
        .map((r) => r.path)
        .sort(),
    ).toEqual(LIST_PATHS);
  });
});

const LIST_PATHS = ['/egress-ip-ranges.csv', '/torbulkexitlist'];
