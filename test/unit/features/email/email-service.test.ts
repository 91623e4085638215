/**
 * The service as a whole, without sockets: fixture zones answered by the
 * fake DNS server's lookup logic, a fake fetcher, a real CachedLoader over a
 * MemoryCache with a fake clock. Covers what the scenario tests cannot reach
 * from outside: round trips, partial failures, caching and input checks.
 */
import { describe, expect, it, vi } from 'vitest';
import { CachedLoader } from '../../../../src/cache/cached.js';
import { MemoryCache } from '../../../../src/cache/memory.js';
import { AppError } from '../../../../src/errors.js';
import type { DnssecValidator } from '../../../../src/features/dnssec/verdicts.js';
import type { MarkRoots } from '../../../../src/features/email/bimi.js';
import {
  checkEmailSecurity,
  lookupEmailSecurity,
  parseEmailSecurityInput,
} from '../../../../src/features/email/email.service.js';
import type { ResourceFetcher } from '../../../../src/features/email/resource-fetcher.js';
import { thrownBy } from '../../../expect-error.js';
import type { FakeZone } from '../../../fakes/dns-zones.js';
import { issueVmc, testMarkAuthority } from '../../../fakes/test-vmc.js';
import { fixtureText, scenario, sharedZones } from '../../../fixtures/email/zones.js';
import { makeZone, RoundGate, zoneResolver, zoneValidator } from './zone-resolver.js';

const STRONG_POLICY = 'version: STSv1\nmode: enforce\nmx: *.strong.email.test\nmax_age: 1209600\n';

/** The strong fixture's HTTPS resources, the test Mark Verifying Authority its VMC chains to, its (signed) zones' validator. */
async function strongDeps(): Promise<{
  fetcher: ResourceFetcher;
  markRoots: MarkRoots;
  dnssec: DnssecValidator;
}> {
  const vmc = await issueVmc({ domains: ['strong.email.test'] });
  const fetcher: ResourceFetcher = async ({ url }) => {
    const body = url.endsWith('mta-sts.txt')
      ? STRONG_POLICY
      : url.endsWith('.svg')
        ? fixtureText('logo.svg')
        : vmc;
    return {
      ok: true,
      response: {
        status: 200,
        headers: { 'content-type': 'text/plain' },
        body: Buffer.from(body),
        truncated: false,
      },
    };
  };
  return { fetcher, markRoots: (await testMarkAuthority()).roots, dnssec: zoneValidator(zonesOf('strong')) };
}

const zonesOf = (name: string): FakeZone[] => [
  ...sharedZones(),
  scenario(name, { sts: '127.0.0.2', bimi: '127.0.0.2' }).zone,
];

describe('input', () => {
  it.each([
    [{ domain: 'foo..bar' }, 'domain has an empty label'],
    [{ domain: 'exa mple.com' }, 'domain is not a valid domain name'],
    // normalizeDomain (shared with /api/dns) words these two; only the parameter it names matters here.
    [{ domain: '_dmarc.example.com' }, expect.stringMatching(/^domain has "_" in label "_dmarc"/)],
    [{ domain: '192.0.2.1' }, expect.stringMatching(/^domain must be a domain name/)],
    [
      { domain: 'example.com', selector: 'a b' },
      'selector "a b" may only contain letters, digits, ".", "_" and "-", with no empty label',
    ],
    [{ domain: 'example.com', selector: 'a,b,c,d,e,f' }, 'selector lists more than 5 selectors'],
    [
      { domain: `${'a'.repeat(60)}.${'b'.repeat(60)}.${'c'.repeat(60)}.com`, selector: 'x'.repeat(63) },
      expect.stringMatching(/^selector "x+" is too long for /),
    ],
  ])('%j → 400: %s', (query, message) => {
    const error = thrownBy(() => parseEmailSecurityInput(query), AppError);
    expect(error).toMatchObject({ statusCode: 400, code: 'bad_request', message });
  });

  it('normalizes the domain (IDN, case, trailing dot) and the selectors', () => {
    expect(parseEmailSecurityInput({ domain: 'Bücher.Example.', selector: 'S1,s1, K2' })).toEqual({
      domain: 'xn--bcher-kva.example',
      selectors: ['s1', 'k2'],
    });
  });
});

