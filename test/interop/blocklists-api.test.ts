/**
 * GET /api/blocklists against real lists: Debian's rbldnsd behind a test root
 * (test/fakes/rbldnsd-hierarchy.ts: an IPv4 list, an IPv6 list, a domain list,
 * a list that answers refusal codes, a list that lists everything), asked
 * through netdiag's iterative resolver. For every subject rbldnsd serves
 * (whose answers the rbldnsd suite holds equal to `dig`'s), the API's status
 * and code must be what rbldnsd answers; a refusal and a broken list must
 * never come out as `listed`; and no list query may reach the configured
 * resolvers (a fake DNS server recording every question). Real root only
 * (rbldnsd drops to its own user); skipped otherwise, saying why.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { testConfig } from '../../src/config/index.js';
import type { BlocklistsResponse, ListResult } from '../../src/features/blocklists/blocklists.schema.js';
import { type FakeDnsServer, startFakeDnsServer } from '../fakes/dns-server.js';
import { testZone } from '../fakes/dns-zones.js';
import {
  type RbldnsdHierarchy,
  rbldnsdUnavailable,
  startRbldnsdHierarchy,
} from '../fakes/rbldnsd-hierarchy.js';

const unavailable = rbldnsdUnavailable();
if (unavailable) console.warn(`blocklists-api: SKIPPED: ${unavailable}`);

/** The test lists as a catalogue (BLOCKLISTS_FILE): codes as rbldnsd-lists.ts serves them. */
const CATALOGUE = {
  lists: [
    list('dnsbl.example', 'ip4', {
      '127.0.0.2': 'spam source',
      '127.0.0.3': 'spam network',
      '127.0.0.4': 'dynamic range',
      '127.0.0.11': 'policy: end-user range',
    }),
    list('dnsbl6.example', 'ip6', {
      '127.0.0.2': 'test point',
      '127.0.0.3': 'IPv6 spam network',
      '127.0.0.4': 'one host',
    }),
    list('dbl.example', 'domain', {
      '127.0.1.2': 'spam domain',
      '127.0.1.4': 'phishing',
      '127.0.1.5': 'wildcard listing',
    }),
    list(
      'refuse.example',
      'ip4',
      { '127.0.0.2': 'listed' },
      {
        '127.255.255.252': 'typing error in the list name',
        '127.255.255.254': 'query through a public resolver',
        '127.255.255.255': 'too many queries',
      },
    ),
    list('all.example', 'ip4', { '127.0.0.2': 'listed' }),
    list('all.example', 'ip6', { '127.0.0.2': 'listed' }),
    {
      ...list('keyed.example', 'ip4', { '127.0.0.2': 'listed' }),
      zone: '{key}.keyed.example',
      key: 'KEYED_EXAMPLE_KEY',
    },
  ],
};

function list(
  zone: string,
  kind: string,
  codes: Record<string, string>,
  refusal_codes: Record<string, string> = {},
) {
  return {
    zone,
    name: `Test list ${zone} (${kind})`,
    kind,
    codes,
    refusal_codes,
    delist_url: `https://${zone}/delist`,
    key: null as string | null,
    terms: 'test data',
    enabled: true,
  };
}

