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

import { constants as zlib } from 'node:zlib';
import compress from '@fastify/compress';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';

export const COMPRESSION_THRESHOLD = 1024;

async function compressionPlugin(app: FastifyInstance): Promise<void> {
  await app.register(compress, {
    global: true,
    globalDecompression: false,
    encodings: ['br', 'gzip'],
    threshold: COMPRESSION_THRESHOLD,
    syncThreshold: 1024 * 1024,
    brotliOptions: {
      params: {
        [zlib.BROTLI_PARAM_MODE]: zlib.BROTLI_MODE_TEXT,
        [zlib.BROTLI_PARAM_QUALITY]: 4,
        [zlib.BROTLI_PARAM_LGWIN]: 18,
      },
    },
  });
}

export default fp(compressionPlugin, { name: 'compression' });
