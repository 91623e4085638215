/**
 * The replay store's bound (plugins/cached-answers.ts, issue 29 F5): what it counts for a
 * replay (its key, headers and payload, in a buffer of its own) and that many long
 * spellings stay within it. The store is driven as the plugin drives it: `keep` with what
 * Fastify is sending, the server's listener to send a replay.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { describe, expect, it } from 'vitest';
import {
  CachedAnswers,
  REPLAY_BYTES,
  REPLAY_URL_MAX,
  type ReplayDeps,
} from '../../../src/plugins/cached-answers.js';
import type { Budget } from '../../../src/rate-limit/client-limits.js';

const deps: ReplayDeps = {
  clock: () => 0,
  trust: undefined,
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
const KEPT = {
  route: '/api/dns',
  budget: { counters: [], policy: '' } as Budget,
  gated: false,
  expiresAt: 60_000,
};

function keep(answers: CachedAnswers, url: string, payload: string | Buffer, headers = {}): void {
  const request = { method: 'GET', raw: { url, headers } } as unknown as FastifyRequest;
  const reply = { statusCode: 200, getHeaders: () => ({ ...SENT, ...headers }) } as unknown as FastifyReply;
  answers.keep(request, reply, payload, KEPT);
}

/** Sends `url` through the store's listener; the payload a replay wrote, or undefined when it left it to Fastify. */
function replayed(answers: CachedAnswers, url: string, headers = {}): Buffer | undefined {
  answers.arm({
    admit: () => ({ items: '"general";r=8;t=60' }),
    settle: () => {},
    admitsSession: () => true,
    underPressure: () => false,
    refusedConnection: () => false,
  });
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
    const answers = new CachedAnswers({ ...deps, maxBytes });
    const payload = 'x'.repeat(300);
    for (let i = 0; i < 1_000; i++) keep(answers, spelling(i, REPLAY_URL_MAX), payload);
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
    const answers = new CachedAnswers(deps);
    const payload = 'x'.repeat(300);
    for (let i = 0; i < 20_000; i++) keep(answers, spelling(i, REPLAY_URL_MAX), payload);
    const held = answers.holdings();
    expect(held.maxBytes).toBe(REPLAY_BYTES);
    expect(held.bytes).toBeLessThanOrEqual(REPLAY_BYTES);
    expect(held.entries).toBeLessThanOrEqual(Math.floor(REPLAY_BYTES / REPLAY_URL_MAX));
    // The keys alone of the replays held fit in the bound (before F5 they were not counted: 20 000 × 15 KB).
    expect(held.entries * REPLAY_URL_MAX).toBeLessThanOrEqual(held.bytes);
  });

  it('F5: keeps no replay for a URL longer than REPLAY_URL_MAX', () => {
    const answers = new CachedAnswers(deps);
    keep(answers, spelling(1, REPLAY_URL_MAX + 1), '{}');
    expect(answers.holdings()).toMatchObject({ entries: 0, bytes: 0 });
    expect(replayed(answers, spelling(1, REPLAY_URL_MAX + 1))).toBeUndefined();
  });

  it('F5: holds a payload in a buffer of its own, not a view pinning a larger one', () => {
    const answers = new CachedAnswers(deps);
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
    const answers = new CachedAnswers(deps);
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
