/**
 * Compressed answers from Globalping. Its client guidelines ask for
 * `Accept-Encoding: br` (preferred) or `gzip` (jsdelivr/globalping public/v1/spec.yaml,
 * "General guidelines for non-browser-based apps"): a measurement is stored
 * Brotli-compressed and served as stored to a client that accepts br
 * (src/lib/http/middleware/compressed.ts), other bodies go through koa-compress.
 * undici's request(), under HttpClient, hands the body over as it came, still
 * encoded (only undici's fetch decodes), so it is decoded here, with a cap on the
 * decoded size: the transfer cap alone would let a small body expand without bound.
 */
import { promisify } from 'node:util';
import { brotliDecompress, gunzip, type ZlibOptions } from 'node:zlib';
import type { HttpResponse } from '../http-client.js';
import { ProviderError } from '../types.js';

/** What the adapter sends: both codings Globalping offers, Brotli first as it prefers. */
export const ACCEPT_ENCODING = 'br, gzip';

/** Far above a ten-probe measurement (tens of KB), as the transfer cap is. */
export const MAX_DECODED_BYTES = 5 * 1024 * 1024;

const decoders: Record<string, (body: Buffer, opts: ZlibOptions) => Promise<Buffer>> = {
  br: promisify(brotliDecompress),
  gzip: promisify(gunzip),
  'x-gzip': promisify(gunzip),
};

/** The body of `res` with its Content-Encoding undone; a body it cannot decode is a bad_response. */
export async function decodedBody(res: HttpResponse, maxBytes = MAX_DECODED_BYTES): Promise<Buffer> {
  const header = res.headers['content-encoding'];
  const codings = (Array.isArray(header) ? header.join(',') : (header ?? ''))
    .split(',')
    .map((c) => c.trim().toLowerCase())
    .filter((c) => c !== '' && c !== 'identity');
  if (codings.length === 0 || res.body.length === 0) return res.body;
  let body = res.body;
  // Codings are listed in the order they were applied: undo the last one first.
  for (const coding of codings.reverse()) {
    const decode = decoders[coding];
    if (decode === undefined) {
      throw new ProviderError('bad_response', `Globalping answered in an encoding not asked for (${coding})`);
    }
    try {
      body = await decode(body, { maxOutputLength: maxBytes });
    } catch (err) {
      const tooLarge = (err as { code?: unknown }).code === 'ERR_BUFFER_TOO_LARGE';
      throw new ProviderError(
        'bad_response',
        tooLarge
          ? `Globalping's ${coding} body decodes to more than ${maxBytes} bytes`
          : `Globalping's ${coding} body could not be decoded`,
        { cause: err },
      );
    }
  }
  return body;
}