describe.skipIf(unavailable !== undefined)(
  'GET /api/blocklists on rbldnsd through the iterative engine',
  () => {
    let h: RbldnsdHierarchy;
    let dns: FakeDnsServer;
    let app: FastifyInstance;
    let dir: string;

    beforeAll(async () => {
      h = await startRbldnsdHierarchy();
      dir = mkdtempSync(join(tmpdir(), 'blocklists-api-'));
      const file = join(dir, 'blocklists.json');
      writeFileSync(file, JSON.stringify(CATALOGUE));
      // The configured resolvers: they answer the MX lookup of a domain, and must never see a list query.
      dns = await startFakeDnsServer({
        zones: [
          testZone('test', [
            { name: 'spam.test', type: 'MX', data: { preference: 10, exchange: 'mx.mail.test' } },
            { name: 'mx.mail.test', type: 'A', data: '198.51.100.78' },
          ]),
        ],
      });
      app = await buildApp(
        testConfig({
          dnsResolvers: [dns.udp],
          dnsRootHints: h.rootHints,
          blocklistsFile: file,
          blocklistKeys: {},
          unsafeAllowTargetCidrs: [
            h.cidr,
            '192.0.2.0/24',
            '198.51.100.0/24',
            '203.0.113.0/24',
            '2001:db8::/32',
          ],
          rateLimitExpensive: { points: 10_000, seconds: 60 },
          rateLimitGeneral: { points: 10_000, seconds: 60 },
          loadShedEventLoopDelayMs: 0,
        }),
        { logger: pino({ level: process.env.BL_DEBUG ? 'error' : 'silent' }) },
      );
      await app.ready();
    }, 60_000);

    afterAll(async () => {
      await app?.close();
      await dns?.close();
      await h?.close();
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    const get = async (query: string): Promise<BlocklistsResponse> => {
      const res = await app.inject({ url: `/api/blocklists?${query}` });
      expect(res.statusCode, res.body).toBe(200);
      return res.json<BlocklistsResponse>();
    };
    const entryFor = (body: BlocklistsResponse, zone: string, kind: string) =>
      body.lists.find((l) => l.zone === zone && l.kind === kind);

    it('every subject of the plain lists: listed with rbldnsd’s code, its TXT and the list’s meaning, or not listed', async () => {
      for (const spec of h.lists.filter((l) => l.role === 'list')) {
        for (const e of spec.entries) {
          if (/^(127\.|::ffff:7f00:|test$|invalid$)/.test(e.subject)) continue; // test points: asked as health
          const body = await get(`${e.kind === 'domain' ? 'domain' : 'ip'}=${encodeURIComponent(e.subject)}`);
          const found = entryFor(body, spec.zone, e.kind) as ListResult;
          const context = `${spec.zone} ${e.subject}: ${e.about}\n${JSON.stringify(found)}`;
          if (e.a.length === 0) {
            expect(found.status, context).toBe('not_listed');
          } else {
            expect(found.status, context).toBe('listed');
            expect([found.code, ...(found.codes ?? [])], context).toContain(e.a[0]);
            if (e.txt.length > 0) expect(e.txt, context).toContain(found.reason);
            expect(found.delist_url).toBe(`https://${spec.zone}/delist`);
          }
        }
      }
    }, 120_000);

    it('a refusal code is a refusal with the list’s meaning, never a listing', async () => {
      const refusing = h.lists.find((l) => l.role === 'refusing')!;
      for (const e of refusing.entries.filter((x) => !x.subject.startsWith('127.'))) {
        const found = entryFor(await get(`ip=${e.subject}`), refusing.zone, 'ip4')!;
        expect(found.status, e.about).toBe('refused');
        expect(found.code).toBe(e.a[0]);
        expect(found.meaning).toBe(CATALOGUE.lists[3]!.refusal_codes[e.a[0]!]);
      }
    });

    it('a list that lists everything is broken, not counted, and says why', async () => {
      const body = await get('ip=198.51.100.78');
      expect(entryFor(body, 'all.example', 'ip4')).toMatchObject({
        status: 'broken',
        meaning: expect.stringMatching(/lists 127\.0\.0\.1.*lists everything/),
      });
      // dnsbl.example lists it; the refusing and the broken list are left out of the count.
      expect(body.listed_count).toBe(1);
      expect(body.lists[0]).toMatchObject({ zone: 'dnsbl.example', status: 'listed' });
      const v6 = await get('ip=2001:db8:1::5');
      expect(entryFor(v6, 'all.example', 'ip6')?.status).toBe('broken');
      expect(entryFor(v6, 'dnsbl6.example', 'ip6')?.status).toBe('listed');
    });

    it('keeps each list’s test-point verdict in the one cache for the test points’ TTL, not per request', async () => {
      await get('ip=198.51.100.78');
      const kept = await app.ctx.cache.get<{ ok: boolean | null }>('blocklists:health:ip4:dnsbl.example');
      expect(kept?.value).toEqual({ ok: true });
      // rbldnsd's $TTL 300 bounds it.
      expect(kept!.expiresAt - Date.now()).toBeLessThanOrEqual(300_000);
      const broken = await app.ctx.cache.get<{ ok: boolean; why?: string }>(
        'blocklists:health:ip4:all.example',
      );
      expect(broken?.value).toMatchObject({ ok: false, why: expect.stringMatching(/lists everything/) });
    });

    it('a list whose key is not set is refused without a query; its key never shows', async () => {
      const found = entryFor(await get('ip=192.0.2.1'), 'keyed.example', 'ip4')!;
      expect(found).toMatchObject({
        status: 'refused',
        meaning: expect.stringMatching(/KEYED_EXAMPLE_KEY is not set/),
      });
      expect(found.query).toBe('1.2.0.192.{key}.keyed.example');
      const providers = (await app.inject({ url: '/api/providers' })).json() as {
        providers: { id: string; configured: boolean }[];
      };
      expect(providers.providers.find((p) => p.id === 'dnsbl-ip4-keyed.example')).toMatchObject({
        configured: false,
      });
      expect(providers.providers.some((p) => p.id === 'dnsbl-ip4-dnsbl.example')).toBe(true);
    });

    it('a domain: the domain lists, and its MX hosts’ addresses against the IP lists', async () => {
      const body = await get('domain=spam.test');
      expect(entryFor(body, 'dbl.example', 'domain')).toMatchObject({ status: 'listed', code: '127.0.1.2' });
      expect(body.mx).toEqual([
        expect.objectContaining({
          host: 'mx.mail.test',
          addresses: [expect.objectContaining({ address: '198.51.100.78', listed_count: 1 })],
        }),
      ]);
      expect(body.providers_tried.map((p) => p.id)).toEqual(
        expect.arrayContaining(['dns-engine', 'dnsbl-domain-dbl.example', 'dnsbl-ip4-dnsbl.example']),
      );
    });

    it('/api/email-security reports its MX hosts’ listings as a finding of the MX check, outside the score', async () => {
      const res = await app.inject({ url: '/api/email-security?domain=spam.test' });
      expect(res.statusCode, res.body).toBe(200);
      const mx = res.json().checks.find((c: { id: string }) => c.id === 'mx');
      expect(mx.findings).toContainEqual(
        expect.objectContaining({
          severity: 'warning',
          message: expect.stringMatching(
            /^mx\.mail\.test \(198\.51\.100\.78\) is listed on Test list dnsbl\.example \(ip4\) \(spam network\)/,
          ),
        }),
      );
      // The refusing and the broken list add nothing.
      expect(JSON.stringify(mx.findings)).not.toMatch(/refuse\.example|all\.example/);
    });

    it('no list query ever reaches the configured resolvers', async () => {
      await get('ip=198.51.100.78');
      await get('domain=spam.test');
      const asked = dns.queries.map((q) => q.name.toLowerCase());
      expect(asked.length).toBeGreaterThan(0);
      expect(asked.filter((n) => /\.example\.?$/.test(n))).toEqual([]);
    });

    it('refuses a private address and a malformed request, naming the parameter', async () => {
      const private10 = await app.inject({ url: '/api/blocklists?ip=10.0.0.1' });
      expect(private10.statusCode).toBe(400);
      const none = await app.inject({ url: '/api/blocklists' });
      expect(none.statusCode).toBe(400);
      expect(none.json().error).toMatch(/ip/);
      const both = await app.inject({ url: '/api/blocklists?ip=192.0.2.1&domain=spam.test' });
      expect(both.statusCode).toBe(400);
    });
  },
);
