/**
 * Response compression (@fastify/compress): brotli or gzip, as the client's
 * Accept-Encoding prefers, for text bodies of 1 KB and more (JSON answers, the
 * /docs assets), with `Vary: Accept-Encoding`. The site's own assets are
 * compressed once at build time and served as they are (site.route.ts,
 * `preCompressed`); the plugin leaves a body that already has a Content-Encoding
 * alone.
 *
 * Brotli at quality 4: per request, the quality where brotli still beats gzip's
 * default on size at a similar CPU cost (quality 11 is for build time only), with
 * a 256 KiB window (the default 4 MiB makes every encoder allocate megabytes, more
 * than any answer here needs).
 *
 * Answers up to 1 MiB are compressed in one call on the main thread (≈1 ms for
 * 200 KB) rather than through a zlib stream on libuv's thread pool: each pool
 * thread allocates from its own malloc arena, and a process compressing on four
 * of them grew 40–50 MB more RSS (fragmentation) than one compressing on one.
 * Request bodies are never decompressed: the API takes small JSON bodies only, and
 * a compressed one would be a way around the body limit's intent.
 */

import type { IncomingHttpHeaders } from 'node:http';
import { createRequire } from 'node:module';
import { brotliCompressSync, gzipSync, constants as zlib } from 'node:zlib';
import compress from '@fastify/compress';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';

export const COMPRESSION_THRESHOLD = 1024;

/** The encodings served, in the order preferred when the client ranks them equally. */
const ENCODINGS = ['br', 'gzip'] as const;

export type ResponseEncoding = (typeof ENCODINGS)[number] | 'identity';

/**
 * The Accept-Encoding negotiator @fastify/compress itself loads (resolved from its own
 * directory, not ours): `responseEncoding` then answers what the plugin will do by
 * construction, not by a copy of its rules that could drift when it is upgraded.
 */
const negotiate = (
  createRequire(createRequire(import.meta.url).resolve('@fastify/compress'))(
    '@fastify/accept-negotiator',
  ) as { negotiate(header: string, supported: readonly string[]): string | null }
).negotiate;

/**
 * The Content-Encoding @fastify/compress gives a compressible body of at least
 * COMPRESSION_THRESHOLD bytes for a request with these headers: what its onSend hook
 * decides from them (index.js, `onSend` and `getEncodingHeader`). X-No-Compression, in
 * any form, means none; otherwise Accept-Encoding lower-cased, `*` and `x-gzip` read as
 * gzip, negotiated against ENCODINGS; no header, or nothing acceptable, means none.
 * Whatever the header's spelling or length, the answer is one of three values: what a
 * cached answer's replay is keyed on (plugins/response-cache.ts).
 */
export function responseEncoding(headers: IncomingHttpHeaders): ResponseEncoding {
  if (headers['x-no-compression'] !== undefined) return 'identity';
  const accept = headers['accept-encoding'];
  if (accept === undefined) return 'identity';
  const chosen = negotiate(accept.toLowerCase().replace(/\*|x-gzip/g, 'gzip'), ENCODINGS);
  return chosen === 'br' || chosen === 'gzip' ? chosen : 'identity';
}

const BROTLI_OPTIONS = {
  params: {
    [zlib.BROTLI_PARAM_MODE]: zlib.BROTLI_MODE_TEXT,
    [zlib.BROTLI_PARAM_QUALITY]: 4,
    [zlib.BROTLI_PARAM_LGWIN]: 18,
  },
};

/**
 * A JSON body that is the same for the life of the process (/openapi.json: 220 KB, which
 * cost 7 ms of serializing and compressing, and a quarter of a megabyte of garbage, on every
 * request): made on first use and compressed at most once per encoding, as the plugin
 * would have. The route sends what this returns; a body with a Content-Encoding is left
 * alone by the plugin.
 */
export function fixedJsonBody(make: () => unknown): (request: FastifyRequest, reply: FastifyReply) => Buffer {
  const bodies = new Map<ResponseEncoding, Buffer>();
  return (request, reply) => {
    const encoding = responseEncoding(request.headers);
    let body = bodies.get(encoding);
    if (body === undefined) {
      const json = bodies.get('identity') ?? Buffer.from(JSON.stringify(make()));
      bodies.set('identity', json);
      body =
        encoding === 'br'
          ? brotliCompressSync(json, BROTLI_OPTIONS)
          : encoding === 'gzip'
            ? gzipSync(json)
            : json;
      bodies.set(encoding, body);
    }
    reply.type('application/json; charset=utf-8').header('vary', 'accept-encoding');
    if (encoding !== 'identity') reply.header('content-encoding', encoding);
    return body;
  };
}

async function compressionPlugin(app: FastifyInstance): Promise<void> {
  await app.register(compress, {
    global: true,
    globalDecompression: false,
    encodings: [...ENCODINGS],
    threshold: COMPRESSION_THRESHOLD,
    syncThreshold: 1024 * 1024,
    brotliOptions: BROTLI_OPTIONS,
  });
}

export default fp(compressionPlugin, { name: 'compression' });
