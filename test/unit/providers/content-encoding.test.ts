/**
 * Undoing a compressed upstream answer (Globalping's): undici's request() leaves bodies as sent.
 */
import { brotliCompressSync, gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { ProviderError } from '../../../src/errors.js';
import { decodedBody, type HttpResponse } from '../../../src/providers/http-client.js';
import { rejectionOf } from '../../expect-error.js';

const JSON_TEXT = JSON.stringify({ id: 'x', status: 'finished', results: [] });

const response = (body: Buffer, encoding?: string | string[]): HttpResponse => ({
  status: 200,
  headers: encoding === undefined ? {} : { 'content-encoding': encoding },
  body,
  url: 'https://api.globalping.test/v1/measurements/x',
});

describe('decodedBody', () => {
  it('passes an unencoded (or identity) body through', async () => {
    const plain = Buffer.from(JSON_TEXT);
    expect(await decodedBody(response(plain))).toBe(plain);
    expect(await decodedBody(response(plain, 'identity'))).toBe(plain);
  });

  it('decodes br and gzip, and codings applied one after another', async () => {
    expect((await decodedBody(response(brotliCompressSync(JSON_TEXT), 'br'))).toString()).toBe(JSON_TEXT);
    expect((await decodedBody(response(gzipSync(JSON_TEXT), 'GZIP'))).toString()).toBe(JSON_TEXT);
    const twice = brotliCompressSync(gzipSync(JSON_TEXT));
    expect((await decodedBody(response(twice, 'gzip, br'))).toString()).toBe(JSON_TEXT);
  });

  it('an empty body (a 304) is left alone whatever the header says', async () => {
    expect((await decodedBody(response(Buffer.alloc(0), 'br'))).length).toBe(0);
  });

  it('a coding not asked for, a corrupt body and one decoding past the cap are bad_response', async () => {
    const cases: [HttpResponse, RegExp][] = [
      [response(Buffer.from('x'), 'zstd'), /encoding not asked for \(zstd\)/],
      [response(Buffer.from('not brotli at all'), 'br'), /br body could not be decoded/],
      [response(gzipSync(Buffer.alloc(1024 * 1024)), 'gzip'), /decodes to more than 65536 bytes/],
    ];
    for (const [res, message] of cases) {
      const err = await rejectionOf(decodedBody(res, 64 * 1024), ProviderError);
      expect(err.kind).toBe('bad_response');
      expect(err.message).toMatch(message);
    }
  });
});
