/**
 * The relay lists parsed in a worker thread: the index that comes back answers
 * exactly as the one parsed in this thread, its arrays are moved (transferred),
 * not copied, and every way the worker can fail ends as a rejection.
 */
import { MessageChannel } from 'node:worker_threads';
import { beforeAll, describe, expect, it } from 'vitest';
import { syntheticGeofeed } from '../../../../bench/synthetic-geofeed.js';
import { ListFormatError } from '../../../../src/providers/ip/csv.js';
import { type ParsedIp, parseIp } from '../../../../src/providers/ip/ip-number.js';
import {
  parseExitList,
  parseGeofeed,
  RelayIndex,
  type TransferableRelayIndex,
} from '../../../../src/providers/ip/relay-index.js';
import { parseRelayList, relayParseWorkersRunning } from '../../../../src/providers/ip/relay-list-parse.js';
import { answer, type ParseReply } from '../../../../src/providers/ip/relay-list-worker.js';
import { fixtureText } from '../../../fakes/https-upstream.js';

const APPLE = fixtureText('relay/egress-ip-ranges.excerpt.csv');
const TOR = fixtureText('relay/tor-torbulkexitlist.txt');
const FEED = fixtureText('ip/geofeed-mixed.csv');

/** A Buffer that owns its whole ArrayBuffer, as a download or a file read of any size gives. */
const owned = (text: string) => {
  const bytes = Buffer.from(text);
  const copy = Buffer.alloc(bytes.length);
  bytes.copy(copy);
  return copy;
};

/** A worker module that never answers nor exits. */
const HANGS = new URL('data:text/javascript,setInterval(() => {}, 1000)');

const v4 = (n: number): ParsedIp => ({ version: 4, v4: n >>> 0 });