describe('round trips: independent lookups run together', () => {
  it('the strong domain needs 3 rounds of DNS (its SPF tree depth + 1) for ~40 questions', async () => {
    const gate = new RoundGate();
    const dns = zoneResolver(zonesOf('strong'), { gate });
    const body = await gate.run(
      checkEmailSecurity(
        { dns, ...(await strongDeps()), clock: Date.now },
        { domain: 'strong.email.test', selectors: [] },
      ),
    );
    expect(body.score).toBe(100);
    // root → _spf.provider.test → _spf2.provider.test; DKIM's 27 selectors (16 at a time) fit in the same rounds.
    expect(gate.rounds).toBe(3);
    expect(body.dns_queries).toBeGreaterThan(35);
    expect(body.dns_queries).toBe(dns.asked.length);
  });
});

describe('failures', () => {
  it('a failed lookup makes only its check `error`, and its points leave the maximum', async () => {
    const dns = zoneResolver(zonesOf('strong'), { fail: (name) => name === '_mta-sts.strong.email.test' });
    const body = await checkEmailSecurity(
      { dns, ...(await strongDeps()), clock: Date.now },
      { domain: 'strong.email.test', selectors: [] },
    );
    const sts = body.checks.find((c) => c.id === 'mta_sts')!;
    expect(sts).toMatchObject({ status: 'error', points: 0, max_points: 0 });
    expect(sts.summary).toBe(
      'The _mta-sts lookup failed (timeout: no answer within 5000 ms); this check is left out of the score.',
    );
    // The strong domain is signed: DNSSEC earns its 10 (issue 32).
    expect(body).toMatchObject({ score: 100, scoring: { earned: 100, possible: 100 } });
  });

  it('every lookup failing is a 502 carrying providers_tried', async () => {
    const dns = zoneResolver(zonesOf('strong'), { fail: () => true });
    const run = checkEmailSecurity(
      { dns, ...(await strongDeps()), clock: Date.now },
      { domain: 'strong.email.test', selectors: [] },
    );
    await expect(run).rejects.toMatchObject({
      statusCode: 502,
      code: 'upstream_failed',
      providersTried: [{ id: 'doh-fake', status: 'failed', error: 'timeout: no answer within 5000 ms' }],
    });
  });

  it('the MTA-STS policy of a null-MX domain is not fetched', async () => {
    const fetcher = vi.fn<ResourceFetcher>();
    const zones = [
      ...sharedZones(),
      makeZone('nomail.test', [
        ['nomail.test', 'MX', { preference: 0, exchange: '.' }],
        ['_mta-sts.nomail.test', 'TXT', 'v=STSv1; id=1'],
      ]),
    ];
    const body = await checkEmailSecurity(
      { dns: zoneResolver(zones), fetcher, clock: Date.now, dnssec: zoneValidator(zones) },
      { domain: 'nomail.test', selectors: [] },
    );
    expect(fetcher).not.toHaveBeenCalled();
    expect(body.checks.find((c) => c.id === 'mta_sts')).toMatchObject({
      status: 'not_applicable',
      max_points: 0,
    });
  });
});

