/**
 * GET /api/rdap end to end over real sockets: the aggregator and the IANA
 * bootstrap files are operator-configured fakes (https-upstream, reached with
 * the plain HTTP client); every registry and registrar is a fake target on
 * 127.0.0.x:443 under its own name, resolved through the fake DNS server and
 * reached through outbound safety, exactly as in production. The bootstrap
 * files are IANA's real ones with the URLs of the registries under test
 * rewritten to those names; every other registry in them stays unresolvable,
 * so nothing can reach the internet.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { RDAP_NOT_FOUND_TTL_SECONDS, RDAP_TTL_SECONDS } from '../../src/features/rdap/rdap.service.js';
import { BOOTSTRAP_TTL_MS } from '../../src/providers/rdap/bootstrap.js';
import { type FakeDnsServer, startFakeDnsServer } from '../fakes/dns-server.js';
import { testZone } from '../fakes/dns-zones.js';
import { type HttpTarget, startHttpTarget, type TargetReply } from '../fakes/http-targets.js';
import type { FakeUpstream } from '../fakes/https-upstream.js';
import {
  type FakeRdapOrg,
  rdapReply as rdap,
  rewrittenFixture as rewritten,
  startFakeIanaBootstrap,
  startFakeRdapOrg,
} from '../fakes/rdap.js';
import { getTestPki } from '../fakes/test-ca.js';
import { buildTestApp } from '../helper.js';
import { hasShared, sharedFixture } from '../shared-data.js';

let ca: string;
let dns: FakeDnsServer;
let aggregator: FakeRdapOrg;
let iana: FakeUpstream;
let verisign: HttpTarget;
let markmonitor: HttpTarget;
let registrarEu: HttpTarget;
let nicFr: HttpTarget;
let flexireg: HttpTarget;
let apnic: HttpTarget;
let arin: HttpTarget;
/** Where rdap.evil.test points: outside the allowed addresses, it must never see a connection. */
let canary: HttpTarget;
let targets: HttpTarget[];

/** Where rdap.org redirects (a 302 to the registry); anything else is its own 404. */
const AGGREGATOR_REDIRECTS: Record<string, string> = {
  'domain/google.com': 'https://rdap.verisign.test/com/v1/domain/google.com',
  'domain/themarquetry.com': 'https://rdap.verisign.test/com/v1/domain/themarquetry.com',
  'domain/nope-not-registered.com': 'https://rdap.verisign.test/com/v1/domain/nope-not-registered.com',
  'domain/xn--bcher-kva.com': 'https://rdap.verisign.test/com/v1/domain/xn--bcher-kva.com',
  'domain/lemonde.fr': 'https://rdap.nic.fr.test/domain/lemonde.fr',
  'domain/evil-redirect.com': 'https://rdap.evil.test/domain/evil-redirect.com',
  'domain/downgrade.com': 'http://rdap.verisign.test/com/v1/domain/downgrade.com',
  'ip/1.1.1.1': 'https://rdap.apnic.test/ip/1.1.1.1',
  'ip/2606:4700:4700::1111': 'https://rdap.arin.test/registry/ip/2606:4700:4700::1111',
};

