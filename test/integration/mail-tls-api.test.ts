/**
 * GET /api/mail-tls end to end: the real app against the fake DNS server and
 * fake mail servers listening on 127.0.0.x:25 (the port the service uses and
 * no other), with test-CA certificates for their MX names. Each scenario is a
 * domain a mail admin meets in the world: all good with DANE, a TLSA record
 * left stale after a certificate change, no STARTTLS, a private MX address,
 * a null MX.
 */
import { createHash, X509Certificate } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeDnsServer, startFakeDnsServer } from '../fakes/dns-server.js';
import { type FakeRecord, testZone } from '../fakes/dns-zones.js';
import { type HttpTarget, startHttpTarget } from '../fakes/http-targets.js';
import { type FakeSmtpServer, startFakeSmtpServer } from '../fakes/smtp-server.js';
import { getTestPki } from '../fakes/test-ca.js';
import { buildTestApp } from '../helper.js';

let dns: FakeDnsServer;
let sts: HttpTarget;
let caPem: string;
const servers: FakeSmtpServer[] = [];

/** A fake mail server on the first free 127.0.0.x:25. */
async function mailServer(name: string, fault?: Parameters<FakeSmtpServer['set']>[0]['fault']) {
  const pki = await getTestPki();
  const cert = await pki.issue({ dnsNames: [name] });
  for (let i = 0; i < 200; i++) {
    const host = `127.0.0.${40 + ((process.pid + i) % 200)}`;
    try {
      const server = await startFakeSmtpServer({ cert, host, port: 25, hostname: name });
      if (fault) server.set({ fault });
      servers.push(server);
      return { server, cert };
    } catch {
      // taken by a parallel test file: the next address
    }
  }
  throw new Error('no free 127.0.0.x:25');
}

const spkiSha256 = (pem: string) =>
  createHash('sha256')
    .update(new X509Certificate(pem).publicKey.export({ type: 'spki', format: 'der' }))
    .digest('hex')
    .toUpperCase();

const mx = (name: string, exchange: string, preference = 10): FakeRecord => ({
  name,
  type: 'MX',
  data: { preference, exchange },
});
const a = (name: string, address: string): FakeRecord => ({ name, type: 'A', data: address });
const txt = (name: string, text: string): FakeRecord => ({ name, type: 'TXT', data: [text] });
const reverse = (address: string) => `${address.split('.').reverse().join('.')}.in-addr.arpa`;

/** MTA-STS policies by the domain asking (RFC 8461 §3.2), served at mta-sts.<domain>. */
const POLICIES: Record<string, string> = {
  'sts-ok.mailtls.test': 'version: STSv1\nmode: enforce\nmx: *.good.mailtls.test\nmax_age: 86400\n',
  'sts-miss.mailtls.test': 'version: STSv1\nmode: enforce\nmx: mx.elsewhere.test\nmax_age: 86400\n',
};
const tlsa = (name: string, hex: string): FakeRecord => ({
  name,
  type: 'TLSA',
  data: { usage: 3, selector: 1, matchingType: 1, certificate: Buffer.from(hex, 'hex') },
});

