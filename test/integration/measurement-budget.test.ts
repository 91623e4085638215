/**
 * Issue 31 §3: a cached answer is not a live measurement. It costs a point of the general
 * budget only; a request that finds nothing cached and measures costs an expensive point
 * too, taken before it measures (cache/cached.ts measurementPayer, plugins/rate-limit.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { testConfig } from '../../src/config/index.js';
import { type FixtureUpstreams, startFixtureUpstreams } from '../e2e/fixture-app.js';
import { getTestPki } from '../fakes/test-ca.js';
import { capturingLogger } from '../helper.js';

let fx: FixtureUpstreams;
beforeAll(async () => {
  fx = await startFixtureUpstreams();
}, 60_000);
afterAll(async () => {
  await fx.close();
});

async function app() {
  const built = await buildApp(
    testConfig({
      ...fx.config,
      loadShedEventLoopDelayMs: 0,
      rateLimitGeneral: { points: 30, seconds: 60 },
      rateLimitExpensive: { points: 6, seconds: 60 },
    }),
    { ca: (await getTestPki()).caPem, logger: capturingLogger().logger },
  );
  await built.ready();
  return built;
}

describe('the expensive budget', () => {
  it('is not spent by cached answers: ten asks for one email answer pass, the seventh distinct measurement is refused', async () => {
    const a = await app();
    try {
      const ask = (domain: string) =>
        a.inject({ url: `/api/email-security?domain=${domain}`, remoteAddress: '198.51.100.20' });
      const same = [];
      for (let i = 0; i < 10; i++) same.push(await ask('example.test'));
      expect(same.map((r) => r.statusCode)).toEqual(Array(10).fill(200));
      expect(same.map((r) => r.headers['x-service-cache'])).toEqual(['MISS', ...Array(9).fill('HIT')]);
      // The measurement took the expensive point; every cached answer a general one alone.
      expect(same[0]?.headers.ratelimit).toBe('"general";r=29;t=60, "expensive";r=5;t=60');
      expect(same[9]?.headers.ratelimit).toBe('"general";r=20;t=60');
      expect(same[9]?.headers['ratelimit-policy']).toBe('"general";q=30;w=60, "expensive";q=6;w=60');

      for (let i = 2; i <= 6; i++) {
        const res = await ask(`m${i}.example.test`);
        expect(res.statusCode, res.body).toBe(200);
        expect(res.headers.ratelimit).toContain(`"expensive";r=${6 - i};`);
      }
      const seventh = await ask('m7.example.test');
      expect(seventh.statusCode).toBe(429);
      expect(seventh.json()).toMatchObject({ code: 'rate_limited' });
      // What the budget counts, from the limiter's own list of expensive routes (the site shows this text).
      expect(seventh.json().error).toMatch(
        /^rate limit exceeded \(expensive: 6 live measurements per 60 s, by blocklists, dnssec, email-security, global-dns, inspect, mail-tls, message, subdomains, tls, tls-scan\); retry after \d+ s$/,
      );
      expect(seventh.headers['retry-after']).toMatch(/^\d+$/);
      // Refused before anything was measured: nothing of it is cached, and a cached answer still passes.
      expect((await ask('example.test')).statusCode).toBe(200);
    } finally {
      await a.close();
    }
  });
});