describe('cache (300 s, keyed on domain and selectors; partial failures not stored)', () => {
  it('a complete answer is reused for 300 s; another selector is another key', async () => {
    let now = 1_700_000_000_000;
    const clock = () => now;
    const loader = new CachedLoader(new MemoryCache({ clock }), { clock });
    const dns = zoneResolver(zonesOf('strong'));
    const deps = { dns, ...(await strongDeps()), clock, loader };
    const first = await lookupEmailSecurity(deps, { domain: 'strong.email.test' });
    expect(first.cache).toEqual({ hit: false, maxAge: 300, expiresAt: 1_700_000_000_000 + 300_000 });
    const asked = dns.asked.length;
    now += 299_000;
    const again = await lookupEmailSecurity(deps, { domain: 'STRONG.email.test.' });
    expect(again.cache).toEqual({ hit: true, maxAge: 1, expiresAt: 1_700_000_000_000 + 300_000 });
    expect(again.body).toEqual(first.body);
    expect(dns.asked.length).toBe(asked);
    expect(
      (await lookupEmailSecurity(deps, { domain: 'strong.email.test', selector: 'mine' })).cache.hit,
    ).toBe(false);
    now += 2_000;
    expect((await lookupEmailSecurity(deps, { domain: 'strong.email.test' })).cache.hit).toBe(false);
  });

  it('an answer with an `error` check is not cached', async () => {
    const clock = () => 1_700_000_000_000;
    const loader = new CachedLoader(new MemoryCache({ clock }), { clock });
    const dns = zoneResolver(zonesOf('mx-only'), {
      fail: (name) => name === '_smtp._tls.mx-only.email.test',
    });
    const deps = {
      dns,
      fetcher: vi.fn<ResourceFetcher>(),
      clock,
      loader,
      dnssec: zoneValidator(zonesOf('mx-only')),
    };
    const first = await lookupEmailSecurity(deps, { domain: 'mx-only.email.test' });
    expect(first.cache).toEqual({ hit: false, maxAge: 0, expiresAt: 0 });
    expect((await lookupEmailSecurity(deps, { domain: 'mx-only.email.test' })).cache.hit).toBe(false);
  });
});

describe('attribution', () => {
  it('names the resolver that answered', async () => {
    const body = await checkEmailSecurity(
      {
        dns: zoneResolver(zonesOf('mx-only')),
        dnssec: zoneValidator(zonesOf('mx-only')),
        fetcher: vi.fn<ResourceFetcher>(),
        clock: () => Date.UTC(2024, 5, 1),
      },
      { domain: 'mx-only.email.test', selectors: [] },
    );
    expect(body).toMatchObject({
      source: 'Fake DoH',
      source_id: 'doh-fake',
      providers_tried: [{ id: 'doh-fake', name: 'Fake DoH', status: 'ok' }],
      checked_at: '2024-06-01T00:00:00.000Z',
    });
  });
});

