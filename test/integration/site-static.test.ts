/**
 * The site as the server delivers it: the built page and its hashed assets
 * (dist/web, from scripts/build-web.ts), their cache and security headers, the
 * size budget, and that the page's tools cover the API contract.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { beforeAll, describe, expect, it } from 'vitest';
import { SITE_DIR, siteCsp } from '../../src/features/site/site.route.js';
import { PAGE_ENDPOINTS, TOOL_ENDPOINTS } from '../../src/web/endpoints.js';
import { parseTarget } from '../../src/web/target.js';
import { buildTestApp } from '../helper.js';

const WIDGET = 'https://challenges.example.net/turnstile/v0/api.js';
const ACTIVE = {
  turnstileSiteKey: 'site-key',
  turnstileSecretKey: 'secret-key',
  turnstileScriptUrl: WIDGET,
};
/** Issue 11: "total JS under ~60 KB gzipped". */
const JS_BUDGET_GZIP = 60 * 1024;

let html: string;
let assets: string[];

// dist/web is built by the suite's global setup (test/global-setup.ts).
beforeAll(() => {
  html = readFileSync(join(SITE_DIR, 'index.html'), 'utf8');
  assets = [...html.matchAll(/(?:src|href)="\/assets\/([^"]+)"/g)].map((m) => m[1] ?? '');
});

function directives(csp: string | undefined): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const part of (csp ?? '').split(';')) {
    const [name, ...values] = part.trim().split(/\s+/);
    if (name) out[name] = values;
  }
  return out;
}

describe('GET /', () => {
  it('serves the page: always revalidated, strict CSP, no framing, no caching by intermediaries of stale HTML', async () => {
    const app = await buildTestApp();
    const res = await app.inject('/');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.headers['cache-control']).toBe('no-cache');
    expect(res.headers.etag).toBeTruthy();
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['x-frame-options']).toBe('DENY');
    expect(res.headers['referrer-policy']).toBe('no-referrer');
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
    const csp = directives(res.headers['content-security-policy'] as string);
    expect(csp).toMatchObject({
      'default-src': ["'none'"],
      'script-src': ["'self'"],
      'style-src': ["'self'"],
      'connect-src': ["'self'"],
      'frame-src': ["'none'"],
      'frame-ancestors': ["'none'"],
      'base-uri': ["'none'"],
    });
    expect(res.headers['content-security-policy']).not.toMatch(/unsafe-(inline|eval)/);
    expect(res.body).toBe(html);
  });

  it('a revalidation (If-None-Match) answers 304 and keeps no-cache rather than the global no-store', async () => {
    const app = await buildTestApp();
    const first = await app.inject('/');
    const again = await app.inject({ url: '/', headers: { 'if-none-match': String(first.headers.etag) } });
    expect(again.statusCode).toBe(304);
    expect(again.headers['cache-control']).toBe('no-cache');
  });

  it('with challenge protection on, allows the widget origin for script and frame only, and sends the origin as referrer', async () => {
    const app = await buildTestApp({ config: ACTIVE });
    const res = await app.inject('/');
    expect(res.statusCode).toBe(200);
    const csp = directives(res.headers['content-security-policy'] as string);
    expect(csp['script-src']).toEqual(["'self'", 'https://challenges.example.net']);
    expect(csp['frame-src']).toEqual(['https://challenges.example.net']);
    expect(csp['connect-src']).toEqual(["'self'"]);
    expect(res.headers['referrer-policy']).toBe('strict-origin');
  });

  it('is never gated, rate-limited or listed in /openapi.json', async () => {
    const app = await buildTestApp({ config: { ...ACTIVE, rateLimitGeneral: { points: 1, seconds: 60 } } });
    for (let i = 0; i < 3; i++) expect((await app.inject('/')).statusCode).toBe(200);
    for (const name of assets) expect((await app.inject(`/assets/${name}`)).statusCode).toBe(200);
    const doc = (await app.inject('/openapi.json')).json() as { paths: Record<string, unknown> };
    expect(Object.keys(doc.paths).filter((p) => p === '/' || p.startsWith('/assets'))).toEqual([]);
    expect(siteCsp(app.ctx.config)).toContain('https://challenges.example.net');
  });
});

