/**
 * The relay lists parsed in a worker thread into an index file: the index the
 * service reads (from the file in the cache directory, or from memory when
 * there is none) answers exactly as the one parsed in this thread; a file a
 * first parse placed is reused; one removed before it could be opened is
 * placed again; the body and an index in memory are moved (transferred), not
 * copied; and every way the worker can fail ends as a rejection, with no
 * descriptor left open.
 */
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MessageChannel } from 'node:worker_threads';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { syntheticGeofeed } from '../../../../bench/synthetic-geofeed.js';
import { BlockFile } from '../../../../src/providers/ip/block-file.js';
import { ListFormatError } from '../../../../src/providers/ip/csv.js';
import { type ParsedIp, parseIpNumber } from '../../../../src/providers/ip/ip-number.js';
import { parseExitList, parseGeofeed, type RelayHit } from '../../../../src/providers/ip/relay-index.js';
import { RelayIndexFile } from '../../../../src/providers/ip/relay-index-file.js';
import {
  type ParseRelayListOptions,
  parseRelayList,
  relayParseWorkersRunning,
} from '../../../../src/providers/ip/relay-list-parse.js';
import { answer, type ParseReply } from '../../../../src/providers/ip/relay-list-worker.js';
import { descriptorsUnder } from '../../../descriptors.js';
import { fixtureText } from '../../../fakes/https-upstream.js';

const APPLE = fixtureText('relay/egress-ip-ranges.excerpt.csv');
const TOR = fixtureText('relay/tor-torbulkexitlist.txt');
const FEED = fixtureText('ip/geofeed-mixed.csv');

