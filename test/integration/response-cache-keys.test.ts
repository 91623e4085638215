/**
 * What a replay of a cached answer is keyed on (plugins/response-cache.ts), over real
 * sockets: the raw URL and the encoding @fastify/compress chooses (br, gzip or identity),
 * never a request header as it was spelled (issue 29, F4 and F5). A replay never reaches
 * Fastify; a hook added here counts what does.
 */
import { request as httpRequest } from 'node:http';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { testConfig } from '../../src/config/index.js';
import { REPLAY_BYTES, REPLAY_URL_MAX } from '../../src/plugins/response-cache.js';
import { type FixtureUpstreams, startFixtureUpstreams } from '../e2e/fixture-app.js';
import { getTestPki } from '../fakes/test-ca.js';
import { capturingLogger } from '../helper.js';

interface Answer {
  status: number;
  encoding: string | undefined;
  cache: string | undefined;
  /** The body as sent. */
  raw: Buffer;
  /** The body decoded. */
  text: string;
}

function get(base: string, path: string, headers: Record<string, string> = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${base}${path}`, { headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const raw = Buffer.concat(chunks);
        const encoding = res.headers['content-encoding'];
        const decoded =
          encoding === 'br' ? brotliDecompressSync(raw) : encoding === 'gzip' ? gunzipSync(raw) : raw;
        resolve({
          status: res.statusCode ?? 0,
          encoding,
          cache: res.headers['x-service-cache'] as string | undefined,
          raw,
          text: decoded.toString(),
        });
      });
    });
    req.on('error', reject);
    req.end();
  });
}

interface Harness {
  app: FastifyInstance;
  url: string;
  /** Requests Fastify answered. */
  reached(): number;
}

let fx: FixtureUpstreams;
const open: FastifyInstance[] = [];

async function start(): Promise<Harness> {
  const app = await buildApp(
    testConfig({
      ...fx.config,
      rateLimitGeneral: { points: 100_000, seconds: 60 },
      rateLimitExpensive: { points: 100_000, seconds: 60 },
    }),
    { ca: (await getTestPki()).caPem, logger: capturingLogger().logger },
  );
  let reached = 0;
  app.addHook('onResponse', (_request, _reply, done) => {
    reached++;
    done();
  });
  open.push(app);
  const url = await app.listen({ host: '127.0.0.1', port: 0 });
  return { app, url, reached: () => reached };
}

beforeAll(async () => {
  fx = await startFixtureUpstreams();
}, 60_000);

afterAll(async () => {
  for (const app of open) await app.close();
  await fx.close();
});

// A cached answer larger than the compression threshold: it is sent compressed when accepted.
const PATH = '/api/certificates?domain=example.com';

describe('F4: X-No-Compression', () => {
  it('F4: one request with X-No-Compression does not pin an uncompressed replay for the others', async () => {
    const h = await start();
    const plain = await get(h.url, PATH);
    expect(plain.cache).toBe('MISS');
    // A hit through Fastify, uncompressed as asked, though it accepts br.
    const asked = await get(h.url, PATH, { 'accept-encoding': 'br', 'x-no-compression': '1' });
    expect(asked.cache).toBe('HIT');
    expect(asked.encoding).toBeUndefined();
    // The next client that accepts br gets br, not the replay of that uncompressed answer.
    const br = await get(h.url, PATH, { 'accept-encoding': 'br' });
    expect(br.status).toBe(200);
    expect(br.encoding).toBe('br');
    expect(JSON.parse(br.text)).toEqual(JSON.parse(plain.text));
    // Once kept, the br replay answers br, and X-No-Compression still gets the body as it is.
    const before = h.reached();
    expect((await get(h.url, PATH, { 'accept-encoding': 'br' })).encoding).toBe('br');
    const again = await get(h.url, PATH, { 'accept-encoding': 'br', 'x-no-compression': '1' });
    expect(h.reached()).toBe(before);
    expect(again.encoding).toBeUndefined();
    expect(again.text).toBe(plain.text);
  });
});

describe('F5: what a replay is keyed on', () => {
  // Spellings by the encoding @fastify/compress chooses for them.
  const spellings: Record<string, string[]> = {
    br: ['gzip, deflate, br', 'br, gzip', 'br;q=1, gzip;q=0.5', 'BR', 'x-gzip;q=0.2, br', 'br;q=0.9, zstd'],
    gzip: ['gzip', 'gzip;q=1, br;q=0.5', 'x-gzip', '*', 'deflate, gzip'],
    identity: ['', 'identity', 'deflate', 'br;q=0, gzip;q=0', 'zstd'],
  };

  it('F5: Accept-Encoding spellings that choose one encoding share one replay', async () => {
    const h = await start();
    const plain = await get(h.url, PATH);
    expect(plain.cache).toBe('MISS');
    for (const [encoding, list] of Object.entries(spellings)) {
      for (const [i, spelling] of list.entries()) {
        const headers: Record<string, string> = spelling === '' ? {} : { 'accept-encoding': spelling };
        const before = h.reached();
        const answer = await get(h.url, PATH, headers);
        expect(answer.status, spelling).toBe(200);
        expect(answer.encoding ?? 'identity', spelling).toBe(encoding);
        expect(JSON.parse(answer.text)).toEqual(JSON.parse(plain.text));
        // The first spelling of an encoding is a hit through Fastify, kept; the others are its replay.
        expect(h.reached(), spelling).toBe(i === 0 ? before + 1 : before);
        // Fastify itself sends this spelling the same encoding: the key foresaw it right.
        const direct = await h.app.inject({ url: PATH, headers });
        expect(direct.headers['content-encoding'] ?? 'identity', spelling).toBe(encoding);
      }
    }
    expect(h.app.replays.holdings().entries).toBe(3);
  });

  it('F5: a long Accept-Encoding value is not kept in the key: the store holds one replay per encoding', async () => {
    const h = await start();
    await get(h.url, PATH);
    await get(h.url, PATH, { 'accept-encoding': 'br' });
    const before = h.reached();
    for (let i = 0; i < 50; i++) {
      const answer = await get(h.url, PATH, { 'accept-encoding': `x-${i}-${'a'.repeat(8_000)}, br` });
      expect(answer.encoding).toBe('br');
    }
    expect(h.reached()).toBe(before);
    const held = h.app.replays.holdings();
    expect(held.entries).toBe(1);
    expect(held.bytes).toBeLessThan(64 * 1024);
  });

  it('F5: a URL longer than REPLAY_URL_MAX is answered by Fastify from the cache, not kept', async () => {
    const h = await start();
    await get(h.url, PATH);
    const long = `${PATH}&pad=${'p'.repeat(REPLAY_URL_MAX)}`;
    for (let i = 0; i < 3; i++) {
      const before = h.reached();
      const answer = await get(h.url, long);
      expect(answer.cache).toBe('HIT');
      expect(h.reached()).toBe(before + 1);
    }
    expect(h.app.replays.holdings().entries).toBe(0);
    // Just under it, the spelling is kept, and its key counts in the bound.
    const under = `${PATH}&pad=${'p'.repeat(REPLAY_URL_MAX - PATH.length - 5)}`;
    expect(under.length).toBe(REPLAY_URL_MAX);
    await get(h.url, under);
    const held = h.app.replays.holdings();
    expect(held).toMatchObject({ entries: 1, maxBytes: REPLAY_BYTES });
    expect(held.bytes).toBeGreaterThan(REPLAY_URL_MAX + plainLength(await get(h.url, PATH)));
  });
});

const plainLength = (a: Answer) => Buffer.byteLength(a.text);
