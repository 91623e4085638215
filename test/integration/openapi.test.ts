import SwaggerParser from '@apidevtools/swagger-parser';
import { describe, expect, it, vi } from 'vitest';
import { buildTestApp } from '../helper.js';

describe('/openapi.json', () => {
  it('is OpenAPI 3.1.0, contract version 2.1.0, valid per a real validator', async () => {
    const app = await buildTestApp();
    const res = await app.inject('/openapi.json');
    expect(res.statusCode).toBe(200);
    const doc = res.json();
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info.version).toBe('2.1.0');
    // validate() dereferences in place; hand it a copy.
    await expect(SwaggerParser.validate(structuredClone(doc))).resolves.toBeTruthy();
  });

  it('lists every route the app serves, with no version segment in any path', async () => {
    const app = await buildTestApp();
    const doc = (await app.inject('/openapi.json')).json() as {
      paths: Record<string, Record<string, unknown>>;
    };
    const served = app.routeTable.filter((r) => r.documented);
    expect(served.length).toBeGreaterThanOrEqual(5);
    for (const route of served) {
      expect(doc.paths[route.url], `${route.method} ${route.url}`).toBeDefined();
      expect(
        doc.paths[route.url]?.[route.method.toLowerCase()],
        `${route.method} ${route.url}`,
      ).toBeDefined();
    }
    // Only the interactive docs' own asset routes and the site (its page and hashed assets) are left out.
    for (const route of app.routeTable.filter((r) => !r.documented)) {
      expect(route.url).toMatch(/^\/docs|^\/$|^\/assets\//);
    }
    for (const path of Object.keys(doc.paths)) expect(path).not.toMatch(/\/v\d+(\/|$)/);
  });

  it('documents error responses as JSON {error}', async () => {
    const app = await buildTestApp();
    const doc = (await app.inject('/openapi.json')).json();
    const ready = doc.paths['/readyz'].get.responses['503'];
    expect(ready.content['application/json'].schema.required).toContain('error');
  });

  it('is made once and compressed once per encoding, not per request (220 KB: 7 ms each time)', async () => {
    const app = await buildTestApp();
    const swagger = vi.spyOn(app, 'swagger');
    for (const encoding of ['br', 'gzip', 'identity', 'br', 'gzip', 'identity']) {
      const res = await app.inject({ url: '/openapi.json', headers: { 'accept-encoding': encoding } });
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(res.headers['content-encoding']).toBe(encoding === 'identity' ? undefined : encoding);
      expect(res.headers.vary).toMatch(/accept-encoding/i);
    }
    expect(swagger).toHaveBeenCalledTimes(1);
  });
});
