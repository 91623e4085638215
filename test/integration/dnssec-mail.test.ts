/**
 * netdiag's own DNSSEC verdicts where mail depends on them (issue 32), on a real signed hierarchy
 * (test/fakes/bind-hierarchy.ts: BIND-signed zones under a root of our own, served by named):
 *
 * - /api/email-security: a signed domain scores DNSSEC as a strength, an unsigned one is left out
 *   with a recommendation and keeps its grade, a broken one (expired.test: every signature expired)
 *   loses the points and is capped at D; behind a validating resolver (unbound, which answers
 *   SERVFAIL for it) that is a 200 naming the broken link, the records read as published, where it
 *   was a 502.
 * - /api/spf: the same SERVFAIL is a temperror with the broken link and the result on the records
 *   as published.
 * - /api/mail-tls: TLSA records validated by netdiag while the configured DoH resolver
 *   (test/fakes/dns-server.ts) sets no AD bit: valid, mismatch, insecure, bogus; and a bogus MX
 *   behind a validating resolver tested as published, with the finding.
 *
 * Every mail zone gets MX `mx.<zone>` at a fake mail server on 127.0.0.x:25 with a certificate for
 * it, SPF `v=spf1 mx -all`, DMARC reject, and a DANE-EE TLSA record of the server's key (a wrong
 * one in ed25519.test). Runs where named, bind9-utils and (for the validating resolver) unbound
 * are installed and the process is root, as dnssec-api.test.ts; otherwise skips, saying why.
 */
import { createHash, X509Certificate } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Config } from '../../src/config/index.js';
import { type BindHierarchy, bindHierarchyUnavailable, startBindHierarchy } from '../fakes/bind-hierarchy.js';
import { type FakeDnsServer, startFakeDnsServer } from '../fakes/dns-server.js';
import { type FakeRecord, testZone } from '../fakes/dns-zones.js';
import { startValidatingUnbound, unboundUnavailable, type ValidatingUnbound } from '../fakes/dnssec-peers.js';
import { type FakeSmtpServer, startFakeSmtpServer } from '../fakes/smtp-server.js';
import { getTestPki } from '../fakes/test-ca.js';
import { buildTestApp } from '../helper.js';

const unavailable = bindHierarchyUnavailable();
const noUnbound = unavailable ?? unboundUnavailable();
if (unavailable) console.warn(`dnssec-mail: skipped: ${unavailable}`);
else if (noUnbound) console.warn(`dnssec-mail: the validating-resolver cases skipped: ${noUnbound}`);

/** signed.example secure; unsigned.test unsigned; expired.test bogus; ed25519.test secure, its TLSA stale. */
const ZONES = ['signed.example', 'unsigned.test', 'expired.test', 'ed25519.test'] as const;
const STALE = 'ed25519.test';
const EXPIRED = { zone: 'expired.test', code: 'signature_expired' };

const spkiSha256 = (pem: string) =>
  createHash('sha256')
    .update(new X509Certificate(pem).publicKey.export({ type: 'spki', format: 'der' }))
    .digest('hex')
    .toUpperCase();

