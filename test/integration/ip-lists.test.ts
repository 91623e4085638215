/**
 * The relay-list adapter against a fake HTTPS upstream on loopback: the first
 * download, conditional refresh, failures keeping the old copy, the persisted
 * copy across a restart, the file override, the refresh schedule and close();
 * the parse in a worker thread, as the service runs it: the event loop free
 * while a list of Apple's size loads, a broken worker failing like a bad list,
 * close() ending a parse.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { syntheticGeofeed } from '../../bench/synthetic-geofeed.js';
import { testConfig } from '../../src/config/index.js';
import { providerCatalog } from '../../src/providers/catalog.js';
import { HttpClient } from '../../src/providers/http-client.js';
import { parseIpNumber } from '../../src/providers/ip/ip-number.js';
import { ListSource, type ListSourceOptions, type Scheduler } from '../../src/providers/ip/list-source.js';
import { parseGeofeed, type RelayIndex } from '../../src/providers/ip/relay-index.js';
import { RelayIndexFile } from '../../src/providers/ip/relay-index-file.js';
import { RelayIndexFiles } from '../../src/providers/ip/relay-index-files.js';
import {
  type ParsedRelayList,
  parseRelayList,
  relayParseWorkersRunning,
} from '../../src/providers/ip/relay-list-parse.js';
import { createRelayLists } from '../../src/providers/ip/relay-lists.js';
import { ProviderRegistry } from '../../src/providers/registry.js';
import { descriptorsUnder } from '../descriptors.js';
import {
  type FakeRequest,
  type FakeUpstream,
  fixtureText,
  startFakeUpstream,
} from '../fakes/https-upstream.js';
import { getTestPki } from '../fakes/test-ca.js';

const APPLE = fixtureText('relay/egress-ip-ranges.excerpt.csv');
const ETAG = '"apple-v1"';
const LAST_MODIFIED = 'Sat, 21 Nov 2026 06:00:00 GMT';
const info = providerCatalog(testConfig()).relayRanges;

/** What the fake Apple endpoint serves; tests change it between refreshes. */
let served: { status: number; body: string; etag?: string } = { status: 200, body: APPLE, etag: ETAG };
let upstream: FakeUpstream;
let http: HttpClient;
const dirs: string[] = [];

function freshDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'netdiag-lists-'));
  dirs.push(dir);
  return dir;
}

beforeAll(async () => {
  upstream = await startFakeUpstream({
    routes: {
      '/egress-ip-ranges.csv': (req: FakeRequest) => {
        if (served.etag && req.headers['if-none-match'] === served.etag) return { status: 304 };
        return {
          status: served.status,
          body: served.body,
          headers: {
            'content-type': 'text/csv',
            ...(served.etag ? { etag: served.etag, 'last-modified': LAST_MODIFIED } : {}),
          },
        };
      },
    },
  });
  http = new HttpClient({ ca: (await getTestPki()).caPem });
});

afterEach(() => {
  upstream.reset();
  served = { status: 200, body: APPLE, etag: ETAG };
});