beforeAll(async () => {
  ca = (await getTestPki()).caPem;
  const https = (names: string[], routes: Record<string, TargetReply>) =>
    // Like a registry, each answers 404 for an object it does not hold.
    startHttpTarget({ protocol: 'https', names, routes, fallback: { status: 404, body: '' } });

  verisign = await https(['rdap.verisign.test'], {
    '/com/v1/domain/google.com': rdap(
      rewritten('rdap/verisign-com-domain-google.com.json', {
        'rdap.markmonitor.com': 'rdap.markmonitor.test',
      }),
    ),
    '/com/v1/domain/themarquetry.com': rdap(
      rewritten('rdap/verisign-com-domain-themarquetry.com.json', {
        'rdap.registrar.eu': 'rdap.registrar.test',
      }),
    ),
    // Verisign answers an unregistered name with 404 and an empty body.
    '/com/v1/domain/nope-not-registered.com': {
      status: 404,
      headers: { 'content-type': 'application/rdap+json' },
    },
    '/com/v1/domain/xn--bcher-kva.com': rdap({
      objectClassName: 'domain',
      handle: '1_DOMAIN_COM-VRSN',
      ldhName: 'XN--BCHER-KVA.COM',
      status: ['active'],
      events: [{ eventAction: 'registration', eventDate: '2001-02-03T04:05:06Z' }],
    }),
  });
  markmonitor = await https(['rdap.markmonitor.test'], {
    '/rdap/domain/GOOGLE.COM': rdap(sharedFixture('rdap/registrar-markmonitor-domain-google.com.json')),
  });
  registrarEu = await https(['rdap.registrar.test'], {
    '/v1/domain/THEMARQUETRY.COM': { status: 503, body: 'maintenance' },
  });
  nicFr = await https(['rdap.nic.fr.test'], {
    '/domain/lemonde.fr': rdap(sharedFixture('rdap/cctld-fr-domain-lemonde.fr.json')),
    // Google Registry's 404 shape: an RDAP error object.
    '/domain/absent.fr': rdap(
      { errorCode: 404, title: 'Not Found', description: ['absent.fr not found'] },
      404,
    ),
  });
  flexireg = await https(['flexireg.test'], {
    '/moscow/rdap/domain/home.moscow': rdap(sharedFixture('rdap/gtld-moscow-domain-home.moscow.json')),
  });
  apnic = await https(['rdap.apnic.test'], {
    '/ip/1.1.1.1': rdap(sharedFixture('rdap/apnic-ip-1.1.1.1.json')),
  });
  arin = await https(['rdap.arin.test'], {
    '/registry/ip/2606:4700:4700::1111': rdap(sharedFixture('rdap/arin-ip-2606-4700-4700--1111.json')),
  });
  canary = await https(['rdap.evil.test'], {});
  targets = [verisign, markmonitor, registrarEu, nicFr, flexireg, apnic, arin, canary];

  const zone = testZone(
    'test',
    [
      ['rdap.verisign.test', verisign],
      ['rdap.markmonitor.test', markmonitor],
      ['rdap.registrar.test', registrarEu],
      ['rdap.nic.fr.test', nicFr],
      ['flexireg.test', flexireg],
      ['rdap.apnic.test', apnic],
      ['rdap.arin.test', arin],
      ['rdap.evil.test', canary],
    ].map(([name, target]) => ({ name: name as string, type: 'A', data: (target as HttpTarget).address })),
  );
  dns = await startFakeDnsServer({ zones: [zone] });

  aggregator = await startFakeRdapOrg({ redirects: AGGREGATOR_REDIRECTS });
  iana = await startFakeIanaBootstrap({
    dns: {
      'https://rdap.verisign.com/com/v1/': 'https://rdap.verisign.test/com/v1/',
      // RFC 9224 base URLs end in "/"; this one does not, and must work all the same.
      'https://rdap.nic.fr/': 'https://rdap.nic.fr.test',
      'https://flexireg.net/moscow/rdap/': 'https://flexireg.test/moscow/rdap/',
    },
    ipv4: { 'https://rdap.apnic.net/': 'https://rdap.apnic.test/' },
    ipv6: { 'https://rdap.arin.net/registry/': 'https://rdap.arin.test/registry' },
  });
});

afterAll(async () => {
  await Promise.all([
    dns?.close(),
    aggregator?.close(),
    iana?.close(),
    ...(targets ?? []).map((t) => t.close()),
  ]);
});

beforeEach(() => {
  aggregator.reset();
  iana.reset();
  for (const t of targets) t.reset();
});

function app(opts: { clock?: () => number; bootstrapUrl?: string } = {}) {
  return buildTestApp({
    ca,
    clock: opts.clock,
    config: {
      dnsResolvers: [dns.doh],
      rdapAggregatorUrl: aggregator.url,
      rdapBootstrapUrl: opts.bootstrapUrl ?? iana.url,
      providerTimeoutMs: 3000,
      // Exactly the registries under test: the canary's address stays refused.
      unsafeAllowTargetCidrs: targets.filter((t) => t !== canary).map((t) => `${t.address}/32`),
    },
  });
}

type App = Awaited<ReturnType<typeof app>>;

async function get(a: App, query: string) {
  const res = await a.inject(`/api/rdap?${query}`);
  return { res, body: res.json() };
}

const AGGREGATOR_OK = { id: 'rdap-org', name: 'rdap.org', status: 'ok' };
const BOOTSTRAP_OK = { id: 'iana-rdap-bootstrap', name: 'IANA RDAP bootstrap (RFC 9224)', status: 'ok' };
const aggregatorFailed = (error: RegExp) => ({
  id: 'rdap-org',
  name: 'rdap.org',
  status: 'failed',
  error: expect.stringMatching(error),
});