beforeAll(async () => {
  caPem = (await getTestPki()).caPem;
  const good = await mailServer('mx1.good.mailtls.test');
  const stale = await mailServer('mx1.stale.mailtls.test');
  const plain = await mailServer('mx1.plain.mailtls.test', 'no-starttls');
  const old = await (await getTestPki()).issue({ dnsNames: ['mx1.stale.mailtls.test'] });
  sts = await startHttpTarget({
    protocol: 'https',
    names: Object.keys(POLICIES).map((d) => `mta-sts.${d}`),
    routes: {
      '/.well-known/mta-sts.txt': (req) => ({
        headers: { 'content-type': 'text/plain' },
        body: POLICIES[(req.host ?? '').replace(/^mta-sts\./, '').replace(/:\d+$/, '')] ?? '',
      }),
    },
  });
  dns = await startFakeDnsServer({
    zones: [
      testZone(
        'mailtls.test',
        [
          mx('good.mailtls.test', 'mx1.good.mailtls.test'),
          a('mx1.good.mailtls.test', good.server.host),
          tlsa('_25._tcp.mx1.good.mailtls.test', spkiSha256(good.cert.certPem)),
          mx('stale.mailtls.test', 'mx1.stale.mailtls.test'),
          a('mx1.stale.mailtls.test', stale.server.host),
          // The TLSA of the key before the certificate was replaced.
          tlsa('_25._tcp.mx1.stale.mailtls.test', spkiSha256(old.certPem)),
          mx('plain.mailtls.test', 'mx1.plain.mailtls.test'),
          a('mx1.plain.mailtls.test', plain.server.host),
          mx('private.mailtls.test', 'mx.private.mailtls.test'),
          a('mx.private.mailtls.test', '10.0.0.25'),
          mx('nullmx.mailtls.test', '.', 0),
          // No MX: the domain itself is the mail host (RFC 5321 §5.1).
          a('implicit.mailtls.test', good.server.host),
          ...Object.keys(POLICIES).flatMap((d) => [
            mx(d, 'mx1.good.mailtls.test'),
            txt(`_mta-sts.${d}`, 'v=STSv1; id=20261124'),
            a(`mta-sts.${d}`, sts.address),
          ]),
        ],
        { ad: true },
      ),
      testZone('127.in-addr.arpa', [
        { name: reverse(good.server.host), type: 'PTR', data: 'mx1.good.mailtls.test' },
        { name: reverse(plain.server.host), type: 'PTR', data: 'not-the-mx.mailtls.test' },
      ]),
    ],
  });
});

afterAll(async () => {
  await Promise.all([dns?.close(), sts?.close(), ...servers.map((s) => s.close())]);
});

function app(config: Record<string, unknown> = {}) {
  return buildTestApp({
    ca: caPem,
    config: {
      dnsResolvers: [dns.udp],
      unsafeAllowTargetCidrs: ['127.0.0.0/8'],
      rateLimitExpensive: { points: 1000, seconds: 60 },
      smtpHeloName: 'probe.netdiag.test',
      ...config,
    },
  });
}

async function mailTls(domain: string, config: Record<string, unknown> = {}) {
  return (await app(config)).inject({ url: '/api/mail-tls', query: { domain } });
}

