/**
 * The replay store's bound (plugins/response-cache.ts, issue 29 F5): what it counts for a
 * replay (its key, headers and payload, in a buffer of its own) and that many long
 * spellings stay within it. The store is driven as the plugin drives it: `keep` with what
 * Fastify is sending, the server's listener to send a replay.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { describe, expect, it } from 'vitest';
import { RequestPipeline } from '../../../src/plugins/request-checks.js';
import {
  REPLAY_BYTES,
  REPLAY_URL_MAX,
  type ReplayDeps,
  ResponseCache,
} from '../../../src/plugins/response-cache.js';

/** One check writing the RateLimit header, as the rate-limit check does. */
let remaining = 9;
const pipeline = new RequestPipeline([
  { name: 'rate limit', run: () => ({ headers: { ratelimit: `"general";r=${remaining--};t=60` } }) },
]);

const deps: ReplayDeps = {
  clock: () => 0,
  trust: undefined,
  pipeline,
  access: () => {},
  recordRequest: () => {},
  onHit: () => {},
};

const SENT = {
  'x-request-id': 'id',
  ratelimit: '"general";r=9;t=60',
  'cache-control': 'public, max-age=60',
  'content-type': 'application/json; charset=utf-8',
  'x-service-cache': 'HIT',
};
const ROUTE = { url: '/api/dns', config: {} };

/** `keep` as the plugin calls it: after the request's checks ran, for a hit on an entry expiring at `expiresAt`. */
function keep(
  answers: ResponseCache,
  url: string,
  payload: string | Buffer,
  headers = {},
  expiresAt = 60_000,
): void {
  const raw = { url, headers } as unknown as IncomingMessage;
  pipeline.run({
    raw,
    ip: '127.0.0.1',
    route: { path: '/api/dns', matched: true, expensive: false, passive: false },
  });
  const request = { method: 'GET', url, raw, routeOptions: ROUTE } as unknown as FastifyRequest;
  const reply = { statusCode: 200, getHeaders: () => ({ ...SENT, ...headers }) } as unknown as FastifyReply;
  answers.keep(request, reply, payload, expiresAt);
}

/** Sends `url` through the store's listener; the payload a replay wrote, or undefined when it left it to Fastify. */
function replayed(answers: ResponseCache, url: string, headers = {}): Buffer | undefined {
  let sent: Buffer | undefined;
  const req = {
    method: 'GET',
    url,
    httpVersion: '1.1',
    headers: { host: 'netdiag.test', ...headers },
    socket: { remoteAddress: '127.0.0.1' },
  } as unknown as IncomingMessage;
  const res = { writeHead: () => {}, end: (body: Buffer) => (sent = body) } as unknown as ServerResponse;
  answers.listener(() => {})(req, res);
  return sent;
}

const spelling = (i: number, length: number) => {
  const url = `/api/dns?target=example.test&type=A&pad=${i}-`;
  return url + 'p'.repeat(length - url.length);
};

describe('the replay bound', () => {
  it('F5: counts each replay’s key: many long spellings stay within the bound', () => {
    const maxBytes = 256 * 1024;
    const answers = new ResponseCache({ ...deps, maxBytes });
    const payload = 'x'.repeat(300);
    // Each spelling another entry's answer (its own expiry): spellings of one answer are capped apart.
    for (let i = 0; i < 1_000; i++) keep(answers, spelling(i, REPLAY_URL_MAX), payload, {}, 60_000 + i);
    const held = answers.holdings();
    expect(held.maxBytes).toBe(maxBytes);
    expect(held.bytes).toBeLessThanOrEqual(maxBytes);
    // Each replay is counted with its 2 KiB key: far fewer fit than payloads and headers alone would allow.
    expect(held.entries).toBeGreaterThan(0);
    expect(held.entries * (REPLAY_URL_MAX + payload.length)).toBeLessThanOrEqual(held.bytes);
    // The most recent spellings are the ones held.
    expect(replayed(answers, spelling(999, REPLAY_URL_MAX))?.toString()).toBe(payload);
    expect(replayed(answers, spelling(0, REPLAY_URL_MAX))).toBeUndefined();
  });

  it('F5: 20 000 long spellings hold no more than REPLAY_BYTES, keys included', () => {
    const answers = new ResponseCache(deps);
    const payload = 'x'.repeat(300);
    for (let i = 0; i < 20_000; i++) keep(answers, spelling(i, REPLAY_URL_MAX), payload, {}, 60_000 + i);
    const held = answers.holdings();
    expect(held.maxBytes).toBe(REPLAY_BYTES);
    expect(held.bytes).toBeLessThanOrEqual(REPLAY_BYTES);
    expect(held.entries).toBeLessThanOrEqual(Math.floor(REPLAY_BYTES / REPLAY_URL_MAX));
    // The keys alone of the replays held fit in the bound (before F5 they were not counted: 20 000 × 15 KB).
    expect(held.entries * REPLAY_URL_MAX).toBeLessThanOrEqual(held.bytes);
  });

  it('F5: keeps no replay for a URL longer than REPLAY_URL_MAX', () => {
    const answers = new ResponseCache(deps);
    keep(answers, spelling(1, REPLAY_URL_MAX + 1), '{}');
    expect(answers.holdings()).toMatchObject({ entries: 0, bytes: 0 });
    expect(replayed(answers, spelling(1, REPLAY_URL_MAX + 1))).toBeUndefined();
  });

  it('F5: holds a payload in a buffer of its own, not a view pinning a larger one', () => {
    const answers = new ResponseCache(deps);
    // What zlib's one-shot compression returns: 29 bytes at the start of a 16 KiB chunk.
    const chunk = Buffer.alloc(16 * 1024, 7);
    const compressed = chunk.subarray(0, 29);
    keep(answers, '/api/dns?target=a.test&type=A', compressed, {
      'accept-encoding': 'br',
      'content-encoding': 'br',
    });
    // A small string: Buffer.from would put it in a shared 8 KiB pool slab.
    keep(answers, '/api/dns?target=b.test&type=A', '{"small":true}');
    const a = replayed(answers, '/api/dns?target=a.test&type=A', { 'accept-encoding': 'br' });
    const b = replayed(answers, '/api/dns?target=b.test&type=A');
    expect(a?.equals(compressed)).toBe(true);
    expect(b?.toString()).toBe('{"small":true}');
    for (const body of [a, b]) expect(body?.buffer.byteLength).toBe(body?.length);
    expect(answers.holdings().bytes).toBeLessThan(2 * 2048);
  });
});