afterAll(async () => {
  await upstream.close();
  await http.close();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** A scheduler that records what it was asked to run and when; a test fires an entry (time is fake). */
function manualScheduler() {
  const pending: { ms: number; fire: () => void; cancelled: boolean }[] = [];
  const scheduler: Scheduler = {
    after(ms, run) {
      const entry = {
        ms,
        cancelled: false,
        fire: () => {
          entry.cancelled = true; // a timer that fired is spent
          run();
        },
      };
      pending.push(entry);
      return { cancel: () => (entry.cancelled = true) };
    },
  };
  return { scheduler, pending, live: () => pending.filter((p) => !p.cancelled) };
}

let now = Date.parse('2026-11-22T00:00:00Z');
const logged: { level: string; msg: string }[] = [];
const log = {
  info: (_: object, msg: string) => logged.push({ level: 'info', msg }),
  warn: (_: object, msg: string) => logged.push({ level: 'warn', msg }),
};

/** What a list's data is to these tests: the service's index file, or a RelayIndex parsed in this thread. */
type Lookup = Pick<RelayIndex, 'lookup'>;

/**
 * A source as the service builds it (relay-lists.ts): parsed in a worker thread into an index file
 * in the cache directory (in memory without one), released when replaced. `origins` records each
 * parse's: the file reused, written, or the index in memory. `parse` replaces the service's.
 */
/**
 * A ListSource as the service builds one. The sources of one test share a URL of that test's own
 * (`?test=…`, a query the shown source URL leaves out), so they share persisted copies while
 * `requests()` are that test's alone: a download an earlier test aborted may still reach the fake
 * later on a busy machine.
 */
function source(
  opts: {
    cacheDir?: string;
    file?: string;
    url?: string;
    registry?: ProviderRegistry;
    parse?: ListSourceOptions<Lookup>['parse'];
  } = {},
) {
  const timers = manualScheduler();
  const test = createHash('sha256')
    .update(expect.getState().currentTestName ?? '')
    .digest('hex')
    .slice(0, 12);
  const url = new URL(opts.url ?? `${upstream.url}/egress-ip-ranges.csv?test=${test}`);
  const registry = opts.registry ?? new ProviderRegistry(() => now);
  registry.registerChain('ip-privacy', [{ info }]);
  const files = new RelayIndexFiles({ dir: opts.cacheDir, provider: info.id, format: 'geofeed', log });
  const origins: ParsedRelayList['origin'][] = [];
  const list = new ListSource<Lookup>({
    info,
    url: url.href,
    file: opts.file,
    cacheDir: opts.cacheDir,
    parse:
      opts.parse ??
      (async (body, signal) => {
        const parsed = await files.parse(body, signal);
        origins.push(parsed.origin);
        return parsed;
      }),
    release: (data) => {
      if (data instanceof RelayIndexFile) files.release(data);
    },
    http,
    registry,
    clock: () => now,
    log,
    scheduler: timers.scheduler,
  });
  return {
    list,
    registry,
    timers,
    files,
    origins,
    requests: () =>
      upstream.requests.filter((r) => r.path === url.pathname && `${r.query}` === `${url.searchParams}`),
    status: () => registry.list().find((p) => p.id === info.id)!.status,
  };
}

/** The directory's files, their hashes written <hash>, sorted. */
const listing = (dir: string) =>
  readdirSync(dir)
    .map((name) => name.replace(/[0-9a-f]{16}/, '<hash>'))
    .sort();

const indexFiles = (dir: string) => readdirSync(dir).filter((name) => name.endsWith('.index'));

const isRelay = (list: ListSource<Lookup>, ip: string) =>
  list.current?.data.lookup(parseIpNumber(ip)!) !== undefined;

describe('ListSource (relay egress list)', () => {
  it('starts without waiting for the download, then swaps the new copy in', async () => {
    const { list, status, requests } = source({ cacheDir: freshDir() });
    await list.start();
    expect(list.current).toBeUndefined(); // start() does not wait for the network
    await list.refresh(); // joins the download start() began
    expect(requests()).toHaveLength(1);
    expect(list.current).toMatchObject({
      entries: 428,
      updatedAt: now,
      source: `${upstream.url}/egress-ip-ranges.csv`,
    });
    expect(isRelay(list, '172.224.226.1')).toBe(true);
    expect(status()).toMatchObject({ consecutive_failures: 0, last_error: null });
    expect(status().last_success_at).not.toBeNull();
    await list.close();
  });

  it('refreshes conditionally: a 304 keeps the data and moves updated_at', async () => {
    const { list, requests } = source();
    await list.refresh();
    const first = list.current!;
    now += 86_400_000;
    await list.refresh();
    const conditional = requests()[1]!;
    expect(conditional.headers['if-none-match']).toBe(ETAG);
    expect(conditional.headers['if-modified-since']).toBe(LAST_MODIFIED);
    expect(list.current!.data).toBe(first.data); // same snapshot: nothing was re-parsed
    expect(list.current!.updatedAt).toBe(now);
    await list.close();
  });

  it('keeps the old copy when the upstream fails, and shows the failure in the registry', async () => {
    const { list, status } = source();
    await list.refresh();
    const before = list.current!;
    served = { status: 500, body: 'Internal Server Error' };
    await list.refresh();
    expect(list.current).toBe(before);
    expect(status()).toMatchObject({
      consecutive_failures: 1,
      last_error: expect.stringMatching(/^http_status: HTTP 500/),
    });
    served = { status: 404, body: 'gone' };
    await list.refresh();
    expect(status()).toMatchObject({
      consecutive_failures: 2,
      last_error: expect.stringMatching(/^http_status: HTTP 404/),
    });
    // A 200 that is not a geofeed (an error page) is refused too.
    served = { status: 200, body: '<html><body>Service Unavailable</body></html>' };
    await list.refresh();
    expect(list.current).toBe(before);
    expect(status().last_error).toMatch(/^bad_response: relay geofeed: no usable entries/);
    expect(isRelay(list, '172.224.226.1')).toBe(true);
    // Recovery clears the failure count.
    served = { status: 200, body: '192.0.2.0/24,US,,,\n', etag: '"v2"' };
    await list.refresh();
    expect(status().consecutive_failures).toBe(0);
    expect(isRelay(list, '192.0.2.9')).toBe(true);
    expect(isRelay(list, '172.224.226.1')).toBe(false);
    await list.close();
  });

  it('serves a restart from the persisted copy at once, then revalidates it with the stored validators', async () => {
    const dir = freshDir();
    const first = source({ cacheDir: dir });
    await first.list.refresh();
    await first.list.close();
    expect(listing(dir)).toEqual([
      'apple-private-relay-<hash>.index',
      'apple-private-relay-<hash>.json',
      'apple-private-relay-<hash>.list',
    ]);

    upstream.reset();
    upstream.fault = 'timeout';
    const second = source({ cacheDir: dir });
    await second.list.start(); // the download hangs; the persisted copy is already in use
    expect(second.list.current?.entries).toBe(428);
    expect(isRelay(second.list, '2a02:26f7:c700:4000::1')).toBe(true);
    await second.list.close(); // aborts the hanging download

    upstream.reset();
    const third = source({ cacheDir: dir });
    await third.list.start();
    await third.list.refresh();
    expect(third.requests()[0]!.headers['if-none-match']).toBe(ETAG);
    await third.list.close();
  });

  it('never serves a copy persisted for another URL', async () => {
    const dir = freshDir();
    const first = source({ cacheDir: dir });
    await first.list.refresh();
    await first.list.close();
    upstream.fault = 'timeout';
    const other = source({ cacheDir: dir, url: `${upstream.url}/egress-ip-ranges.csv?mirror=2` });
    await other.list.start();
    expect(other.list.current).toBeUndefined();
    await other.list.close();
  });

  it('with RELAY_RANGES_FILE reads the file at start, never downloads, and re-reads it when it changes', async () => {
    const dir = freshDir();
    const file = join(dir, 'relay.csv');
    writeFileSync(file, APPLE);
    utimesSync(file, new Date('2026-11-01T00:00:00Z'), new Date('2026-11-01T00:00:00Z'));
    const { list, timers, requests } = source({ file });
    await list.start();
    expect(list.current).toMatchObject({ entries: 428, updatedAt: Date.parse('2026-11-01T00:00:00Z') });
    expect(list.current!.source).toBe(basename(file));
    const snapshot = list.current;
    await list.refresh(); // unchanged mtime: nothing re-read
    expect(list.current).toBe(snapshot);
    writeFileSync(file, '198.51.100.0/24,DE,,,\n');
    utimesSync(file, new Date('2026-11-02T00:00:00Z'), new Date('2026-11-02T00:00:00Z'));
    timers.live().at(-1)!.fire(); // the daily tick
    await list.refresh();
    expect(isRelay(list, '198.51.100.1')).toBe(true);
    expect(isRelay(list, '172.224.226.1')).toBe(false);
    expect(requests()).toEqual([]);
    await list.close();
  });

  it('refreshes every 24 h, after a failure sooner (1 min, doubling, capped at 24 h)', async () => {
    const { list, timers } = source();
    await list.refresh();
    expect(timers.live().map((t) => t.ms)).toEqual([86_400_000]);
    upstream.fault = '503';
    const delays: number[] = [];
    for (let i = 0; i < 3; i++) {
      timers.live().at(-1)!.fire();
      await list.refresh();
      delays.push(timers.live().at(-1)!.ms);
    }
    expect(delays).toEqual([60_000, 120_000, 240_000]);
    expect(timers.live()).toHaveLength(1); // each new timer replaces the last
    upstream.fault = 'none';
    timers.live().at(-1)!.fire();
    await list.refresh();
    expect(timers.live().at(-1)!.ms).toBe(86_400_000);
    await list.close();
    expect(timers.live()).toHaveLength(0);
  });

  it('close() aborts a download in flight promptly and schedules nothing after', async () => {
    upstream.fault = 'timeout';
    const { list, timers, status } = source();
    await list.start();
    const started = Date.now();
    await list.close();
    // A hung download would hold close() for its two-minute timeout; a loaded machine takes seconds at most.
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(timers.live()).toHaveLength(0);
    expect(status().consecutive_failures).toBe(0); // an abort at close is not an upstream failure
  });
});

describe('ListSource parsing in a worker thread', () => {
  let big: { text: string; file: string };
  beforeAll(() => {
    const { text } = syntheticGeofeed(290_000);
    const file = join(freshDir(), 'egress-ip-ranges.csv');
    writeFileSync(file, text);
    big = { text, file };
  });

  /** The main thread's event-loop utilization while `run` is under way: 0 idle throughout, 1 never idle. */
  async function utilization(run: () => Promise<void>): Promise<number> {
    const start = performance.eventLoopUtilization();
    await run();
    return performance.eventLoopUtilization(start).utilization;
  }

  it('keeps the event loop free while a list of Apple size loads, where parsing in this thread blocks it', async () => {
    // Utilization, not a timer's delay: it does not depend on how busy the machine's cores are. The worker
    // leaves the loop idle but for reading the file, starting the thread and rebuilding the index; the parse
    // in this thread, measured the same way, keeps it busy throughout.
    const relays = createRelayLists({
      config: {
        relayRangesUrl: `${upstream.url}/egress-ip-ranges.csv`,
        relayRangesFile: big.file,
        torExitListUrl: `${upstream.url}/torbulkexitlist`,
        listCacheDir: freshDir(),
      },
      catalog: providerCatalog(testConfig()),
      http,
      registry: new ProviderRegistry(() => now),
      clock: () => now,
      log,
      scheduler: manualScheduler().scheduler,
    });
    const free = await utilization(() => relays.start()); // as the service starts them
    expect(relays.status()[0]).toMatchObject({ provider: 'iCloud Private Relay', entries: 290_000 });
    await relays.close();

    const inThread = source({
      file: big.file,
      parse: async (body) => {
        const { index, report } = parseGeofeed(body.toString('utf8'));
        return { data: index, ...report };
      },
    });
    const blocked = await utilization(() => inThread.list.start());
    expect(inThread.list.current?.entries).toBe(290_000);
    await inThread.list.close();

    expect(blocked).toBeGreaterThan(0.5);
    expect(free).toBeLessThan(0.5);
  });

  it('fails a load like a bad list when the worker cannot start or crashes: recorded, the previous copy kept', async () => {
    const dir = freshDir();
    let entry: URL | undefined;
    const { list, status } = source({
      cacheDir: dir,
      parse: (body, signal) => parseRelayList('geofeed', body, { signal, entry }),
    });
    await list.refresh();
    const before = list.current!;
    served = { status: 200, body: '192.0.2.0/24,US,,,\n', etag: '"v2"' };
    entry = new URL('data:text/javascript,process.exit(3)');
    await list.refresh();
    expect(list.current).toBe(before);
    expect(status()).toMatchObject({
      consecutive_failures: 1,
      last_error: 'upstream_error: relay list parser exited (3) without an answer',
    });
    entry = new URL('http://127.0.0.1/cannot-start.js');
    await list.refresh();
    expect(list.current).toBe(before);
    expect(status()).toMatchObject({
      consecutive_failures: 2,
      last_error: expect.stringMatching(/^upstream_error: /),
    });
    // The refused body was not persisted: no temporary file is left, and a restart serves the old copy.
    expect(readdirSync(dir).filter((name) => name.endsWith('.tmp'))).toEqual([]);
    await list.close();
    upstream.fault = 'timeout';
    const restart = source({ cacheDir: dir });
    await restart.list.start();
    expect(restart.list.current?.entries).toBe(428);
    await restart.list.close();
  });

  it('close() during a parse ends the worker before it resolves, and records nothing', async () => {
    let parsing: () => void = () => {};
    const begun = new Promise<void>((resolve) => (parsing = resolve));
    const { list, timers, status } = source({
      file: big.file,
      parse: (body, signal) => {
        parsing();
        // A worker that never answers: close() can only end the parse by terminating it.
        return parseRelayList('geofeed', body, {
          signal,
          entry: new URL('data:text/javascript,setInterval(() => {}, 1000)'),
        });
      },
    });
    const started = list.start();
    await begun;
    expect(relayParseWorkersRunning()).toBe(1);
    await list.close();
    expect(relayParseWorkersRunning()).toBe(0); // the thread has exited, not only been told to
    await started;
    expect(list.current).toBeUndefined();
    expect(timers.live()).toHaveLength(0);
    expect(status().consecutive_failures).toBe(0);
  });

  it('close() while the persisted copy loads ends that parse too, and downloads nothing after', async () => {
    const dir = freshDir();
    served = { status: 200, body: big.text, etag: '"big"' };
    const first = source({ cacheDir: dir });
    await first.list.refresh();
    expect(first.list.current?.entries).toBe(290_000);
    await first.list.close();
    const persisted = readdirSync(dir).find((name) => name.endsWith('.list'))!;
    expect(readFileSync(join(dir, persisted), 'utf8')).toBe(big.text);

    upstream.reset();
    let parsing: () => void = () => {};
    const begun = new Promise<void>((resolve) => (parsing = resolve));
    const second = source({
      cacheDir: dir,
      parse: (body, signal) => {
        parsing();
        return parseRelayList('geofeed', body, { signal, store: { dir, prefix: info.id } });
      },
    });
    const started = second.list.start();
    await begun;
    await second.list.close();
    expect(relayParseWorkersRunning()).toBe(0);
    await started;
    expect(second.list.current).toBeUndefined();
    expect(second.requests()).toEqual([]);
    expect(logged.filter((l) => l.msg === 'persisted list unusable')).toEqual([]);
    expect(descriptorsUnder(dir)).toEqual([]);
  });
});

describe('the relay index file in the list cache directory', () => {
  const V2 = `${APPLE}192.0.2.0/24,US,US-NY,New York,\n`;

  it('is written at the first load, reused by another process, replaced by a refresh with a new body', async () => {
    const dir = freshDir();
    const a = source({ cacheDir: dir });
    await a.list.refresh();
    expect(a.origins).toEqual(['written']);
    const [first] = indexFiles(dir);
    expect(first).toMatch(/^apple-private-relay-[0-9a-f]{16}\.index$/);
    const written = statSync(join(dir, first!));
    expect(descriptorsUnder(dir)).toEqual([join(dir, first!)]);

    // Another worker process of the machine loads the same list: it opens that file, parsing nothing.
    const b = source({ cacheDir: dir });
    await b.list.refresh();
    expect(b.origins).toEqual(['reused']);
    expect(indexFiles(dir)).toEqual([first]);
    expect(statSync(join(dir, first!))).toMatchObject({ ino: written.ino, mtimeMs: written.mtimeMs });
    expect(isRelay(b.list, '172.224.226.1')).toBe(true);

    // A new body: a new file; the old one, which no list of this process uses any more, is removed.
    served = { status: 200, body: V2, etag: '"v2"' };
    await a.list.refresh();
    expect(a.origins).toEqual(['written', 'written']);
    const [second] = indexFiles(dir);
    expect(indexFiles(dir)).toEqual([second]);
    expect(second).not.toBe(first);
    expect(a.files.open).toBe(1);
    expect(isRelay(a.list, '192.0.2.1')).toBe(true);
    // The other process still reads the file it opened, removed or not, until its own refresh.
    expect(descriptorsUnder(dir).sort()).toEqual(
      [`${join(dir, first!)} (deleted)`, join(dir, second!)].sort(),
    );
    expect(isRelay(b.list, '172.224.226.1')).toBe(true);
    expect(isRelay(b.list, '192.0.2.1')).toBe(false);
    await b.list.refresh();
    expect(b.origins).toEqual(['reused', 'reused']);
    expect(isRelay(b.list, '192.0.2.1')).toBe(true);
    expect(descriptorsUnder(dir)).toEqual([join(dir, second!), join(dir, second!)]);

    // Closed: no descriptor left; the file in use stays, beside the persisted list it was built from.
    await a.list.close();
    await b.list.close();
    expect(descriptorsUnder(dir)).toEqual([]);
    expect(a.list.current).toBeUndefined();
    expect(readdirSync(dir).filter((name) => !/\.(json|list)$/.test(name))).toEqual([second]);

    // A restart loads the persisted copy and opens its index without parsing.
    upstream.fault = 'timeout';
    const c = source({ cacheDir: dir });
    await c.list.start();
    expect(c.origins).toEqual(['reused']);
    expect(isRelay(c.list, '192.0.2.1')).toBe(true);
    await c.list.close();
    expect(descriptorsUnder(dir)).toEqual([]);
  });

  it("removes at the first load the index files older lists left, and never the other list's", async () => {
    const dir = freshDir();
    writeFileSync(join(dir, 'apple-private-relay-0123456789abcdef.index'), 'an index of last month');
    writeFileSync(join(dir, 'tor-exit-list-0123456789abcdef.index'), "the Tor list's");
    writeFileSync(
      join(dir, 'apple-private-relay-0123456789abcdef.index.1-1-ab.tmp'),
      'another process writing',
    );
    const { list } = source({ cacheDir: dir });
    await list.refresh();
    expect(listing(dir)).toEqual([
      'apple-private-relay-<hash>.index',
      'apple-private-relay-<hash>.index.1-1-ab.tmp',
      'apple-private-relay-<hash>.json',
      'apple-private-relay-<hash>.list',
      'tor-exit-list-<hash>.index',
    ]);
    expect(indexFiles(dir)[0]).not.toBe('apple-private-relay-0123456789abcdef.index');
    await list.close();
  });

  it('releases a persisted copy whose parse ends after a download brought a newer one', async () => {
    const dir = freshDir();
    const first = source({ cacheDir: dir });
    await first.list.refresh();
    await first.list.close();

    // The persisted copy's parse is held until the download's has swapped its copy in.
    let downloaded: () => void = () => {};
    const swapped = new Promise<void>((resolve) => (downloaded = resolve));
    const files = new RelayIndexFiles({ dir, provider: info.id, format: 'geofeed', log });
    let calls = 0;
    const second = source({
      cacheDir: dir,
      parse: async (body, signal) => {
        const call = calls++;
        const parsed = await files.parse(body, signal);
        if (call === 0) await swapped;
        return parsed;
      },
    });
    const started = second.list.start();
    await vi.waitFor(() => expect(calls).toBe(1), { timeout: 15_000 });
    await second.list.refresh();
    downloaded();
    await started;
    // Both parses opened the index; the one not taken was released (closed), not leaked.
    expect(descriptorsUnder(dir)).toHaveLength(1);
    await second.list.close();
    expect(descriptorsUnder(dir)).toEqual([]);
  });

  it('without a writable directory serves the index from memory and says so once', async () => {
    const blocker = join(freshDir(), 'a-file');
    writeFileSync(blocker, 'a file where the cache directory would go');
    for (const cacheDir of [join(blocker, 'cache'), undefined]) {
      const before = logged.length;
      const { list, origins } = source({ cacheDir });
      await list.refresh();
      expect(isRelay(list, '172.224.226.1')).toBe(true);
      served = { status: 200, body: V2, etag: '"v2"' };
      await list.refresh();
      expect(origins).toEqual(['memory', 'memory']);
      expect(isRelay(list, '192.0.2.1')).toBe(true);
      const warnings = logged
        .slice(before)
        .filter((l) => l.msg.startsWith('relay index could not be written'));
      expect(warnings).toHaveLength(1);
      await list.close();
      served = { status: 200, body: APPLE, etag: ETAG };
    }
  });
});