/** Every probe answered the same by both indexes (prefix text and region); returns the mismatches and the hits. */
function compare(
  a: RelayIndex,
  b: RelayIndex,
  probes: Iterable<ParsedIp>,
): { mismatches: string[]; hits: number } {
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

/** Posts `message` through a MessageChannel with `transfer` and resolves with what arrives on the other side. */
async function roundTrip<T>(message: T, transfer: ArrayBuffer[]): Promise<T> {
  const { port1, port2 } = new MessageChannel();
  const received = new Promise<T>((resolve) => port2.once('message', resolve));
  port1.postMessage(message, transfer);
  try {
    return await received;
  } finally {
    port1.close();
  }
}

const arraysOf = (index: TransferableRelayIndex) => [
  index.v4.starts,
  index.v4.ends,
  index.v4.values,
  index.v6.starts,
  index.v6.ends,
  index.v6.values,
  index.bits,
  index.regionOf,
];

describe('relay lists parsed in a worker thread', () => {
  const synthetic = syntheticGeofeed(290_000);
  let inThread: RelayIndex;
  beforeAll(() => {
    inThread = parseGeofeed(synthetic.text).index;
  });

  it('answers a list of Apple size exactly as the in-thread parse: IPv4 and IPv6, hits, misses, regions', async () => {
    const parsed = await parseRelayList('geofeed', owned(synthetic.text));
    expect(relayParseWorkersRunning()).toBe(0); // settled once the thread had exited
    expect(parsed).toMatchObject({ entries: 290_000, skipped: 0, problems: [] });
    expect(parsed.data.entries).toBe(inThread.entries);
    expect(parsed.data.byteLength).toBe(inThread.byteLength);
    const probes = function* (): Generator<ParsedIp> {
      for (const n of synthetic.hits4) yield v4(n);
      for (const n of synthetic.misses4) yield v4(n);
      for (const w of synthetic.hits6) yield { version: 6, w };
      for (const w of synthetic.misses6) yield { version: 6, w };
      // Around and between the ranges, and far from them.
      for (let i = 0; i < 50_000; i++) yield v4(0xace00000 + i * 37);
      for (let i = 0; i < 20_000; i++) yield v4(i * 214_748);
      for (let i = 0; i < 20_000; i++) yield { version: 6, w: [0x2a0226f7, 0xc7000000 + i * 4099, 0, i] };
    };
    const { mismatches, hits } = compare(inThread, parsed.data, probes());
    expect(mismatches).toEqual([]);
    expect(hits).toBeGreaterThan(290_000); // every listed range answered, so the comparison is not of misses
    expect(synthetic.misses4.length + synthetic.misses6.length).toBeGreaterThan(100_000);
    // The regions are the geofeed's, frozen as the in-thread ones are.
    const hit = parsed.data.lookup(v4(synthetic.hits4[0]!))!;
    expect(hit.egress_region).toEqual(inThread.lookup(v4(synthetic.hits4[0]!))!.egress_region);
    expect(Object.isFrozen(hit.egress_region)).toBe(true);
  });

  it('answers the real excerpts (nested prefixes, quoted cities, the Tor list) as the in-thread parsers do', async () => {
    for (const [format, text, parse] of [
      ['geofeed', APPLE, parseGeofeed],
      ['geofeed', FEED, parseGeofeed],
      ['tor-exits', TOR, parseExitList],
    ] as const) {
      const local = parse(text);
      const remote = await parseRelayList(format, owned(text));
      expect(remote).toMatchObject(local.report);
      const probes = [
        '172.224.226.0',
        '172.224.226.33',
        '172.224.241.100',
        '172.224.242.0',
        '2a02:26f7:c700:4000::',
        '2a02:26f7:c700:4001::',
        '198.51.100.17',
        '198.51.100.32',
        '198.51.100.200',
        '2001:db8:1::1',
        '185.220.101.18',
        '93.95.230.253',
        '93.95.230.254',
        '8.8.8.8',
      ].map((ip) => parseIp(ip)!);
      expect(compare(local.index, remote.data, probes).mismatches).toEqual([]);
    }
  });

  it('moves the index arrays: posting the transferable form detaches them on the sending side', async () => {
    const { index } = parseGeofeed(APPLE);
    const { index: data, transfer } = index.toTransferable();
    expect(transfer.length).toBe(8);
    const received = await roundTrip(data, transfer);
    for (const array of arraysOf(data)) expect(array.buffer.byteLength).toBe(0);
    expect(index.lookup(parseIp('172.224.226.1')!)).toBeUndefined(); // the sender's copy is gone, not shared
    const rebuilt = RelayIndex.fromTransferable(received);
    expect(rebuilt.lookup(parseIp('172.224.226.1')!)).toEqual(
      parseGeofeed(APPLE).index.lookup(parseIp('172.224.226.1')!),
    );
  });

  it('the worker posts its reply with every index array in the transfer list', async () => {
    const { port1, port2 } = new MessageChannel();
    const received = new Promise<ParseReply>((resolve) => port2.once('message', resolve));
    let sent: ParseReply | undefined;
    answer(
      {
        postMessage: (reply: ParseReply, transfer: ArrayBuffer[]) => {
          sent = reply;
          port1.postMessage(reply, transfer);
        },
      },
      { format: 'geofeed', body: owned(APPLE) },
    );
    const reply = await received;
    port1.close();
    expect(sent?.ok && reply.ok).toBe(true);
    for (const array of arraysOf((sent as Extract<ParseReply, { ok: true }>).index))
      expect(array.buffer.byteLength).toBe(0);
    const index = RelayIndex.fromTransferable((reply as Extract<ParseReply, { ok: true }>).index);
    expect(index.lookup(parseIp('172.224.226.1')!)?.prefix).toBe('172.224.226.0/27');
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
      parseRelayList('geofeed', body(), undefined, new URL('http://127.0.0.1/x.js')),
    ).rejects.toThrow(/scheme/);
    await expect(
      parseRelayList('geofeed', body(), undefined, new URL('file:///nonexistent/relay-list-worker.js')),
    ).rejects.toThrow(/Cannot find module/);
    await expect(
      parseRelayList('geofeed', body(), undefined, new URL('data:text/javascript,throw new Error("boom")')),
    ).rejects.toThrow('boom');
    await expect(
      parseRelayList('geofeed', body(), undefined, new URL('data:text/javascript,process.exit(3)')),
    ).rejects.toThrow('relay list parser exited (3) without an answer');
    expect(relayParseWorkersRunning()).toBe(0);
  });

  it('stops when aborted: before the start, or while parsing, once the thread is gone', async () => {
    const before = new AbortController();
    before.abort(new Error('closed before'));
    await expect(parseRelayList('geofeed', owned(APPLE), before.signal)).rejects.toThrow('closed before');
    expect(relayParseWorkersRunning()).toBe(0);
    const during = new AbortController();
    const pending = parseRelayList('geofeed', owned(synthetic.text), during.signal);
    expect(relayParseWorkersRunning()).toBe(1);
    // Starting a worker thread (from source, compiling its modules) and parsing 290 000 rows take far longer.
    setTimeout(() => during.abort(new Error('closing')), 5);
    await expect(pending).rejects.toThrow('closing');
    expect(relayParseWorkersRunning()).toBe(0);
    // A worker that would never answer: only terminating it settles the parse.
    const stuck = new AbortController();
    const hung = parseRelayList('geofeed', owned(APPLE), stuck.signal, HANGS);
    setTimeout(() => stuck.abort(new Error('closing a hung parse')), 200);
    await expect(hung).rejects.toThrow('closing a hung parse');
    expect(relayParseWorkersRunning()).toBe(0);
  });
});
