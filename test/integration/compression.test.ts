/**
 * Issue 16: responses compressed as the client accepts — JSON of 1 KB and more
 * per request, the site's assets as pre-compressed at build, /docs assets too.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { brotliDecompressSync, gunzipSync, gzipSync } from 'node:zlib';
import { beforeAll, describe, expect, it } from 'vitest';
import { SITE_DIR } from '../../src/features/site/site.route.js';
import { COMPRESSION_THRESHOLD } from '../../src/plugins/compression.js';
import { buildTestApp } from '../helper.js';
import { ProbeProvider, probeRoutes } from '../probe-routes.js';

type App = Awaited<ReturnType<typeof buildTestApp>>;

let assets: string[];
// dist/web is built by the suite's global setup (test/global-setup.ts).
beforeAll(() => {
  const html = readFileSync(join(SITE_DIR, 'index.html'), 'utf8');
  assets = [...html.matchAll(/(?:src|href)="\/assets\/([^"]+)"/g)].map((m) => m[1] ?? '');
});

function decode(encoding: string | undefined, body: Buffer): Buffer {
  if (encoding === 'br') return brotliDecompressSync(body);
  if (encoding === 'gzip') return gunzipSync(body);
  return body;
}

async function get(app: App, url: string, acceptEncoding?: string) {
  const res = await app.inject({
    url,
    headers: acceptEncoding === undefined ? {} : { 'accept-encoding': acceptEncoding },
  });
  return { res, body: decode(res.headers['content-encoding'] as string | undefined, res.rawPayload) };
}

describe('JSON answers', () => {
  it('are compressed with brotli or gzip as the client prefers, above the threshold, and vary by it', async () => {
    const app = await buildTestApp();
    const plain = await get(app, '/openapi.json');
    expect(plain.res.headers['content-encoding']).toBeUndefined();
    expect(plain.body.length).toBeGreaterThan(COMPRESSION_THRESHOLD);

    for (const [accept, expected] of [
      ['br', 'br'],
      ['gzip', 'gzip'],
      ['gzip, deflate, br', 'br'],
      ['gzip;q=1, br;q=0.5', 'gzip'],
    ] as const) {
      const { res, body } = await get(app, '/openapi.json', accept);
      expect(res.headers['content-encoding'], accept).toBe(expected);
      expect(res.headers.vary).toMatch(/accept-encoding/i);
      expect(res.rawPayload.length).toBeLessThan(plain.body.length / 3);
      expect(JSON.parse(body.toString())).toEqual(JSON.parse(plain.body.toString()));
    }
  });

  it('are sent as they are when small, or when the client accepts neither encoding', async () => {
    const app = await buildTestApp();
    const small = await get(app, '/healthz', 'br, gzip');
    expect(small.res.headers['content-encoding']).toBeUndefined();
    expect(small.res.json()).toEqual({ status: 'ok' });
    const identity = await get(app, '/openapi.json', 'identity');
    expect(identity.res.headers['content-encoding']).toBeUndefined();
  });

  it('keep their headers: cache policy, JSON type and CSP survive compression', async () => {
    const app = await buildTestApp({ extend: probeRoutes([new ProbeProvider('p')]) });
    const { res, body } = await get(app, `/api/probe/cached?q=${'x'.repeat(1500)}`, 'br');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-encoding']).toBe('br');
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.headers['cache-control']).toMatch(/^public, max-age=\d+$/);
    expect(res.headers['content-security-policy']).toBe("default-src 'none'; frame-ancestors 'none'");
    expect(JSON.parse(body.toString()).echo).toHaveLength(1500);
  });

  it('never decompress a request body: a gzip-encoded body is refused, not inflated', async () => {
    const app = await buildTestApp();
    const res = await app.inject({
      method: 'POST',
      url: '/api/challenge/verify',
      headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
      payload: gzipSync(JSON.stringify({ token: 'pass:x' })),
    });
    // Inflated, it would be a valid verify request; taken as it is, it is not JSON.
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toBe('body is not valid JSON');
  });
});

describe("the site's files", () => {
  it('are the bytes compressed at build time, not compressed again per request', async () => {
    const app = await buildTestApp();
    for (const name of assets) {
      for (const [accept, suffix] of [
        ['br', 'br'],
        ['gzip', 'gz'],
      ] as const) {
        const { res } = await get(app, `/assets/${name}`, accept);
        expect(res.statusCode, name).toBe(200);
        expect(res.headers['content-encoding'], name).toBe(accept);
        expect(res.headers['cache-control']).toBe('public, max-age=31536000, immutable');
        expect(res.rawPayload.equals(readFileSync(join(SITE_DIR, 'assets', `${name}.${suffix}`))), name).toBe(
          true,
        );
      }
      const plain = await get(app, `/assets/${name}`);
      expect(plain.res.headers['content-encoding']).toBeUndefined();
      expect(plain.body.equals(readFileSync(join(SITE_DIR, 'assets', name)))).toBe(true);
    }
  });

  it('include the page itself', async () => {
    const app = await buildTestApp();
    const { res, body } = await get(app, '/', 'br');
    expect(res.headers['content-encoding']).toBe('br');
    expect(res.headers['cache-control']).toBe('no-cache');
    expect(body.toString()).toBe(readFileSync(join(SITE_DIR, 'index.html'), 'utf8'));
  });
});

describe('/docs', () => {
  it('compresses the Swagger UI bundle', async () => {
    const app = await buildTestApp();
    const plain = await get(app, '/docs/static/swagger-ui-bundle.js');
    const { res, body } = await get(app, '/docs/static/swagger-ui-bundle.js', 'gzip');
    expect(res.headers['content-encoding']).toBe('gzip');
    expect(res.rawPayload.length).toBeLessThan(plain.body.length / 2);
    expect(body.equals(plain.body)).toBe(true);
  });
});
