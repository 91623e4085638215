/**
 * The request checks (plugins/request-checks.ts) are one list, and both paths a request
 * can take run all of it, in its order: Fastify's hook for a miss and a first hit, the
 * replay of a cached answer for the hits after. The list is read from the module itself,
 * so a check added there is held to this without touching the test.
 */
import { request as httpRequest, type IncomingMessage } from 'node:http';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { testConfig } from '../../src/config/index.js';
import { requestChecks } from '../../src/plugins/request-checks.js';
import { type FixtureUpstreams, startFixtureUpstreams } from '../e2e/fixture-app.js';
import { getTestPki } from '../fakes/test-ca.js';
import { capturingLogger } from '../helper.js';

let fx: FixtureUpstreams;
let app: FastifyInstance;
let base: string;
const ran = new Map<IncomingMessage, string[]>();
let reachedFastify = 0;

/** The names of the checks as the module declares them, in order (no dependency is called). */
const declared = requestChecks({} as Parameters<typeof requestChecks>[0]).map((check) => check.name);

beforeAll(async () => {
  fx = await startFixtureUpstreams();
  app = await buildApp(testConfig(fx.config), {
    ca: (await getTestPki()).caPem,
    logger: capturingLogger().logger,
    observeCheck: (name, raw) => ran.set(raw, [...(ran.get(raw) ?? []), name]),
  });
  app.addHook('onResponse', (_request, _reply, done) => {
    reachedFastify++;
    done();
  });
  base = await app.listen({ host: '127.0.0.1', port: 0 });
}, 60_000);

afterAll(async () => {
  await app?.close();
  await fx?.close();
});

function get(path: string): Promise<{ status: number; cache: string | undefined }> {
  return new Promise((resolve, reject) => {
    httpRequest(`${base}${path}`, { agent: false }, (res) => {
      res.resume();
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, cache: res.headers['x-service-cache'] as string }),
      );
    })
      .on('error', reject)
      .end();
  });
}

describe('the request checks', () => {
  it('are declared in one list, in this order', () => {
    expect(declared).toEqual([
      'connection cap',
      'host header',
      'load shedding',
      'rate limit',
      'challenge gate',
    ]);
  });

  it('all run, in order, on both paths: Fastify (miss, first hit) and the replay (later hits)', async () => {
    const path = '/api/dns?target=example.test&type=A';
    const paths: string[] = [];
    for (let i = 0; i < 3; i++) {
      const before = reachedFastify;
      ran.clear();
      const res = await get(path);
      expect(res.status).toBe(200);
      paths.push(reachedFastify > before ? `fastify ${res.cache}` : `replay ${res.cache}`);
      // One request, each check once, in the declared order.
      expect([...ran.values()]).toEqual([declared]);
    }
    expect(paths).toEqual(['fastify MISS', 'fastify HIT', 'replay HIT']);
  });
});
