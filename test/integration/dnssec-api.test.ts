/**
 * GET /api/dnssec against a real signed hierarchy (test/fakes/bind-hierarchy.ts: BIND's
 * dnssec-keygen and dnssec-signzone, served by named under a root of our own): netdiag's own
 * engine and validator must reach every case's verdict, the one delv and a validating unbound
 * reach on the same cases (test/interop/dnssec-peers.test.ts holds them to it), and for a
 * chain that is not secure name the same zone and reason.
 *
 * Runs wherever named and bind9-utils are installed and the process is root (CI; `npm test`
 * is root in its own namespace); otherwise skips, saying why.
 */
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { testConfig } from '../../src/config/index.js';
import { CASES } from '../fakes/bind-cases.js';
import { type BindHierarchy, bindHierarchyUnavailable, startBindHierarchy } from '../fakes/bind-hierarchy.js';

const unavailable = bindHierarchyUnavailable();
if (unavailable) console.warn(`dnssec-api: skipped: ${unavailable}`);

describe.skipIf(unavailable !== undefined)('GET /api/dnssec on a signed hierarchy of our own', () => {
  let hierarchy: BindHierarchy;
  let app: FastifyInstance;

  beforeAll(async () => {
    hierarchy = await startBindHierarchy();
    app = await buildApp(
      testConfig({
        dnsRootHints: hierarchy.rootHints,
        dnssecTrustAnchors: hierarchy.trustAnchorFile,
        unsafeAllowTargetCidrs: [hierarchy.cidr],
        rateLimitExpensive: { points: 1000, seconds: 60 },
        rateLimitGeneral: { points: 1000, seconds: 60 },
      }),
    );
  }, 120_000);
  afterAll(async () => {
    await app?.close();
    await hierarchy?.close();
  });

  const get = async (name: string, type: string) => {
    const res = await app.inject({ method: 'GET', url: `/api/dnssec?target=${name}&type=${type}` });
    return { status: res.statusCode, body: res.json() };
  };

  it.each(CASES.map((c) => [`${c.name} ${c.type}`, c] as const))(
    '%s: the verdict the peers reach',
    async (_, c) => {
      const { status, body } = await get(c.name, c.type);
      expect(status, JSON.stringify(body)).toBe(200);
      expect(
        { status: body.status, zone: body.reason?.zone ?? null, code: body.reason?.code ?? null },
        JSON.stringify(body.reason),
      ).toEqual({
        status: c.expected.status,
        zone: c.expected.zone,
        code: c.expected.code,
      });
      expect(body.chain[0].zone).toBe('.');
      expect(body.chain[0].anchored).toBe(true);
      expect(body.source_id).toBe('dns-engine');
    },
  );

  it('a second validation under the warm chain costs at most two upstream queries', async () => {
    await get('www.secure.test', 'A');
    const other = await get('secure.test', 'SOA');
    expect(other.body.status).toBe('secure');
    expect(other.body.queries).toBeLessThanOrEqual(2);
  });

  it('the broken link in words, dates in the one form the API writes', async () => {
    const { body } = await get('www.expired.test', 'A');
    expect(body.reason.detail).toMatch(/the signature expired at \d{4}-\d\d-\d\d \d\d:\d\d UTC$/);
    expect(JSON.stringify(body.chain.map((l: { reason: unknown }) => l.reason))).not.toMatch(
      /\d{4}-\d\d-\d\dT\d\d:/,
    );
  });

  it('says what is not a verdict: RFC 8624 advice, RFC 9276 parameters, a signature about to expire', async () => {
    const codes = async (name: string, type = 'A') => {
      const { body } = await get(name, type);
      return [
        ...body.findings.map((f: { code: string }) => f.code),
        ...body.chain.flatMap((l: { findings: { code: string }[] }) => l.findings.map((f) => f.code)),
      ];
    };
    expect(await codes('www.expiring.test')).toContain('signature_expires_soon');
    expect(await codes('nx.iterations-150.test')).toEqual(
      expect.arrayContaining(['nsec3_iterations', 'nsec3_salt']),
    );
    expect(await codes('www.rsa1024.test')).toContain('rsa_key_short');
    expect(await codes('www.rsasha1.test')).toContain('algorithm_not_recommended');
    expect(await codes('www.secure.test')).toEqual([]);
  });

  it('the engine is a provider: /api/providers lists it, with its last success', async () => {
    const res = await app.inject({ url: '/api/providers' });
    const engine = (
      res.json() as {
        providers: { id: string; capabilities: string[]; status: { last_success_at: string | null } }[];
      }
    ).providers.find((p) => p.id === 'dns-engine');
    expect(engine?.capabilities).toEqual(['dnssec']);
    expect(engine?.status.last_success_at).not.toBeNull();
  });

  it('bad input is a 400 naming the parameter', async () => {
    const bad = await get('www.secure.test', 'NOPE');
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatch(/^type must be one of A, AAAA/);
  });
});