describe.skipIf(unavailable !== undefined)('netdiag’s own DNSSEC verdicts in the mail endpoints', () => {
  let hierarchy: BindHierarchy;
  let unbound: ValidatingUnbound | undefined;
  let doh: FakeDnsServer;
  let smtp: FakeSmtpServer;
  let caPem: string;

  beforeAll(async () => {
    const pki = await getTestPki();
    caPem = pki.caPem;
    const cert = await pki.issue({ dnsNames: ZONES.map((z) => `mx.${z}`) });
    for (let i = 0; i < 200 && !smtp; i++) {
      const host = `127.0.0.${40 + ((process.pid + i) % 200)}`;
      smtp = await startFakeSmtpServer({ cert, host, port: 25, hostname: `mx.${ZONES[0]}` }).catch(
        () => undefined as unknown as FakeSmtpServer,
      );
    }
    if (!smtp) throw new Error('no free 127.0.0.x:25');
    const digest = spkiSha256(cert.certPem);
    const stale = spkiSha256((await pki.issue({ dnsNames: [`mx.${STALE}`] })).certPem);
    const tlsaOf = (zone: string) => (zone === STALE ? stale : digest);
    hierarchy = await startBindHierarchy({
      records: Object.fromEntries(
        ZONES.map((zone) => [
          zone,
          [
            '@ IN MX 10 mx',
            `mx IN A ${smtp.host}`,
            `_25._tcp.mx IN TLSA 3 1 1 ${tlsaOf(zone)}`,
            '@ IN TXT "v=spf1 mx -all"',
            `_dmarc IN TXT "v=DMARC1; p=reject; rua=mailto:dmarc@${zone}"`,
          ],
        ]),
      ),
    });
    if (!noUnbound) unbound = await startValidatingUnbound(hierarchy);
    // The same records from a resolver that validates nothing and never sets AD.
    const record = (name: string, type: string, data: unknown): FakeRecord => ({ name, type, data });
    doh = await startFakeDnsServer({
      zones: ZONES.map((zone) =>
        testZone(zone, [
          record(zone, 'MX', { preference: 10, exchange: `mx.${zone}` }),
          record(`mx.${zone}`, 'A', smtp.host),
          record(`_25._tcp.mx.${zone}`, 'TLSA', {
            usage: 3,
            selector: 1,
            matchingType: 1,
            certificate: Buffer.from(tlsaOf(zone), 'hex'),
          }),
          record(zone, 'TXT', ['v=spf1 mx -all']),
          record(`_dmarc.${zone}`, 'TXT', [`v=DMARC1; p=reject; rua=mailto:dmarc@${zone}`]),
        ]),
      ),
    });
    doh.set({ ad: false });
  }, 120_000);

  afterAll(async () => {
    await Promise.all([unbound?.close(), doh?.close(), smtp?.close()]);
    await hierarchy?.close();
  });

  /** The app with netdiag's engine at the hierarchy's root, asking `resolver` for everything else. */
  const app = (resolver: 'unbound' | 'recursive' | 'doh', config: Partial<Config> = {}) =>
    buildTestApp({
      ca: caPem,
      config: {
        dnsResolvers: [
          resolver === 'doh'
            ? doh.doh
            : `udp://${resolver === 'unbound' ? unbound!.address : hierarchy.serverAddresses.resolver}:53`,
        ],
        dnsRootHints: hierarchy.rootHints,
        dnssecTrustAnchors: hierarchy.trustAnchorFile,
        unsafeAllowTargetCidrs: [hierarchy.cidr, `${smtp.host}/32`],
        rateLimitExpensive: { points: 1000, seconds: 60 },
        rateLimitGeneral: { points: 1000, seconds: 60 },
        smtpHeloName: 'probe.netdiag.test',
        ...config,
      },
    });

  type Check = {
    id: string;
    status: string;
    points: number;
    max_points: number;
    findings: { message: string }[];
  };
  const emailSecurity = async (resolver: 'unbound' | 'recursive', domain: string) => {
    const res = await (await app(resolver)).inject({ url: '/api/email-security', query: { domain } });
    const body = res.json();
    const dnssec = body.checks?.find((c: Check) => c.id === 'dnssec') as Check | undefined;
    return { res, body, dnssec, line: dnssec && [dnssec.status, dnssec.points, dnssec.max_points] };
  };

  describe('GET /api/email-security', () => {
    it.skipIf(noUnbound !== undefined)(
      'a signed domain: DNSSEC a strength, 10 of 10, DANE on its MX host (70 of 110 → 64, C)',
      async () => {
        const { res, body, line } = await emailSecurity('unbound', 'signed.example');
        expect(res.statusCode, res.body.slice(0, 300)).toBe(200);
        expect(line).toEqual(['pass', 10, 10]);
        expect(body).toMatchObject({
          score: 64,
          grade: 'C',
          scoring: { earned: 70, possible: 110, caps: [] },
        });
        expect(body.details.dnssec).toMatchObject({
          state: 'secure',
          reason: null,
          dane: 'all',
          answers: [
            { name: 'signed.example', type: 'MX', status: 'secure' },
            { name: 'signed.example', type: 'TXT', status: 'secure' },
            { name: '_dmarc.signed.example', type: 'TXT', status: 'secure' },
          ],
          mx_hosts: [{ host: 'mx.signed.example', addresses: 'secure', tlsa: 'secure', dane: true }],
        });
        expect(body.recommendations.filter((r: { check: string }) => r.check === 'dnssec')).toEqual([]);
      },
    );

    it.skipIf(noUnbound !== undefined)(
      'an unsigned domain: left out (0 of 0), a low-priority recommendation, the grade it had (60 → C)',
      async () => {
        const { body, line, dnssec } = await emailSecurity('unbound', 'unsigned.test');
        expect(line).toEqual(['warn', 0, 0]);
        expect(body).toMatchObject({ score: 60, grade: 'C', scoring: { earned: 60, possible: 100 } });
        expect(body.details.dnssec).toMatchObject({
          state: 'insecure',
          reason: { zone: 'unsigned.test', code: 'no_ds' },
          mx_hosts: [{ host: 'mx.unsigned.test', addresses: 'insecure', tlsa: 'insecure', dane: false }],
        });
        expect(dnssec!.findings.map((f) => f.message)).toEqual([
          expect.stringMatching(
            /^unsigned\.test is not DNSSEC-signed: the chain of trust ends at unsigned\.test \(no_ds: /,
          ),
          expect.stringMatching(
            /^TLSA records at _25\._tcp\.mx\.unsigned\.test are published in a zone that is not signed/,
          ),
        ]);
        expect(
          body.recommendations
            .filter((r: { check: string }) => r.check === 'dnssec')
            .map((r: { priority: string; text: string }) => [r.priority, r.text.slice(0, 40)]),
        ).toEqual([
          ['low', 'Optional: sign unsigned.test with DNSSEC'],
          ['low', 'Sign the zone holding _25._tcp.mx.unsign'],
        ]);
      },
    );

    it.skipIf(noUnbound !== undefined)(
      'a bogus domain behind a validating resolver: 200 (was 502), the broken link named, its records read as published, 0 of 10 and capped at D',
      async () => {
        const { res, body, line, dnssec } = await emailSecurity('unbound', 'expired.test');
        expect(res.statusCode, res.body.slice(0, 400)).toBe(200);
        // What the resolver said, kept in the attribution; the answers came from netdiag's own resolution.
        expect(body.providers_tried).toEqual([
          expect.objectContaining({ status: 'failed', error: expect.stringContaining('SERVFAIL') }),
          { id: 'dns-engine', name: 'netdiag iterative resolver (from the root)', status: 'ok' },
        ]);
        expect(line).toEqual(['fail', 0, 10]);
        expect(body.details.dnssec).toMatchObject({ state: 'bogus', reason: EXPIRED });
        expect(dnssec!.findings[0]!.message).toMatch(
          /^DNSSEC bogus: the chain of trust of expired\.test MX, expired\.test TXT, _dmarc\.expired\.test TXT is broken at expired\.test \(signature_expired: /,
        );
        // Read as published: SPF and DMARC are what the domain's servers serve.
        const line2 = (id: string) => {
          const c = body.checks.find((x: Check) => x.id === id) as Check;
          return [c.status, c.points, c.max_points];
        };
        expect(line2('spf')).toEqual(['pass', 20, 20]);
        expect(line2('dmarc')).toEqual(['pass', 35, 35]);
        expect(line2('mx')).toEqual(['pass', 5, 5]);
        expect(body).toMatchObject({ score: 55, grade: 'D', scoring: { earned: 60, possible: 110 } });
        expect(body.scoring.caps).toContainEqual(
          expect.objectContaining({ check: 'dnssec', max_grade: 'D' }),
        );
        expect(body.recommendations[0]).toMatchObject({ check: 'dnssec', priority: 'high' });
        expect(body.recommendations[0].text).toMatch(
          /^Repair DNSSEC for expired\.test now: its chain of trust is broken at expired\.test/,
        );
      },
    );

    it('behind a resolver that does not validate (no SERVFAIL, no AD): the same verdicts, netdiag’s own', async () => {
      const signed = await emailSecurity('recursive', 'signed.example');
      expect(signed.line).toEqual(['pass', 10, 10]);
      const bogus = await emailSecurity('recursive', 'expired.test');
      expect(bogus.res.statusCode).toBe(200);
      expect(bogus.line).toEqual(['fail', 0, 10]);
      expect(bogus.body.details.dnssec).toMatchObject({ state: 'bogus', reason: EXPIRED });
      // Nothing was refused, so nothing was read around the resolver.
      expect(bogus.body.providers_tried.map((p: { id: string }) => p.id)).not.toContain('dns-engine');
    });

    it('a name the check validated is not validated again: GET /api/dnssec finds it in the cache', async () => {
      const server = await app('recursive');
      await server.inject({ url: '/api/email-security', query: { domain: 'signed.example' } });
      const tlsa = await server.inject({
        url: '/api/dnssec',
        query: { target: '_25._tcp.mx.signed.example', type: 'TLSA' },
      });
      expect(tlsa.json()).toMatchObject({ status: 'secure' });
      expect(tlsa.headers['x-service-cache']).toBe('HIT');
      const mx = await server.inject({ url: '/api/dnssec', query: { target: 'signed.example', type: 'MX' } });
      expect(mx.headers['x-service-cache']).toBe('HIT');
    });
  });

  describe('GET /api/spf', () => {
    it.skipIf(noUnbound !== undefined)(
      'a SERVFAIL that is DNSSEC-bogus: temperror, the broken link named, and the result on the records as published',
      async () => {
        const server = await app('unbound');
        const res = await server.inject({
          url: '/api/spf',
          query: { ip: smtp.host, sender: 'alice@expired.test' },
        });
        expect(res.statusCode).toBe(200);
        expect(res.json()).toMatchObject({
          result: 'temperror',
          dnssec: {
            status: 'bogus',
            reason: EXPIRED,
            questions: [{ name: 'expired.test', type: 'TXT' }],
            unvalidated_result: 'pass',
            message: expect.stringMatching(
              /^DNSSEC bogus: TXT expired\.test fails netdiag's own validation; the chain of trust is broken at expired\.test \(signature_expired: .*Receivers whose resolver validates get SERVFAIL and conclude temperror; a receiver that does not validate reads the records as published and concludes pass\.$/,
            ),
          },
        });
        const signed = (
          await server.inject({ url: '/api/spf', query: { ip: smtp.host, sender: 'alice@signed.example' } })
        ).json();
        expect(signed.result).toBe('pass');
        expect(signed.dnssec).toBeUndefined();
      },
    );
  });

  describe('GET /api/mail-tls', () => {
    const mailTls = async (domain: string, resolver: 'doh' | 'unbound' = 'doh') => {
      const res = await (await app(resolver)).inject({ url: '/api/mail-tls', query: { domain } });
      return { res, body: res.json() };
    };

    it('a TLSA record netdiag proves secure is `valid`, though the configured resolver sets no AD', async () => {
      const server = await app('doh');
      const dns = (
        await server.inject({ url: '/api/dns', query: { target: 'signed.example', type: 'MX' } })
      ).json();
      expect(dns.authenticated_data).toBe(false);
      const body = (
        await server.inject({ url: '/api/mail-tls', query: { domain: 'signed.example' } })
      ).json();
      expect(body.status).toBe('pass');
      expect(body.hosts[0].dane).toMatchObject({
        verdict: 'valid',
        validated: true,
        dnssec: { status: 'secure', reason: null },
        records: [{ result: 'match', matched: 0 }],
      });
    });

    it('a secure TLSA record that does not match the server (stale after a rollover): mismatch, the host fails', async () => {
      const { body } = await mailTls(STALE);
      expect(body.hosts[0].dane).toMatchObject({ verdict: 'mismatch', validated: true });
      expect(body.status).toBe('fail');
    });

    it('TLSA in an unsigned zone: insecure, a warning naming where the chain of trust ends', async () => {
      const { body } = await mailTls('unsigned.test');
      expect(body.hosts[0].dane).toMatchObject({
        verdict: 'insecure',
        validated: false,
        dnssec: { status: 'insecure', reason: { zone: 'unsigned.test', code: 'no_ds' } },
      });
      expect(body.status).toBe('warn');
    });

    it('a bogus TLSA answer: a DANE failure naming the broken link (DANE senders defer)', async () => {
      const { body } = await mailTls('expired.test');
      expect(body.hosts[0].dane).toMatchObject({
        verdict: 'bogus',
        validated: false,
        dnssec: { status: 'bogus', reason: EXPIRED },
      });
      expect(body.hosts[0].dane.findings[0].message).toMatch(
        /^DNSSEC bogus: the TLSA answer at _25\._tcp\.mx\.expired\.test fails netdiag's validation at expired\.test \(signature_expired: /,
      );
      expect(body.hosts[0].status).toBe('fail');
    });

    it.skipIf(noUnbound !== undefined)(
      'a bogus MX behind a validating resolver: 200 (was 502), the finding, and the host tested as published',
      async () => {
        const { res, body } = await mailTls('expired.test', 'unbound');
        expect(res.statusCode, res.body.slice(0, 400)).toBe(200);
        expect(body.status).toBe('fail');
        expect(body.findings[0]).toMatchObject({ severity: 'error' });
        expect(body.findings[0].message).toMatch(
          /^DNSSEC bogus: the MX answer for expired\.test fails netdiag's validation at expired\.test \(signature_expired: /,
        );
        expect(body.hosts[0]).toMatchObject({ host: 'mx.expired.test', status: 'fail' });
        expect(body.hosts[0].addresses[0].smtp.starttls_offered).toBe(true);
        expect(body.hosts[0].dane.verdict).toBe('bogus');
      },
    );
  });

  describe('/api/tls and /api/inspect', () => {
    it.skipIf(noUnbound !== undefined)(
      'a bogus name behind a validating resolver: 200 naming the broken link (was 502), nothing contacted',
      async () => {
        const res = await (await app('unbound')).inject({ url: '/api/tls?target=mx.expired.test' });
        expect(res.statusCode, res.body.slice(0, 400)).toBe(200);
        const { tls } = res.json();
        expect(tls).toMatchObject({ status: 'error', stage: 'dns' });
        expect(tls.error).toMatch(
          /^mx\.expired\.test is DNSSEC-bogus by netdiag's own validation: the chain breaks at expired\.test \(signature_expired\): .* no connection was made\.$/,
        );
        // Inspect too: every part says why, nothing is contacted.
        const inspected = await (await app('unbound')).inject({ url: '/api/inspect?target=mx.expired.test' });
        expect(inspected.statusCode, inspected.body.slice(0, 400)).toBe(200);
        const body = inspected.json();
        expect(body).toMatchObject({ target: 'mx.expired.test', addresses: [], http: { status: 'error' } });
        expect(body.http.error).toMatch(
          /DNSSEC-bogus by netdiag's own validation: the chain breaks at expired\.test/,
        );
        expect(body.tls).toMatchObject({ status: 'error', stage: 'dns' });
      },
    );
  });
});
