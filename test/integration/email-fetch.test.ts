/**
 * The HTTPS fetches of GET /api/email-security (MTA-STS policy, BIMI logo)
 * go through outbound safety: a name resolving outside the allowed range is
 * refused without a connection, redirects are not followed, the certificate
 * must be valid for the host, and size is capped. Targets listen on
 * 127.0.0.x:443 with test-CA certificates; only the main target's own
 * address is allowed (UNSAFE_ALLOW_TARGET_CIDRS), so the canary counts as
 * private.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeDnsServer, startFakeDnsServer } from '../fakes/dns-server.js';
import { type HttpTarget, startHttpTarget } from '../fakes/http-targets.js';
import { getTestPki } from '../fakes/test-ca.js';
import { fixtureText, sharedZones } from '../fixtures/email/zones.js';
import { buildTestApp } from '../helper.js';
import { makeZone } from '../unit/features/email/zone-resolver.js';

/** Where a refused name points: must never see a connection. Not 127.9.9.9, which the net-safety tests use. */
const CANARY = '127.9.5.9';
const NAMES = ['private', 'redirect', 'badcert', 'notfound', 'huge', 'badsvg'];
const POLICY = 'version: STSv1\nmode: enforce\nmx: *.fetch.test\nmax_age: 1209600\n';

let dns: FakeDnsServer;
let target: HttpTarget;
let wrongName: HttpTarget;
let canary: HttpTarget;
let ca: string;

beforeAll(async () => {
  const pki = await getTestPki();
  ca = pki.caPem;
  target = await startHttpTarget({
    protocol: 'https',
    names: [...NAMES.map((n) => `mta-sts.${n}.fetch.test`), 'logo.fetch.test'],
    routes: {
      '/.well-known/mta-sts.txt': (req) => {
        if (req.host?.startsWith('mta-sts.redirect.'))
          return { status: 301, redirect: 'https://logo.fetch.test/elsewhere' };
        if (req.host?.startsWith('mta-sts.notfound.')) return { status: 404, body: 'no' };
        if (req.host?.startsWith('mta-sts.huge.')) return { streamBytes: 200 * 1024 };
        return { body: POLICY };
      },
      '/bad.svg': { headers: { 'content-type': 'image/svg+xml' }, body: fixtureText('logo-bad.svg') },
    },
  });
  wrongName = await startHttpTarget({
    protocol: 'https',
    cert: await pki.issue({ dnsNames: ['someone-else.test'] }),
  });
  canary = await startHttpTarget({
    protocol: 'https',
    address: CANARY,
    names: ['mta-sts.private.fetch.test'],
  });
  const rows: [string, string, unknown][] = [['mx.fetch.test', 'A', '192.0.2.50']];
  for (const name of NAMES) {
    const d = `${name}.fetch.test`;
    const address = name === 'private' ? CANARY : name === 'badcert' ? wrongName.address : target.address;
    rows.push(
      [d, 'MX', { preference: 10, exchange: 'mx.fetch.test' }],
      [d, 'TXT', 'v=spf1 mx -all'],
      [`_dmarc.${d}`, 'TXT', `v=DMARC1; p=reject; rua=mailto:d@${d}`],
      [`_mta-sts.${d}`, 'TXT', 'v=STSv1; id=1'],
      [`mta-sts.${d}`, 'A', address],
    );
  }
  rows.push(
    ['default._bimi.badsvg.fetch.test', 'TXT', 'v=BIMI1; l=https://logo.fetch.test/bad.svg'],
    ['logo.fetch.test', 'A', target.address],
  );
  dns = await startFakeDnsServer({ zones: [...sharedZones(), makeZone('fetch.test', rows)] });
});

afterAll(async () => {
  await Promise.all([dns?.close(), target?.close(), wrongName?.close(), canary?.close()]);
});