const root = mkdtempSync(join(tmpdir(), 'netdiag-relay-parse-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let dirs = 0;
const freshDir = () => join(root, `cache-${dirs++}`);
const storeIn = (dir: string): ParseRelayListOptions['store'] => ({ dir, prefix: 'apple-private-relay' });

/** A Buffer that owns its whole ArrayBuffer, as a download or a file read of any size gives. */
const owned = (text: string) => {
  const bytes = Buffer.from(text);
  const copy = Buffer.alloc(bytes.length);
  bytes.copy(copy);
  return copy;
};

/** A worker module that never answers nor exits. */
const HANGS = new URL('data:text/javascript,setInterval(() => {}, 1000)');
/** The real worker, but the first index file it names is gone before the main thread opens it. */
const RACING = new URL('../../../fakes/relay-list-worker-racing.ts', import.meta.url);

const v4 = (n: number): ParsedIp => ({ version: 4, v4: n >>> 0 });

type Lookup = { lookup(ip: ParsedIp): RelayHit | undefined };

/** Every probe answered the same by both indexes (prefix text and region); returns the mismatches and the hits. */
function compare(a: Lookup, b: Lookup, probes: Iterable<ParsedIp>): { mismatches: string[]; hits: number } {
  const mismatches: string[] = [];
  let hits = 0;
  for (const ip of probes) {
    const x = a.lookup(ip);
    const y = b.lookup(ip);
    if (x) hits++;
    if (JSON.stringify(x) !== JSON.stringify(y) && mismatches.length < 5) {
      mismatches.push(`${JSON.stringify(ip)}: ${JSON.stringify(x)} ≠ ${JSON.stringify(y)}`);
    }
  }
  return { mismatches, hits };
}

const EXCERPT_PROBES = [
  '172.224.226.0',
  '172.224.226.33',
  '172.224.226.34',
  '172.224.241.100',
  '172.224.241.255',
  '172.224.242.0',
  '2a02:26f7:c700:4000::',
  '2a02:26f7:c700:4000:ffff:ffff:ffff:ffff',
  '2a02:26f7:c700:4001::',
  '2a02:26f7:c700:3fff:ffff:ffff:ffff:ffff',
  '198.51.100.1',
  '198.51.100.17',
  '198.51.100.32',
  '198.51.100.200',
  '2001:db8:1::1',
  '2001:db8:2::1',
  '185.220.101.18',
  '93.95.230.252',
  '93.95.230.253',
  '93.95.230.254',
  '8.8.8.8',
  '::1',
].map((ip) => parseIpNumber(ip)!);

describe('relay lists parsed in a worker thread', () => {
  const synthetic = syntheticGeofeed(290_000);
  let inThread: ReturnType<typeof parseGeofeed>['index'];
  beforeAll(() => {
    inThread = parseGeofeed(synthetic.text).index;
  });
  const syntheticProbes = function* (): Generator<ParsedIp> {
    for (const n of synthetic.hits4) yield v4(n);
    for (const n of synthetic.misses4) yield v4(n);
    for (const w of synthetic.hits6) yield { version: 6, w };
    for (const w of synthetic.misses6) yield { version: 6, w };
    // Around and between the ranges, and far from them.
    for (let i = 0; i < 50_000; i++) yield v4(0xace00000 + i * 37);
    for (let i = 0; i < 20_000; i++) yield v4(i * 214_748);
    for (let i = 0; i < 20_000; i++) yield { version: 6, w: [0x2a0226f7, 0xc7000000 + i * 4099, 0, i] };
  };

  it('answers a list of Apple size from its index file exactly as the in-thread parse: IPv4 and IPv6, hits, misses, regions', async () => {
    const dir = freshDir();
    const parsed = await parseRelayList('geofeed', owned(synthetic.text), { store: storeIn(dir) });
    expect(relayParseWorkersRunning()).toBe(0); // settled once the thread had exited
    expect(parsed).toMatchObject({ entries: 290_000, skipped: 0, problems: [], origin: 'written' });
    expect(parsed.path).toBe(join(dir, readdirSync(dir)[0]!));
    expect(readdirSync(dir)).toEqual([expect.stringMatching(/^apple-private-relay-[0-9a-f]{16}\.index$/)]);
    expect(parsed.data.entries).toBe(inThread.entries);
    const { mismatches, hits } = compare(inThread, parsed.data, syntheticProbes());
    expect(mismatches).toEqual([]);
    expect(hits).toBeGreaterThan(290_000); // every listed range answered, so the comparison is not of misses
    expect(synthetic.misses4.length + synthetic.misses6.length).toBeGreaterThan(100_000);
    // The regions are the geofeed's, frozen as the in-thread ones are.
    const hit = parsed.data.lookup(v4(synthetic.hits4[0]!))!;
    expect(hit.egress_region).toEqual(inThread.lookup(v4(synthetic.hits4[0]!))!.egress_region);
    expect(Object.isFrozen(hit.egress_region)).toBe(true);
    // Read from the file through a bounded cache: this process holds a fraction of the ~10 MB index.
    expect(statSync(parsed.path!).size).toBeGreaterThan(8_000_000);
    expect(parsed.data.cachedBytes).toBeLessThanOrEqual(1024 * 1024);
    parsed.data.close();
    expect(descriptorsUnder(dir)).toEqual([]);
  }, 120_000); // Seconds of parsing and 700 000 lookups: generous for a loaded 2-core machine.

  it('answers the same from memory when there is no directory', async () => {
    const parsed = await parseRelayList('geofeed', owned(synthetic.text));
    expect(parsed).toMatchObject({
      entries: 290_000,
      origin: 'memory',
      path: undefined,
      writeError: undefined,
    });
    expect(compare(inThread, parsed.data, syntheticProbes()).mismatches).toEqual([]);
  });

  it('answers the real excerpts (nested prefixes, quoted cities, the Tor list) as the in-thread parsers do, from a file and from memory', async () => {
    for (const [format, text, parse] of [
      ['geofeed', APPLE, parseGeofeed],
      ['geofeed', FEED, parseGeofeed],
      ['tor-exits', TOR, parseExitList],
    ] as const) {
      const local = parse(text);
      for (const store of [storeIn(freshDir()), undefined]) {
        const remote = await parseRelayList(format, owned(text), { store });
        expect(remote).toMatchObject(local.report);
        expect(remote.origin).toBe(store ? 'written' : 'memory');
        const { mismatches, hits } = compare(local.index, remote.data, EXCERPT_PROBES);
        expect(mismatches).toEqual([]);
        expect(hits).toBeGreaterThanOrEqual(2); // the Tor list holds two of the probes
        remote.data.close();
      }
    }
  });

  it('reuses the file a first parse placed, as another process loading the same list does, without parsing it again', async () => {
    const dir = freshDir();
    const first = await parseRelayList('geofeed', owned(APPLE), { store: storeIn(dir) });
    const written = statSync(first.path!);
    const second = await parseRelayList('geofeed', owned(APPLE), { store: storeIn(dir) });
    expect(second).toMatchObject({ origin: 'reused', path: first.path, entries: 428 });
    expect(statSync(first.path!)).toMatchObject({ ino: written.ino, mtimeMs: written.mtimeMs });
    expect(compare(first.data, second.data, EXCERPT_PROBES).mismatches).toEqual([]);
    // Another list (or the same list with one more row) is another file; the Tor list beside it too.
    const other = await parseRelayList('geofeed', owned(`${APPLE}192.0.2.0/24,US,,,\n`), {
      store: storeIn(dir),
    });
    expect(other.origin).toBe('written');
    expect(other.path).not.toBe(first.path);
    expect(other.data.lookup(parseIpNumber('192.0.2.1')!)?.prefix).toBe('192.0.2.0/24');
    expect(readdirSync(dir)).toHaveLength(2);
    for (const p of [first, second, other]) p.data.close();
    expect(descriptorsUnder(dir)).toEqual([]);
  });

  it('rebuilds over a file by that name that is not a whole index', async () => {
    const dir = freshDir();
    const first = await parseRelayList('geofeed', owned(APPLE), { store: storeIn(dir) });
    first.data.close();
    writeFileSync(first.path!, 'NDRLYIX1 but cut short');
    const again = await parseRelayList('geofeed', owned(APPLE), { store: storeIn(dir) });
    expect(again).toMatchObject({ origin: 'written', path: first.path, entries: 428 });
    expect(compare(parseGeofeed(APPLE).index, again.data, EXCERPT_PROBES).mismatches).toEqual([]);
    again.data.close();
  });

  it('places the file again when another process removed it before this one could open it', async () => {
    const dir = freshDir();
    const parsed = await parseRelayList('geofeed', owned(APPLE), { store: storeIn(dir), entry: RACING });
    // The racing worker removed the file it first named; the main thread answered 'again' and opened the second.
    expect(parsed).toMatchObject({ origin: 'written', entries: 428 });
    expect(existsSync(parsed.path!)).toBe(true);
    expect(compare(parseGeofeed(APPLE).index, parsed.data, EXCERPT_PROBES).mismatches).toEqual([]);
    parsed.data.close();
    expect(relayParseWorkersRunning()).toBe(0);
  });

  it('the worker places the file again on each "again", then sends the index in memory, its bytes transferred', async () => {
    const dir = freshDir();
    const { port1, port2 } = new MessageChannel();
    const replies: ParseReply[] = [];
    const next = () => new Promise<ParseReply>((resolve) => port2.once('message', resolve));
    let sent: ParseReply | undefined;
    const postMessage = (reply: ParseReply, transfer: ArrayBuffer[]) => {
      sent = reply;
      port1.postMessage(reply, transfer);
    };
    const done = answer(
      { postMessage, once: (event, listener) => port1.once(event, listener) },
      { format: 'geofeed', body: owned(APPLE), store: storeIn(dir) },
    );
    for (let i = 0; i < 3; i++) {
      const reply = await next();
      replies.push(reply);
      if (!(reply.ok && 'path' in reply)) break;
      unlinkSync(reply.path); // gone again before it could be opened
      port2.postMessage('again');
    }
    const last = await next();
    await done;
    port1.close();
    expect(replies.map((r) => r.ok && 'path' in r && r.reused)).toEqual([false, false, false]);
    expect(last).toMatchObject({
      ok: true,
      writeError: expect.stringMatching(/could not be opened after 3/),
    });
    // Moved, not copied: the sender's buffer is detached.
    expect((sent as Extract<ParseReply, { index: Uint8Array }>).index.buffer.byteLength).toBe(0);
    const { index } = last as Extract<ParseReply, { index: Uint8Array }>;
    const inMemory = new RelayIndexFile(
      BlockFile.fromBuffer(Buffer.from(index.buffer, index.byteOffset, index.byteLength)),
    );
    expect(inMemory.lookup(parseIpNumber('172.224.226.1')!)?.prefix).toBe('172.224.226.0/27');
  });

  it('falls back to an index in memory when the directory cannot be written', async () => {
    const blocker = join(root, `a-file-${dirs++}`);
    writeFileSync(blocker, 'a file where the cache directory would go');
    const parsed = await parseRelayList('geofeed', owned(APPLE), { store: storeIn(join(blocker, 'cache')) });
    expect(parsed).toMatchObject({ origin: 'memory', path: undefined, entries: 428 });
    expect(parsed.writeError).toMatch(/ENOTDIR|EEXIST/);
    expect(compare(parseGeofeed(APPLE).index, parsed.data, EXCERPT_PROBES).mismatches).toEqual([]);
  });

  it('moves a body that owns its buffer to the worker, and copies one that shares it', async () => {
    const body = owned(APPLE);
    const pending = parseRelayList('geofeed', body);
    expect(body.length).toBe(0); // detached as the worker started: the main thread holds no copy
    expect((await pending).entries).toBe(428);
    // Two Buffers over one ArrayBuffer, as small ones share Node's pool: moving it would empty the other.
    const shared = new ArrayBuffer(64);
    const line = Buffer.from(shared, 8, 19);
    line.write('192.0.2.0/24,US,,,\n');
    const neighbour = Buffer.from(shared, 40, 9);
    neighbour.write('untouched');
    expect((await parseRelayList('geofeed', line)).entries).toBe(1);
    expect(line.toString()).toBe('192.0.2.0/24,US,,,\n');
    expect(neighbour.toString()).toBe('untouched');
  });

  it('rejects a body that is not the list with the ListFormatError the in-thread parser throws', async () => {
    const html = '<html><body>502 Bad Gateway</body></html>\n';
    const error = await parseRelayList('geofeed', owned(html)).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(ListFormatError);
    expect((error as Error).message).toBe(
      (() => {
        try {
          parseGeofeed(html);
        } catch (err) {
          return (err as Error).message;
        }
      })(),
    );
    await expect(parseRelayList('tor-exits', owned('192.0.2.0/24\n'))).rejects.toBeInstanceOf(
      ListFormatError,
    );
  });

  it('rejects, never throws elsewhere, when the worker cannot start, crashes or exits without an answer', async () => {
    const body = () => owned(APPLE);
    await expect(
      parseRelayList('geofeed', body(), { entry: new URL('http://127.0.0.1/x.js') }),
    ).rejects.toThrow(/scheme/);
    await expect(
      parseRelayList('geofeed', body(), { entry: new URL('file:///nonexistent/relay-list-worker.js') }),
    ).rejects.toThrow(/Cannot find module/);
    await expect(
      parseRelayList('geofeed', body(), { entry: new URL('data:text/javascript,throw new Error("boom")') }),
    ).rejects.toThrow('boom');
    await expect(
      parseRelayList('geofeed', body(), { entry: new URL('data:text/javascript,process.exit(3)') }),
    ).rejects.toThrow('relay list parser exited (3) without an answer');
    expect(relayParseWorkersRunning()).toBe(0);
  });

  it('stops when aborted: before the start, or while parsing, once the thread is gone, with no descriptor left open', async () => {
    const before = new AbortController();
    before.abort(new Error('closed before'));
    await expect(parseRelayList('geofeed', owned(APPLE), { signal: before.signal })).rejects.toThrow(
      'closed before',
    );
    expect(relayParseWorkersRunning()).toBe(0);
    const dir = freshDir();
    const during = new AbortController();
    const pending = parseRelayList('geofeed', owned(synthetic.text), {
      store: storeIn(dir),
      signal: during.signal,
    });
    expect(relayParseWorkersRunning()).toBe(1);
    // Starting a worker thread (from source, compiling its modules) and parsing 290 000 rows take far longer.
    setTimeout(() => during.abort(new Error('closing')), 5);
    await expect(pending).rejects.toThrow('closing');
    expect(relayParseWorkersRunning()).toBe(0);
    expect(descriptorsUnder(dir)).toEqual([]);
    // A worker that would never answer: only terminating it settles the parse.
    const stuck = new AbortController();
    const hung = parseRelayList('geofeed', owned(APPLE), { signal: stuck.signal, entry: HANGS });
    setTimeout(() => stuck.abort(new Error('closing a hung parse')), 200);
    await expect(hung).rejects.toThrow('closing a hung parse');
    expect(relayParseWorkersRunning()).toBe(0);
  });

  it('an abort that comes once the index is open closes it', async () => {
    const dir = freshDir();
    const first = await parseRelayList('geofeed', owned(APPLE), { store: storeIn(dir) });
    first.data.close();
    // A worker that names the index file, then never exits: the index is open when close() comes.
    const names = new URL(
      `data:text/javascript,${encodeURIComponent(
        `import { parentPort } from 'node:worker_threads';
         parentPort.postMessage({ ok: true, path: ${JSON.stringify(first.path)}, reused: true });
         setInterval(() => {}, 1000);`,
      )}`,
    );
    const aborting = new AbortController();
    const parsed = parseRelayList('geofeed', owned(APPLE), {
      store: storeIn(dir),
      signal: aborting.signal,
      entry: names,
    });
    for (let i = 0; i < 500 && descriptorsUnder(dir).length === 0; i++)
      await new Promise((r) => setTimeout(r, 10));
    expect(descriptorsUnder(dir)).toEqual([first.path]);
    aborting.abort(new Error('closing'));
    await expect(parsed).rejects.toThrow('closing');
    expect(descriptorsUnder(dir)).toEqual([]);
    expect(relayParseWorkersRunning()).toBe(0);
  });
});