describe('GET /assets/*', () => {
  it('serves every asset the page names, with hashed names and a year of immutable caching', async () => {
    const app = await buildTestApp();
    expect(assets.map((a) => a.replace(/-[A-Za-z0-9]{8,}\./, '-HASH.')).sort()).toEqual([
      'app-HASH.css',
      'app-HASH.js',
      'icon-HASH.svg',
    ]);
    for (const name of assets) {
      const res = await app.inject(`/assets/${name}`);
      expect(res.statusCode, name).toBe(200);
      expect(res.headers['cache-control'], name).toBe('public, max-age=31536000, immutable');
      const type = { js: /javascript/, css: /text\/css/, svg: /image\/svg\+xml/ }[
        name.split('.').pop() ?? ''
      ];
      expect(res.headers['content-type'], name).toMatch(type ?? /^$/);
      const again = await app.inject({
        url: `/assets/${name}`,
        headers: { 'if-none-match': String(res.headers.etag) },
      });
      expect(again.statusCode).toBe(304);
      expect(again.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    }
  });

  it('an unknown asset is a JSON 404, not cached', async () => {
    const app = await buildTestApp();
    const res = await app.inject('/assets/nope-12345678.js');
    expect(res.statusCode).toBe(404);
    expect(res.json()).toHaveProperty('error');
    expect(res.headers['cache-control']).toBe('no-store');
  });
});

describe('the build output', () => {
  it(`keeps the JavaScript under ${JS_BUDGET_GZIP / 1024} KB gzipped`, () => {
    const js = readdirSync(join(SITE_DIR, 'assets')).filter((f) => f.endsWith('.js') && assets.includes(f));
    expect(js.length).toBeGreaterThan(0);
    const total = js.reduce((sum, f) => sum + gzipSync(readFileSync(join(SITE_DIR, 'assets', f))).length, 0);
    console.info(`site JS: ${(total / 1024).toFixed(1)} KB gzipped`);
    expect(total).toBeLessThan(JS_BUDGET_GZIP);
  });

  it('has no inline script or style, and loads nothing from another origin (no CDN, no web fonts)', () => {
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect(html).not.toMatch(/<style|\sstyle=|\son[a-z]+=/i);
    const css = assets
      .filter((a) => a.endsWith('.css'))
      .map((a) => readFileSync(join(SITE_DIR, 'assets', a), 'utf8'));
    for (const text of [html, ...css]) {
      expect(text).not.toMatch(/(?:src|href)="(?:https?:)?\/\//);
      expect(text).not.toMatch(/url\(\s*['"]?(?:https?:)?\/\//);
      expect(text).not.toMatch(/@import|@font-face/);
    }
  });
});

describe('the site and the contract', () => {
  it('has a tool for every diagnostic endpoint and calls nothing the contract lacks', async () => {
    const app = await buildTestApp();
    const doc = (await app.inject('/openapi.json')).json() as {
      paths: Record<string, Record<string, unknown>>;
    };
    const contract = Object.entries(doc.paths)
      .filter(([path]) => path.startsWith('/api/'))
      .flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`));
    const used = [...Object.values(TOOL_ENDPOINTS).flat(), ...PAGE_ENDPOINTS];
    expect([...new Set(used)].sort()).toEqual([...new Set(contract)].sort());
  });
});

describe('reading the input box', () => {
  it.each([
    ['example.com', { host: 'example.com', kind: 'domain' }],
    ['  Example.COM. ', { host: 'example.com.', kind: 'domain' }],
    [
      'https://www.example.com:8443/path?q=1#x',
      { host: 'www.example.com', kind: 'domain', derivedFrom: 'url' },
    ],
    ['example.com/some/page', { host: 'example.com', kind: 'domain', derivedFrom: 'host-and-path' }],
    ['example.com:443', { host: 'example.com', kind: 'domain', derivedFrom: 'host-and-port' }],
    ['postmaster@example.org', { host: 'example.org', kind: 'domain', derivedFrom: 'email' }],
    ['193.0.6.139', { host: '193.0.6.139', kind: 'ip' }],
    ['2001:DB8::1', { host: '2001:db8::1', kind: 'ip' }],
    ['[2001:db8::1]:443', { host: '2001:db8::1', kind: 'ip', derivedFrom: 'host-and-port' }],
    ['http://[2001:db8::1]/', { host: '2001:db8::1', kind: 'ip', derivedFrom: 'url' }],
    ['::ffff:192.0.2.1', { host: '::ffff:192.0.2.1', kind: 'ip' }],
    ['256.1.1.1', { host: '256.1.1.1', kind: 'domain' }],
    ['bücher.example', { host: 'bücher.example', kind: 'domain' }],
  ])('%s', (input, expected) => {
    expect(parseTarget(input)).toEqual(expected);
  });

  it('empty input is no target', () => {
    expect(parseTarget('   ')).toBeNull();
  });
});