describe('GET /api/mail-tls', () => {
  it('passes a host with STARTTLS, a certificate for its name and a matching DANE-EE record', async () => {
    const res = await mailTls('good.mailtls.test');
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({
      domain: 'good.mailtls.test',
      status: 'pass',
      mx: { state: 'present', hosts: 1 },
    });
    const [host] = body.hosts;
    expect(host).toMatchObject({ host: 'mx1.good.mailtls.test', preference: 10, status: 'pass' });
    expect(host.dane).toMatchObject({
      verdict: 'valid',
      tlsa_name: '_25._tcp.mx1.good.mailtls.test',
      validated: true,
    });
    const [address] = host.addresses;
    expect(address.smtp.starttls_offered).toBe(true);
    expect(address.smtp.ehlo_extensions).toContain('STARTTLS');
    expect(address.smtp.timings.map((t: { stage: string }) => t.stage)).toEqual([
      'connect',
      'banner',
      'ehlo',
      'starttls',
      'tls handshake',
      'ehlo after tls',
    ]);
    expect(address.tls.connection).toMatchObject({
      authorized: true,
      hostname_matches: true,
      sni: 'mx1.good.mailtls.test',
    });
    expect(address.tls.port).toBe(25);
    expect(body.helo_name).toBe('probe.netdiag.test');
    const session = servers[0]!.sessions.at(-1)!;
    expect(session.commands[0]).toBe('EHLO probe.netdiag.test');
    expect(session.commands.some((c) => /^(MAIL|RCPT|DATA)/i.test(c))).toBe(false);
    expect(body.providers_tried.length).toBeGreaterThan(0);
  });

  it('fails a host whose TLSA record was left behind by a certificate change (DANE mismatch)', async () => {
    const body = (await mailTls('stale.mailtls.test')).json();
    expect(body.status).toBe('fail');
    expect(body.hosts[0].dane.verdict).toBe('mismatch');
    expect(body.hosts[0].findings.map((f: { message: string }) => f.message).join('\n')).toMatch(
      /No usable TLSA record at _25\._tcp\.mx1\.stale\.mailtls\.test matches/,
    );
  });

  it('fails a host that does not offer STARTTLS, naming the stage', async () => {
    const body = (await mailTls('plain.mailtls.test')).json();
    expect(body.status).toBe('fail');
    const [address] = body.hosts[0].addresses;
    expect(address.smtp).toMatchObject({
      starttls_offered: false,
      failure: { stage: 'starttls', kind: 'protocol' },
    });
    expect(address.tls).toBeNull();
    expect(body.hosts[0].findings[0]).toMatchObject({ severity: 'error', rfc: 'RFC 3207' });
  });

  it('never contacts a private MX address: it is reported as refused', async () => {
    const body = (await mailTls('private.mailtls.test')).json();
    expect(body.status).toBe('refused');
    expect(body.hosts[0].addresses[0]).toMatchObject({ address: '10.0.0.25', status: 'refused', smtp: null });
  });

  it('answers a null MX plainly: the domain accepts no mail', async () => {
    const body = (await mailTls('nullmx.mailtls.test')).json();
    expect(body).toMatchObject({ status: 'no_mail', mx: { state: 'null_mx' }, hosts: [] });
  });

  it('confirms the reverse name of an address when it resolves back (FCrDNS), and says so when it does not', async () => {
    const good = (await mailTls('good.mailtls.test')).json();
    expect(good.hosts[0].addresses[0]).toMatchObject({ ptr: ['mx1.good.mailtls.test'], fcrdns: true });
    const plain = (await mailTls('plain.mailtls.test')).json();
    expect(plain.hosts[0].addresses[0]).toMatchObject({ ptr: ['not-the-mx.mailtls.test'], fcrdns: false });
  });

  it('tests the domain itself when it has no MX (the implicit MX)', async () => {
    const body = (await mailTls('implicit.mailtls.test')).json();
    expect(body.mx.state).toBe('implicit');
    expect(body.hosts[0]).toMatchObject({ host: 'implicit.mailtls.test', preference: null });
    expect(body.hosts[0].addresses[0].smtp.starttls_offered).toBe(true);
  });

  it('tells whether a sender enforcing the MTA-STS policy would deliver to each host', async () => {
    const ok = (await mailTls('sts-ok.mailtls.test')).json();
    expect(ok.mta_sts).toMatchObject({ mode: 'enforce', mx: ['*.good.mailtls.test'] });
    expect(ok.hosts[0].mta_sts).toEqual({ mode: 'enforce', matches_policy: true, deliverable: true });
    const miss = (await mailTls('sts-miss.mailtls.test')).json();
    expect(miss.hosts[0].mta_sts).toEqual({ mode: 'enforce', matches_policy: false, deliverable: false });
    expect(miss.hosts[0].status).toBe('fail');
    expect(miss.status).toBe('fail');
  });

  it('caches an answer for 10 minutes', async () => {
    const server = await app();
    const ask = () => server.inject({ url: '/api/mail-tls', query: { domain: 'good.mailtls.test' } });
    expect((await ask()).headers['x-service-cache']).toBe('MISS');
    const again = await ask();
    expect(again.headers['x-service-cache']).toBe('HIT');
    expect(again.headers['cache-control']).toMatch(/max-age=(600|59\d)/);
  });

  it('is off with MAIL_TLS_ENABLED=false: a 503 with a clear error', async () => {
    const res = await mailTls('good.mailtls.test', { mailTlsEnabled: false });
    expect(res.statusCode).toBe(503);
    expect(res.json().error).toMatch(/MAIL_TLS_ENABLED=false/);
  });

  it('names the parameter of bad input', async () => {
    const res = await mailTls('not a domain');
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toMatch(/domain/);
  });
});
