/**
 * `responseEncoding` (plugins/compression.ts) is what a replay is keyed on: for any
 * request headers it must name the encoding @fastify/compress then sends, or a replay
 * would serve one encoding to a client that gets another from Fastify (issue 29 F5).
 * Checked against the plugin itself, registered as the app registers it.
 */
import fc from 'fast-check';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import compression, { COMPRESSION_THRESHOLD, responseEncoding } from '../../../src/plugins/compression.js';

let app: FastifyInstance;
beforeAll(async () => {
  app = Fastify();
  await app.register(compression);
  app.get('/json', async () => ({ text: 'x'.repeat(2 * COMPRESSION_THRESHOLD) }));
  await app.ready();
});
afterAll(() => app.close());

async function sent(headers: Record<string, string>): Promise<string> {
  const res = await app.inject({ url: '/json', headers });
  return (res.headers['content-encoding'] as string | undefined) ?? 'identity';
}

describe('responseEncoding', () => {
  it.each([
    [{}, 'identity'],
    [{ 'accept-encoding': 'br' }, 'br'],
    [{ 'accept-encoding': 'gzip, deflate, br' }, 'br'],
    [{ 'accept-encoding': 'gzip;q=1, br;q=0.5' }, 'gzip'],
    [{ 'accept-encoding': '*' }, 'gzip'],
    [{ 'accept-encoding': 'X-GZIP' }, 'gzip'],
    [{ 'accept-encoding': 'identity' }, 'identity'],
    [{ 'accept-encoding': 'br;q=0, gzip;q=0' }, 'identity'],
    [{ 'accept-encoding': 'br', 'x-no-compression': '' }, 'identity'],
  ])('%j → %s, as @fastify/compress sends', async (headers, expected) => {
    expect(responseEncoding(headers)).toBe(expected);
    expect(await sent(headers)).toBe(expected);
  });

  it('names what @fastify/compress sends, for any Accept-Encoding', async () => {
    const token = fc.constantFrom(
      'br',
      'BR',
      'gzip',
      'Gzip',
      'x-gzip',
      'deflate',
      'identity',
      'zstd',
      '*',
      'foo',
      '',
    );
    const quality = fc.option(
      fc.constantFrom('q=0', 'q=1', 'q=0.5', 'q=0.001', 'q=1.0', 'Q=0.3', 'q=', 'q=abc', 'q=0.50'),
      { nil: undefined },
    );
    const member = fc
      .tuple(token, quality, fc.constantFrom('', ' ', '\t'))
      .map(([t, q, space]) => (q === undefined ? `${space}${t}` : `${space}${t};${space}${q}`));
    const header = fc.array(member, { minLength: 1, maxLength: 5 }).map((m) => m.join(','));
    await fc.assert(
      fc.asyncProperty(header, fc.boolean(), async (accept, noCompression) => {
        const headers: Record<string, string> = { 'accept-encoding': accept };
        if (noCompression) headers['x-no-compression'] = '1';
        expect(responseEncoding(headers), accept).toBe(await sent(headers));
      }),
      { numRuns: 400 },
    );
  });
});