describe('what a replay is kept under', () => {
  it('F4: nothing, when what left is not in the encoding its key names', () => {
    const answers = new ResponseCache(deps);
    const big = 'x'.repeat(2048);
    // Accepts br, but an uncompressed body of compressible size left (X-No-Compression would
    // have keyed it identity): kept under br it would be replayed to every br client.
    keep(answers, '/api/dns?target=a.test&type=A', big, { 'accept-encoding': 'br' });
    // gzip left where the key would say br.
    keep(answers, '/api/dns?target=b.test&type=A', Buffer.from('gz'), {
      'accept-encoding': 'br',
      'content-encoding': 'gzip',
    });
    expect(answers.holdings().entries).toBe(0);
    // A body too small to compress is sent as it is whatever the client accepts: kept.
    keep(answers, '/api/dns?target=c.test&type=A', '{}', { 'accept-encoding': 'br' });
    expect(replayed(answers, '/api/dns?target=c.test&type=A', { 'accept-encoding': 'br' })?.toString()).toBe(
      '{}',
    );
  });
});

describe('spellings of one answer', () => {
  it('keeps at most four URLs holding one answer, sharing one payload; the others are left to Fastify', () => {
    const answers = new ResponseCache(deps);
    const spellings = ['EXAMPLE.test', 'example.test', 'Example.test', 'example.TEST', 'eXample.test'];
    for (const target of spellings) keep(answers, `/api/dns?target=${target}&type=A`, '{"a":1}');
    expect(answers.holdings().entries).toBe(4);
    const first = replayed(answers, '/api/dns?target=EXAMPLE.test&type=A');
    const second = replayed(answers, '/api/dns?target=example.test&type=A');
    expect(first?.toString()).toBe('{"a":1}');
    // One copy of the bytes for every spelling.
    expect(second?.buffer).toBe(first?.buffer);
    expect(replayed(answers, '/api/dns?target=eXample.test&type=A')).toBeUndefined();
    // Another answer (other bytes, or another entry's expiry) is counted apart.
    keep(answers, '/api/dns?target=eXample.test&type=A', '{"a":1}', {}, 90_000);
    expect(answers.holdings().entries).toBe(5);
  });
});

describe('spellings of one answer, kept again', () => {
  it('a spelling kept a second time is still counted with its answer', () => {
    const answers = new ResponseCache(deps);
    const url = (target: string) => `/api/dns?target=${target}&type=A`;
    keep(answers, url('a.test'), '{"b":2}');
    keep(answers, url('a.test'), '{"b":2}');
    for (const target of ['A.test', 'a.TEST', 'A.TEST', 'a.Test']) keep(answers, url(target), '{"b":2}');
    expect(answers.holdings().entries).toBe(4);
    expect(replayed(answers, url('a.Test'))).toBeUndefined();
  });
});

describe('what a replay follows', () => {
  it('keeps nothing whose Vary names a header it does not reduce; Accept-Encoding and Cookie are kept', () => {
    const answers = new ResponseCache(deps);
    keep(answers, '/api/dns?target=a.test&type=A', '{}', { vary: 'accept-encoding, User-Agent' });
    expect(answers.holdings().entries).toBe(0);
    keep(answers, '/api/dns?target=b.test&type=A', '{}', { vary: 'accept-encoding, Cookie' });
    expect(answers.holdings().entries).toBe(1);
  });

  it("writes the checks' headers afresh on every replay, in the place Fastify sent them", () => {
    const answers = new ResponseCache(deps);
    keep(answers, '/api/dns?target=a.test&type=A', '{}');
    const written: string[][] = [];
    for (let i = 0; i < 2; i++) {
      const req = {
        method: 'GET',
        url: '/api/dns?target=a.test&type=A',
        httpVersion: '1.1',
        headers: { host: 'netdiag.test' },
        socket: { remoteAddress: '127.0.0.1' },
      } as unknown as IncomingMessage;
      const res = {
        writeHead: (_status: number, headers: string[]) => written.push(headers),
        end: () => {},
      } as unknown as ServerResponse;
      answers.listener(() => {})(req, res);
    }
    const rateLimits = written.map((h) => h[h.indexOf('ratelimit') + 1]);
    expect(rateLimits[0]).not.toBe(rateLimits[1]);
    expect(written[0]!.indexOf('ratelimit')).toBe(Object.keys(SENT).indexOf('ratelimit') * 2);
  });
});
