/**
 * Acceptance: the openspf RFC 7208 test suite, the suite pyspf and Mail::SPF
 * run, through GET /api/spf. Each scenario's zone data is served by the fake
 * DNS server (over UDP, the service's real resolver client in front of it;
 * TIMEOUT = the query is never answered), each test asks the API with its
 * host, mailfrom and helo, and expects its result (or one of its results)
 * and, where given, its explanation. "DEFAULT" is the suite's name for the
 * receiver's own explanation, used when no exp= text applies: the API then
 * returns no `explanation`. The suite is read from ../shared/suites/; without
 * it this file is skipped.
 */
import type { FastifyInstance } from 'fastify';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { testConfig } from '../../src/config/index.js';
import { type FakeDnsServer, startFakeDnsServer } from '../fakes/dns-server.js';
import { loadSuite } from '../fixtures/spf/suite.js';
import { hasShared } from '../shared-data.js';

const scenarios = hasShared ? loadSuite() : [];

/** A TIMEOUT costs one provider timeout: long enough that no answered query ever runs into it on a loaded machine. */
const DNS_TIMEOUT_MS = 2_000;

it.skipIf(!hasShared)('runs the whole suite: 16 scenarios, 203 tests', () => {
  expect(scenarios).toHaveLength(16);
  expect(scenarios.flatMap((s) => s.tests)).toHaveLength(203);
});

describe.each(scenarios.map((s) => [s.description, s] as const))('%s', (_description, scenario) => {
  let dns: FakeDnsServer;
  let app: FastifyInstance;

  beforeAll(async () => {
    dns = await startFakeDnsServer({ zones: [scenario.zone] });
    // One app per scenario, shared by its tests: a fresh cache, since scenarios reuse names.
    app = await buildApp(
      testConfig({
        dnsResolvers: [dns.udp],
        providerTimeoutMs: DNS_TIMEOUT_MS,
        rateLimitGeneral: { points: 10_000, seconds: 60 },
        loadShedEventLoopDelayMs: 0,
      }),
      { logger: pino({ level: 'silent' }) },
    );
    await app.ready();
  });

  afterAll(async () => {
    await app?.close();
    await dns?.close();
  });

  it.concurrent.each(scenario.tests.map((t) => [t.name, t] as const))('%s', async (_name, t) => {
    const res = await app.inject({
      url: '/api/spf',
      query: { ip: t.host, sender: t.mailfrom, helo: t.helo },
    });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    const expected = Array.isArray(t.result) ? t.result : [t.result];
    const context = `${t.spec}: ${t.description ?? ''}\n${JSON.stringify(body.trace, null, 1)}`;
    expect(expected, context).toContain(body.result);
    if (t.explanation !== undefined) {
      expect(body.explanation, context).toBe(t.explanation === 'DEFAULT' ? undefined : t.explanation);
    }
  });
});