describe.skipIf(!hasShared)('GET /api/rdap, domains', () => {
  it("follows the aggregator 302 to the registry and the thin registry's related link to the registrar", async () => {
    const { res, body } = await get(await app(), 'target=google.com&type=domain');
    expect(res.statusCode).toBe(200);
    expect(body).toMatchObject({
      target: 'google.com',
      type: 'domain',
      registry: {
        url: `https://rdap.verisign.test/com/v1/domain/google.com`,
        object_class: 'domain',
        ldh_name: 'google.com',
        events: { registration: '1997-09-15T04:00:00Z', expiration: '2028-09-14T04:00:00Z' },
        entities: {
          registrar: { name: 'MarkMonitor Inc.', iana_id: '292' },
          abuse: { email: 'abusecomplaints@markmonitor.com' },
        },
        nameservers: [
          { ldh_name: 'ns1.google.com' },
          { ldh_name: 'ns2.google.com' },
          { ldh_name: 'ns3.google.com' },
          { ldh_name: 'ns4.google.com' },
        ],
        secure_dns: { delegation_signed: false },
        raw: { handle: '2138514_DOMAIN_COM-VRSN' },
      },
      registrar: {
        url: 'https://rdap.markmonitor.test/rdap/domain/GOOGLE.COM',
        entities: { registrant: { organization: 'Google LLC', redacted: true } },
      },
      notes: [],
      source: 'rdap.org',
      source_id: 'rdap-org',
      providers_tried: [AGGREGATOR_OK],
    });
    // The registry and the registrar were reached by name (SNI) through the checked, pinned path.
    expect(verisign.tlsServernames).toEqual(['rdap.verisign.test']);
    expect(markmonitor.requests.map((r) => r.path)).toEqual(['/rdap/domain/GOOGLE.COM']);
    // RFC 7480 §4.2: every RDAP request asks for application/rdap+json.
    for (const req of [aggregator.requests[0], verisign.requests[0], markmonitor.requests[0]]) {
      expect(req?.headers.accept).toMatch(/^application\/rdap\+json/);
    }
    expect(iana.count()).toBe(0);
  });

  it('caches a whole answer for 1 h: the second request is a HIT and reaches no upstream', async () => {
    let now = Date.parse('2024-08-01T00:00:00Z');
    const a = await app({ clock: () => now });
    const first = await get(a, 'target=google.com&type=domain');
    expect(first.res.headers['x-service-cache']).toBe('MISS');
    expect(first.res.headers['cache-control']).toBe(`public, max-age=${RDAP_TTL_SECONDS}`);
    now += 600_000;
    const second = await get(a, 'target=GOOGLE.com.&type=DOMAIN');
    expect(second.res.headers['x-service-cache']).toBe('HIT');
    expect(second.res.headers['cache-control']).toBe(`public, max-age=${RDAP_TTL_SECONDS - 600}`);
    expect(second.body).toEqual(first.body);
    expect(aggregator.count()).toBe(1);
    expect(markmonitor.requests).toHaveLength(1);
  });

  it('a failing registrar leaves registrar null with a note; the request still succeeds and is not cached', async () => {
    const a = await app();
    const { res, body } = await get(a, 'target=themarquetry.com&type=domain');
    expect(res.statusCode).toBe(200);
    expect(body.registry).toMatchObject({
      ldh_name: 'themarquetry.com',
      entities: { registrar: { iana_id: '1647' } },
    });
    expect(body.registrar).toBeNull();
    expect(body.notes).toEqual([
      expect.stringMatching(/registrar lookup at rdap\.registrar\.test failed \(http_status: HTTP 503/),
    ]);
    expect(registrarEu.requests).toHaveLength(1);
    expect(res.headers['cache-control']).toBe('public, max-age=0');
    await get(a, 'target=themarquetry.com&type=domain');
    expect(registrarEu.requests).toHaveLength(2);
  });

  it('aggregator 503 → bootstrap and the authoritative server directly: providers_tried [failed, ok]', async () => {
    aggregator.fault = '503';
    const { res, body } = await get(await app(), 'target=google.com&type=domain');
    expect(res.statusCode).toBe(200);
    expect(body).toMatchObject({
      registry: { url: 'https://rdap.verisign.test/com/v1/domain/google.com', ldh_name: 'google.com' },
      registrar: { url: 'https://rdap.markmonitor.test/rdap/domain/GOOGLE.COM' },
      source: 'IANA RDAP bootstrap (RFC 9224)',
      source_id: 'iana-rdap-bootstrap',
      providers_tried: [aggregatorFailed(/^http_status: HTTP 503/), BOOTSTRAP_OK],
    });
    expect(iana.requests.map((r) => r.path)).toEqual(['/dns.json']);
    expect(iana.requests[0]?.headers.accept).toMatch(/json/);
  });

  it('aggregator 404 for a TLD it does not know → bootstrap path, not a "not registered"', async () => {
    const { res, body } = await get(await app(), 'target=home.moscow&type=domain');
    expect(res.statusCode).toBe(200);
    expect(body).toMatchObject({
      registry: { url: 'https://flexireg.test/moscow/rdap/domain/home.moscow', ldh_name: 'home.moscow' },
      registrar: null,
      providers_tried: [aggregatorFailed(/answered 404 itself/), BOOTSTRAP_OK],
    });
    expect(flexireg.requests).toHaveLength(1);
  });

  it('an IDN domain is asked for in A-label form', async () => {
    const { res, body } = await get(await app(), `target=${encodeURIComponent('Bücher.com')}&type=domain`);
    expect(res.statusCode).toBe(200);
    expect(aggregator.requests[0]?.path).toBe('/domain/xn--bcher-kva.com');
    expect(body).toMatchObject({
      target: 'xn--bcher-kva.com',
      registry: {
        ldh_name: 'xn--bcher-kva.com',
        unicode_name: 'bücher.com',
        events: { registration: '2001-02-03T04:05:06Z' },
      },
    });
  });

  it('a bootstrap base URL without its trailing slash, and RDAP_BOOTSTRAP_URL with one, both work', async () => {
    aggregator.fault = '503';
    const { res, body } = await get(
      await app({ bootstrapUrl: `${iana.url}/` }),
      'target=lemonde.fr&type=domain',
    );
    expect(res.statusCode).toBe(200);
    expect(nicFr.requests.map((r) => r.path)).toEqual(['/domain/lemonde.fr']);
    expect(iana.requests.map((r) => r.path)).toEqual(['/dns.json']);
    expect(body).toMatchObject({
      registry: {
        url: 'https://rdap.nic.fr.test/domain/lemonde.fr',
        entities: { registrant: { name: 'SOCIETE EDITRICE du monde', email: 'domain_names@lemonde.fr' } },
        secure_dns: null,
      },
      registrar: null,
    });
  });

  it('fetches each bootstrap file once and keeps it 24 h; a failed refresh keeps the stale copy', async () => {
    let now = Date.parse('2024-08-01T00:00:00Z');
    aggregator.fault = '503';
    const a = await app({ clock: () => now });
    await get(a, 'target=lemonde.fr&type=domain');
    await get(a, 'target=google.com&type=domain');
    await get(a, 'target=home.moscow&type=domain');
    expect(iana.count('/dns.json')).toBe(1);

    now += BOOTSTRAP_TTL_MS + 1;
    iana.fault = '503';
    const { res } = await get(a, 'target=absent.fr&type=domain');
    expect(res.statusCode).toBe(404); // answered from the stale dns.json
    expect(iana.count('/dns.json')).toBe(2);
    expect(nicFr.requests.map((r) => r.path)).toContain('/domain/absent.fr');
  });

  it('not registered → 404 {error} with providers_tried, cached 5 min (via the aggregator and via the bootstrap)', async () => {
    let now = Date.parse('2024-08-01T00:00:00Z');
    const a = await app({ clock: () => now });
    const { res, body } = await get(a, 'target=nope-not-registered.com&type=domain');
    expect(res.statusCode).toBe(404);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(body).toEqual({
      error: expect.stringMatching(/nope-not-registered\.com is not registered/),
      code: 'not_registered',
      providers_tried: [AGGREGATOR_OK],
    });
    now += (RDAP_NOT_FOUND_TTL_SECONDS - 1) * 1000;
    expect((await get(a, 'target=nope-not-registered.com&type=domain')).res.statusCode).toBe(404);
    expect(verisign.requests).toHaveLength(1);
    now += 1000;
    await get(a, 'target=nope-not-registered.com&type=domain');
    expect(verisign.requests).toHaveLength(2);

    aggregator.fault = '503';
    const viaBootstrap = await get(a, 'target=absent.fr&type=domain');
    expect(viaBootstrap.res.statusCode).toBe(404);
    expect(viaBootstrap.body.error).toMatch(/absent\.fr is not registered/);
    expect(viaBootstrap.body.providers_tried).toEqual([aggregatorFailed(/503/), BOOTSTRAP_OK]);
  });

  it('a TLD without RDAP service in the bootstrap → 404 saying so', async () => {
    const { res, body } = await get(await app(), 'target=www.example.example&type=domain');
    expect(res.statusCode).toBe(404);
    expect(body.error).toMatch(/\.example TLD publishes no RDAP service/);
    expect(body.code).toBe('no_rdap_service');
    expect(body.providers_tried).toEqual([aggregatorFailed(/404/), BOOTSTRAP_OK]);
  });

  it('every source failing → 502 with providers_tried, never cached', async () => {
    aggregator.fault = '503';
    iana.fault = 'garbage';
    const a = await app();
    const { res, body } = await get(a, 'target=google.com&type=domain');
    expect(res.statusCode).toBe(502);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(body.providers_tried).toEqual([
      aggregatorFailed(/503/),
      {
        id: 'iana-rdap-bootstrap',
        name: 'IANA RDAP bootstrap (RFC 9224)',
        status: 'failed',
        error: expect.stringMatching(/^bad_response/),
      },
    ]);
    iana.fault = 'none';
    expect((await get(a, 'target=google.com&type=domain')).res.statusCode).toBe(200);
  });
});

describe.skipIf(!hasShared)('GET /api/rdap, outbound safety and upstream etiquette', () => {
  it('a redirect to a non-public address is refused without a connection, and the bootstrap answers instead', async () => {
    const { res, body } = await get(await app(), 'target=evil-redirect.com&type=domain');
    expect(canary.connections).toBe(0);
    // verisign has no such name: the bootstrap path ends in its 404, a definitive answer.
    expect(res.statusCode).toBe(404);
    expect(body.providers_tried).toEqual([
      aggregatorFailed(/refused to contact rdap\.evil\.test.*not a public address/),
      BOOTSTRAP_OK,
    ]);
  });

  it('a redirect downgrading to http is not followed', async () => {
    const { body } = await get(await app(), 'target=downgrade.com&type=domain');
    expect(body.providers_tried[0]).toEqual(aggregatorFailed(/non-HTTPS/));
    expect(verisign.requests.filter((r) => r.path.includes('downgrade'))).toHaveLength(1); // only the bootstrap path's request, over https
  });

  it('a registry 429 is a failure of that source, and its Retry-After is respected', async () => {
    let now = Date.parse('2024-08-01T00:00:00Z');
    const a = await app({ clock: () => now });
    let limited = true;
    verisign.route('/com/v1/domain/google.com', () =>
      limited
        ? { status: 429, headers: { 'retry-after': '120' }, body: '' }
        : rdap(
            rewritten('rdap/verisign-com-domain-google.com.json', {
              'rdap.markmonitor.com': 'rdap.markmonitor.test',
            }),
          ),
    );
    try {
      const first = await get(a, 'target=google.com&type=domain');
      expect(first.res.statusCode).toBe(502);
      expect(first.body.providers_tried).toEqual([
        aggregatorFailed(
          /^rate_limited: HTTP 429 from rdap\.verisign\.test; not asked again until 2024-08-01T00:02:00\.000Z$/,
        ),
        expect.objectContaining({
          status: 'failed',
          error: expect.stringMatching(
            /^rate_limited: .*Retry-After.*not sent, skipped until 2024-08-01T00:02/,
          ),
        }),
      ]);
      // The bootstrap path did not ask Verisign a second time.
      expect(verisign.requests).toHaveLength(1);

      limited = false;
      now += 119_000;
      expect((await get(a, 'target=google.com&type=domain')).res.statusCode).toBe(502);
      expect(verisign.requests).toHaveLength(1);

      now += 1000;
      expect((await get(a, 'target=google.com&type=domain')).res.statusCode).toBe(200);
      expect(verisign.requests).toHaveLength(2);
    } finally {
      verisign.route(
        '/com/v1/domain/google.com',
        rdap(
          rewritten('rdap/verisign-com-domain-google.com.json', {
            'rdap.markmonitor.com': 'rdap.markmonitor.test',
          }),
        ),
      );
    }
  });
});

describe.skipIf(!hasShared)('GET /api/rdap, IP networks', () => {
  it('an IPv6 network with cidr0_cidrs (ARIN)', async () => {
    const { res, body } = await get(await app(), 'target=2606:4700:4700:0::1111&type=ip');
    expect(res.statusCode).toBe(200);
    expect(aggregator.requests[0]?.path).toBe('/ip/2606:4700:4700::1111');
    expect(body).toMatchObject({
      target: '2606:4700:4700::1111',
      type: 'ip',
      registry: {
        url: 'https://rdap.arin.test/registry/ip/2606:4700:4700::1111',
        object_class: 'ip network',
        handle: 'NET6-2606-4700-1',
        name: 'CLOUDFLARENET',
        start_address: '2606:4700::',
        end_address: '2606:4700:ffff:ffff:ffff:ffff:ffff:ffff',
        cidrs: ['2606:4700::/32'],
        ip_version: 'v6',
        parent_handle: 'NET6-2600-1',
        entities: { abuse: { email: 'abuse@cloudflare.com', phone: '+1-650-319-8930' } },
      },
      registrar: null,
      providers_tried: [AGGREGATOR_OK],
    });
  });

  it('an IPv6 network through the bootstrap (longest prefix in ipv6.json, base URL without trailing slash)', async () => {
    aggregator.fault = 'timeout';
    const a = await buildTestApp({
      ca,
      config: {
        dnsResolvers: [dns.doh],
        rdapAggregatorUrl: aggregator.url,
        rdapBootstrapUrl: iana.url,
        providerTimeoutMs: 1500,
        unsafeAllowTargetCidrs: [`${arin.address}/32`],
      },
    });
    const { res, body } = await get(a, 'target=2606:4700:4700::1111&type=ip');
    expect(res.statusCode).toBe(200);
    expect(body.providers_tried).toEqual([aggregatorFailed(/^timeout/), BOOTSTRAP_OK]);
    expect(iana.requests.map((r) => r.path)).toEqual(['/ipv6.json']);
    expect(arin.requests.map((r) => r.path)).toEqual(['/registry/ip/2606:4700:4700::1111']);
  });

  it('an IPv4 network (APNIC)', async () => {
    const { body } = await get(await app(), 'target=1.1.1.1&type=ip');
    expect(body.registry).toMatchObject({ cidrs: ['1.1.1.0/24'], country: 'AU', ip_version: 'v4' });
  });

  it('private and special-use addresses, and malformed targets, are 400 without any upstream request', async () => {
    const a = await app();
    for (const query of [
      'target=10.1.2.3&type=ip',
      'target=127.0.0.1&type=ip',
      'target=0x7f.1&type=ip',
      'target=%5B%3A%3Affff%3A192.168.0.1%5D&type=ip',
      'target=fe80::1&type=ip',
      'target=2001:db8::1&type=ip',
      'target=example.com&type=ip',
      'target=1.1.1.1&type=domain',
      'target=bad_label.com&type=domain',
      'target=example.com&type=asn',
      'target=example.com',
      'type=domain',
    ]) {
      const { res, body } = await get(a, query);
      expect(res.statusCode, query).toBe(400);
      expect(body.error, query).toMatch(/target|type/);
    }
    expect(aggregator.count()).toBe(0);
  });
});

describe.skipIf(!hasShared)('RDAP in the service description', () => {
  it('/api/providers lists the aggregator as primary and the bootstrap as fallback for rdap', async () => {
    const a = await app();
    const { providers } = (await a.inject('/api/providers')).json() as {
      providers: { id: string; roles: Record<string, string> }[];
    };
    expect(providers.find((p) => p.id === 'rdap-org')?.roles.rdap).toBe('primary');
    expect(providers.find((p) => p.id === 'iana-rdap-bootstrap')?.roles.rdap).toBe('fallback');
  });

  it('/openapi.json documents both 404s and the 502', async () => {
    const doc = (await (await app()).inject('/openapi.json')).json();
    const responses = doc.paths['/api/rdap'].get.responses;
    expect(responses['404'].description).toMatch(/not registered/);
    expect(responses['404'].description).toMatch(/publishes no RDAP service/);
    expect(responses['404'].content['application/json'].schema.required).toContain('error');
    expect(Object.keys(responses)).toEqual(expect.arrayContaining(['200', '400', '404', '429', '502']));
  });
});