async function check(name: string, id: 'mta_sts' | 'bimi') {
  const a = await buildTestApp({
    ca,
    config: {
      dnsResolvers: [dns.doh],
      unsafeAllowTargetCidrs: [`${target.address}/32`, `${wrongName.address}/32`],
      rateLimitExpensive: { points: 1000, seconds: 60 },
    },
  });
  const res = await a.inject(`/api/email-security?domain=${name}.fetch.test`);
  expect(res.statusCode).toBe(200);
  const body = res.json();
  const check = (
    body.checks as { id: string; status: string; points: number; findings: { message: string }[] }[]
  ).find((c) => c.id === id)!;
  return { ...check, details: body.details[id] as Record<string, unknown> };
}

describe('MTA-STS policy fetch through outbound safety', () => {
  it('the reference case (a domain whose policy is fine): fetched, enforce, every MX covered', async () => {
    const sts = await check('badsvg', 'mta_sts');
    expect(sts).toMatchObject({
      status: 'pass',
      points: 10,
      details: { http_status: 200, all_mx_covered: true },
    });
  });

  it('a policy host resolving to a non-public address is refused without any connection', async () => {
    const sts = await check('private', 'mta_sts');
    expect(sts).toMatchObject({ status: 'fail', points: 0 });
    expect(sts.findings.map((f) => f.message)).toEqual([
      `Fetching https://mta-sts.private.fetch.test/.well-known/mta-sts.txt failed: host mta-sts.private.fetch.test resolves to ${CANARY}, which is not a public address (loopback).`,
    ]);
    expect(canary.connections).toBe(0);
  });

  it('a redirect is reported, not followed (RFC 8461 §3.3)', async () => {
    target.reset();
    const sts = await check('redirect', 'mta_sts');
    expect(sts).toMatchObject({ status: 'fail', details: { http_status: 301 } });
    expect(sts.findings.map((f) => f.message)).toEqual([
      'https://mta-sts.redirect.fetch.test/.well-known/mta-sts.txt answered 301 (redirect to https://logo.fetch.test/elsewhere); redirects must not be followed.',
    ]);
    expect(target.requests.map((r) => r.path)).toEqual(['/.well-known/mta-sts.txt']);
  });

  it('a certificate for another name fails the fetch at the TLS handshake', async () => {
    const sts = await check('badcert', 'mta_sts');
    expect(sts.status).toBe('fail');
    expect(sts.findings[0]!.message).toMatch(
      /^Fetching https:\/\/mta-sts\.badcert\.fetch\.test\/\.well-known\/mta-sts\.txt failed: tls handshake: /,
    );
    expect(wrongName.requests).toEqual([]);
  });

  it('HTTP 404 is no policy', async () => {
    const sts = await check('notfound', 'mta_sts');
    expect(sts).toMatchObject({ status: 'fail', details: { http_status: 404 } });
  });

  it('a policy over 64 KB is cut off and refused', async () => {
    const sts = await check('huge', 'mta_sts');
    expect(sts.status).toBe('fail');
    expect(sts.findings.map((f) => f.message)).toContain('The policy is larger than 64 KB.');
  });
});

describe('BIMI logo fetch', () => {
  it('a logo that breaks SVG Tiny PS is fetched, checked, and loses its points', async () => {
    const bimi = await check('badsvg', 'bimi');
    expect(bimi).toMatchObject({
      status: 'fail',
      points: 2,
      details: { svg: { http_status: 200, valid: false } },
    });
    expect(bimi.findings.map((f) => f.message)).toEqual([
      'The root <svg> must have version="1.2", not "1.1".',
      'The root <svg> must have baseProfile="tiny-ps".',
      'The root <svg> must not have an x= attribute.',
      'The root <svg> must not have a y= attribute.',
      'The SVG must have a non-empty <title>.',
      '<script> is not allowed.',
      '<image xlink:href="https://tracker.example/pixel.png"> refers to an external resource.',
      'Event handler attribute onclick= on <rect> is not allowed.',
      'The logo is 64×32; BIMI logos should be square.',
      'No VMC (empty a=): the largest mailbox providers show BIMI logos only with a mark certificate.',
    ]);
  });
});