describe('DNSSEC, by a stand-in for netdiag’s validator (a fixture zone made with `ad` is signed)', () => {
  const run = (name: string, dnssec?: DnssecValidator) => {
    const zones = zonesOf(name);
    return checkEmailSecurity(
      {
        dns: zoneResolver(zones),
        dnssec: dnssec ?? zoneValidator(zones),
        fetcher: vi.fn<ResourceFetcher>(),
        clock: Date.now,
      },
      { domain: scenario(name).domain, selectors: [] },
    );
  };
  const line = (body: Awaited<ReturnType<typeof run>>) => {
    const c = body.checks.find((x) => x.id === 'dnssec')!;
    return [c.status, c.points, c.max_points];
  };

  it('TLSA records in an unsigned zone: a warning and a recommendation, no points either way (60 → C, as unsigned)', async () => {
    const d = 'tlsa-unsigned.email.test';
    const body = await run('dnssec-unsigned-tlsa');
    expect(body).toMatchObject({ score: 60, grade: 'C' });
    expect(line(body)).toEqual(['warn', 0, 0]);
    expect(body.details.dnssec).toMatchObject({
      state: 'insecure',
      dane: 'none',
      mx_hosts: [{ host: `mx.${d}`, addresses: 'insecure', tlsa: 'insecure', dane: false }],
    });
    expect(body.recommendations.filter((r) => r.check === 'dnssec').map((r) => r.priority)).toEqual([
      'low',
      'low',
    ]);
  });

  it('a signed domain with DANE on one of four MX hosts: signing earns 10 of 10 (70 of 110 → 64, C)', async () => {
    const d = 'dane-partial.email.test';
    const body = await run('dnssec-partial-dane');
    expect(body).toMatchObject({ score: 64, grade: 'C', scoring: { earned: 70, possible: 110 } });
    expect(line(body)).toEqual(['warn', 10, 10]);
    expect(body.details.dnssec.mx_hosts.map((h) => [h.host, h.addresses, h.tlsa, h.dane])).toEqual([
      [`mx1.${d}`, 'secure', 'secure', true],
      [`mx2.${d}`, 'secure', 'none', false],
      [`mx3.${d}`, 'secure', 'secure', false],
      ['mx1.provider.test', 'insecure', 'none', false],
    ]);
    expect(body.checks.find((c) => c.id === 'dnssec')!.summary).toBe(
      `${d} is DNSSEC-signed and its answers validate; DANE on 1 of 4 MX hosts.`,
    );
  });

  it('the same domain, its chain of trust broken: 0 of 10 (60 of 110 → 55, D; capped at D besides), the fix first', async () => {
    const d = 'dane-partial.email.test';
    const broken = {
      code: 'ds_digest_mismatch',
      zone: d,
      detail: `the DS for ${d} names its key 12345 by tag and algorithm, but that key's digest is not the DS's`,
    };
    const body = await run(
      'dnssec-partial-dane',
      zoneValidator(zonesOf('dnssec-partial-dane'), { bogus: { [d]: broken } }),
    );
    expect(line(body)).toEqual(['fail', 0, 10]);
    expect(body).toMatchObject({ score: 55, grade: 'D', scoring: { earned: 60, possible: 110 } });
    expect(body.scoring.caps).toContainEqual({
      check: 'dnssec',
      max_grade: 'D',
      max_score: 59,
      reason: 'DNSSEC bogus: validating resolvers refuse the domain’s MX, SPF or DMARC answers',
    });
    expect(body.recommendations[0]).toEqual({
      check: 'dnssec',
      priority: 'high',
      text: `Repair DNSSEC for ${d} now: its chain of trust is broken at ${d} (${broken.detail}). Re-sign the zone, or correct the DS record at the registrar (remove it if the zone is no longer signed); until then validating resolvers refuse ${d}'s MX, SPF and DMARC answers.`,
    });
  });

  it('behind a validating resolver a bogus domain answers SERVFAIL everywhere: still a 200-worthy answer, its records read as published', async () => {
    const d = 'dane-partial.email.test';
    const zones = zonesOf('dnssec-partial-dane');
    const broken = { code: 'signature_expired', zone: d, detail: 'the signatures of the zone expired' };
    const validating = zoneResolver(zones, { servfail: (name) => name === d || name.endsWith(`.${d}`) });
    const body = await checkEmailSecurity(
      {
        dns: validating,
        dnssec: zoneValidator(zones, { bogus: { [d]: broken } }),
        fetcher: vi.fn<ResourceFetcher>(),
        clock: Date.now,
      },
      { domain: d, selectors: [] },
    );
    // Read from netdiag's own resolution: the SPF and DMARC records as published.
    expect(body.checks.find((c) => c.id === 'spf')).toMatchObject({ status: 'pass', points: 20 });
    expect(body.checks.find((c) => c.id === 'dmarc')!.status).not.toBe('error');
    expect(line(body)).toEqual(['fail', 0, 10]);
    expect(body.checks.find((c) => c.id === 'dnssec')!.findings[0]!.message).toMatch(
      /^DNSSEC bogus: the chain of trust of dane-partial\.email\.test MX, .* is broken at dane-partial\.email\.test \(signature_expired: the signatures of the zone expired\)/,
    );
    expect(body.providers_tried).toEqual([
      { id: 'doh-fake', name: 'Fake DoH', status: 'failed', error: 'upstream_error: SERVFAIL' },
      { id: 'dns-engine', name: 'netdiag iterative resolver (from the root)', status: 'ok' },
    ]);
  });
});
