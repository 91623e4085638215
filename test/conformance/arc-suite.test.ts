/**
 * Acceptance: the ARC test suite (ValiMail/arc_test_suite, arc-draft-validation-tests.yml:
 * 10 scenarios, 175 tests) through POST /api/message, as the openspf suite runs through
 * /api/spf: each scenario's key records served by the fake DNS server, each message posted
 * raw, and its expected chain validation (`cv`) must come out as `arc.result`.
 *
 * Where the suite and RFC 8617 disagree the RFC wins:
 * - the three tests with an empty `cv` carry a seal that already says cv=fail: the chain is
 *   `fail` (RFC 8617 §5.2, step 2);
 * - `ams_fields_c_na` relies on an old draft's default canonicalization and
 *   `ams_fields_h_empty` on an empty h=, which RFC 6376 §3.5 forbids: either verdict stands;
 * - `cv_empty` is an empty message, which this API refuses (400) before any verdict.
 * Every signature is at t=12345 (1970): an old timestamp is not a failure.
 */
import type { FastifyInstance } from 'fastify';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { testConfig } from '../../src/config/index.js';
import { type FakeDnsServer, startFakeDnsServer } from '../fakes/dns-server.js';
import { loadArcSuite } from '../fixtures/arc/suite.js';
import { hasShared } from '../shared-data.js';

const scenarios = hasShared ? loadArcSuite() : [];
const EITHER = new Set(['ams_fields_c_na', 'ams_fields_h_empty']);

it.skipIf(!hasShared)('runs the whole suite: 10 scenarios, 175 tests', () => {
  expect(scenarios).toHaveLength(10);
  expect(scenarios.flatMap((s) => s.tests)).toHaveLength(175);
});

describe.each(scenarios.map((s) => [s.description, s] as const))('%s', (_description, scenario) => {
  let dns: FakeDnsServer;
  let app: FastifyInstance;

  beforeAll(async () => {
    dns = await startFakeDnsServer({ zones: [scenario.zone] });
    app = await buildApp(
      testConfig({
        dnsResolvers: [dns.udp],
        rateLimitExpensive: { points: 10_000, seconds: 60 },
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

  it.concurrent.each(scenario.tests.map((t) => [t.name, t] as const))('%s', async (name, t) => {
    const res = await app.inject({
      method: 'POST',
      url: '/api/message',
      headers: { 'content-type': 'message/rfc822' },
      payload: t.message,
    });
    if (t.message.trim() === '') {
      expect(res.statusCode, res.body).toBe(400);
      return;
    }
    expect(res.statusCode, res.body).toBe(200);
    const arc = res.json().arc;
    const context = `${t.spec}: ${t.description}\n${JSON.stringify(arc, null, 1)}`;
    const expected = t.cv === '' ? 'fail' : t.cv.toLowerCase();
    if (EITHER.has(name)) expect(['pass', 'fail'], context).toContain(arc.result);
    else expect(arc.result, context).toBe(expected);
  });
});
