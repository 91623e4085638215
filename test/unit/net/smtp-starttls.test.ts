/**
 * The STARTTLS probe against a fake mail server on loopback: every stage of a
 * good session (banner, EHLO, STARTTLS, the handshake with SNI, EHLO over
 * TLS, QUIT, never MAIL), and each fault reported at the stage it happened,
 * with what was seen before it; the deadlines a tarpit cannot stretch (issue
 * 29 F2) and the certificate judged for every MX name of one address (F3).
 * Time bounds sit far from the bug: a deadline of 300 ms asserted under 5 s
 * where the old probe took 10 s or more.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { UnsafeTargetError } from '../../../src/net/errors.js';
import { probeSmtpStarttls, type SmtpProbeOptions } from '../../../src/net/smtp-starttls.js';
import { hostsResolver } from '../../fakes/address-resolver.js';
import { type FakeSmtpServer, startFakeSmtpServer } from '../../fakes/smtp-server.js';
import { getTestPki, untrustedLeaf } from '../../fakes/test-ca.js';

let mx: FakeSmtpServer;
let caPem: string;
let cert: Awaited<ReturnType<Awaited<ReturnType<typeof getTestPki>>['issue']>>;

beforeAll(async () => {
  const pki = await getTestPki();
  caPem = pki.caPem;
  cert = await pki.issue({ dnsNames: ['mx.mail.test'] });
  mx = await startFakeSmtpServer({ cert });
});
afterAll(async () => mx?.close());
beforeEach(() => mx.set({ chain: cert }));

function options(overrides: Partial<SmtpProbeOptions> = {}): SmtpProbeOptions {
  return {
    resolver: hostsResolver({}),
    allowCidrs: ['127.0.0.0/8'],
    ca: caPem,
    servername: 'mx.mail.test',
    heloName: 'probe.netdiag.test',
    timeoutMs: 5_000,
    port: mx.port,
    ...overrides,
  };
}

describe('probeSmtpStarttls', () => {
  it('walks banner, EHLO, STARTTLS, the handshake with SNI, EHLO over TLS and QUIT', async () => {
    const probe = await probeSmtpStarttls('127.0.0.1', options());
    expect(probe.failure).toBeUndefined();
    expect(probe.banner).toEqual({ code: 220, lines: ['mx.fake.test ESMTP fake'] });
    expect(probe.ehlo?.code).toBe(250);
    expect(probe.extensions).toEqual(['PIPELINING', 'SIZE', 'STARTTLS', '8BITMIME']);
    expect(probe.starttlsOffered).toBe(true);
    expect(probe.starttls?.code).toBe(220);
    expect(probe.handshake).toMatchObject({ address: '127.0.0.1', authorized: true });
    expect(probe.handshake?.peerChain.length).toBeGreaterThan(0);
    expect(probe.ehloAfterTls?.code).toBe(250);
    expect(probe.timings.map((t) => t.stage)).toEqual([
      'connect',
      'banner',
      'ehlo',
      'starttls',
      'tls handshake',
      'ehlo after tls',
    ]);
    const session = mx.sessions.at(-1)!;
    await expect.poll(() => session.commands, { timeout: 15_000 }).toContain('QUIT');
    expect(session.commands).toEqual([
      'EHLO probe.netdiag.test',
      'STARTTLS',
      '(tls)',
      'EHLO probe.netdiag.test',
      'QUIT',
    ]);
    expect(session.servername).toBe('mx.mail.test');
    expect(session.commands.some((c) => /^(MAIL|RCPT|DATA)/i.test(c))).toBe(false);
  });

  it('reports a certificate for another name as not authorized, and still completes', async () => {
    const probe = await probeSmtpStarttls('127.0.0.1', options({ servername: 'other.mail.test' }));
    expect(probe.failure).toBeUndefined();
    expect(probe.handshake?.authorized).toBe(false);
    expect(probe.handshake?.authorizationError).toMatch(/ERR_TLS_CERT_ALTNAME_INVALID|Hostname/i);
  });

  it.each([
    ['no-starttls', 'starttls', 'protocol', /STARTTLS is not offered/],
    ['banner-421', 'banner', 'protocol', /the banner is 421 4\.3\.2/],
    ['banner-554', 'banner', 'protocol', /the banner is 554 .*go away/],
    ['garbage', 'banner', 'protocol', /not an SMTP reply: "HTTP\/1\.1 400/],
    ['starttls-454', 'starttls', 'protocol', /STARTTLS answered 454/],
    ['inject', 'starttls', 'protocol', /sent 14 bytes after its 220 to STARTTLS/],
    ['handshake-fail', 'tls handshake', 'tls', /tls handshake failed/],
  ] as const)('%s stops at %s (%s)', async (fault, stage, kind, message) => {
    mx.set({ fault });
    const probe = await probeSmtpStarttls('127.0.0.1', options());
    expect(probe.failure).toMatchObject({ stage, kind });
    expect(probe.failure?.message).toMatch(message);
    expect(probe.handshake).toBeUndefined();
  });

  it('keeps what it saw before a missing STARTTLS: the banner and the extensions', async () => {
    mx.set({ fault: 'no-starttls' });
    const probe = await probeSmtpStarttls('127.0.0.1', options());
    expect(probe.banner?.code).toBe(220);
    expect(probe.starttlsOffered).toBe(false);
    expect(probe.extensions).toEqual(['PIPELINING', 'SIZE', '8BITMIME']);
  });

  it('times out a server that never greets, naming the banner stage', async () => {
    mx.set({ fault: 'stall' });
    const probe = await probeSmtpStarttls('127.0.0.1', options({ timeoutMs: 1_000 }));
    expect(probe.failure).toMatchObject({ stage: 'banner', kind: 'timeout' });
    expect(probe.timings.map((t) => t.stage)).toEqual(['connect']);
  });

  it('reports a refused connection at the connect stage', async () => {
    const probe = await probeSmtpStarttls('127.0.0.1', options({ port: 9 }));
    expect(probe.failure).toMatchObject({ stage: 'connect', kind: 'refused' });
  });

  it('never contacts a non-public address outside the allow-list', async () => {
    await expect(probeSmtpStarttls('127.0.0.1', options({ allowCidrs: [] }))).rejects.toBeInstanceOf(
      UnsafeTargetError,
    );
  });
});

/** The probe and how long it took, in ms. */
async function timed(opts: Partial<SmtpProbeOptions>) {
  const started = performance.now();
  const probe = await probeSmtpStarttls('127.0.0.1', options(opts));
  return { probe, ms: performance.now() - started };
}

describe('F2: deadlines a tarpit cannot stretch', () => {
  it('ends a server that goes silent after TLS at the reply deadline', async () => {
    mx.set({ fault: 'silent-after-tls' });
    const { probe, ms } = await timed({ timeoutMs: 10_000, replyTimeoutMs: 300 });
    expect(probe.handshake).toBeDefined();
    expect(probe.failure).toMatchObject({ stage: 'ehlo after tls', kind: 'timeout' });
    expect(ms).toBeLessThan(5_000);
  });

  it('holds the whole session, after TLS included, to one deadline: slow replies then silence end within it', async () => {
    // 3 s of slow replies before TLS, then silence: one 4 s deadline ends it at 4 s; a second deadline
    // after TLS (the old probe) would hold the socket to 7 s.
    mx.set({ fault: 'silent-after-tls', replyDelayMs: 1_000 });
    const { probe, ms } = await timed({ timeoutMs: 4_000 });
    expect(probe.failure?.kind).toBe('timeout');
    expect(ms).toBeLessThan(5_500);
  });

  it('ends a banner trickled a byte at a time at the banner deadline: no idle timer is needed to fire', async () => {
    mx.set({ trickleMs: 100 });
    const { probe, ms } = await timed({ timeoutMs: 10_000, bannerTimeoutMs: 300 });
    expect(probe.failure).toMatchObject({ stage: 'banner', kind: 'timeout' });
    expect(probe.failure?.message).toMatch(/within 300 ms/);
    expect(ms).toBeLessThan(2_500);
  });

  it('ends a slow reply to a command at the reply deadline, naming the command', async () => {
    mx.set({ replyDelayMs: 600 });
    const { probe, ms } = await timed({ timeoutMs: 10_000, bannerTimeoutMs: 5_000, replyTimeoutMs: 200 });
    expect(probe.banner?.code).toBe(220);
    expect(probe.failure).toMatchObject({ stage: 'ehlo', kind: 'timeout' });
    expect(ms).toBeLessThan(5_000);
  });

  it('ends a server that never starts TLS after its 220 at the handshake deadline', async () => {
    mx.set({ fault: 'stall-handshake' });
    const { probe, ms } = await timed({ timeoutMs: 10_000, handshakeTimeoutMs: 300 });
    expect(probe.starttls?.code).toBe(220);
    expect(probe.failure).toMatchObject({ stage: 'tls handshake', kind: 'timeout' });
    expect(ms).toBeLessThan(5_000);
  });
});

describe('F3: one session judged for every MX name of the address', () => {
  it('sends one SNI and verifies the certificate for each other name as for the SNI name', async () => {
    const probe = await probeSmtpStarttls(
      '127.0.0.1',
      options({ servername: 'other.mail.test', otherNames: ['mx.mail.test', 'third.mail.test'] }),
    );
    expect(mx.sessions.at(-1)?.servername).toBe('other.mail.test');
    expect(probe.handshake).toMatchObject({
      authorized: false,
      authorizationError: 'ERR_TLS_CERT_ALTNAME_INVALID',
    });
    expect(probe.otherNames).toEqual([
      { name: 'mx.mail.test', authorized: true, authorizationError: null },
      { name: 'third.mail.test', authorized: false, authorizationError: 'ERR_TLS_CERT_ALTNAME_INVALID' },
    ]);
  });

  it('gives every name the chain error when the chain does not verify', async () => {
    mx.set({ chain: await untrustedLeaf() });
    const probe = await probeSmtpStarttls('127.0.0.1', options({ otherNames: ['b.mail.test'] }));
    expect(probe.handshake?.authorized).toBe(false);
    expect(probe.otherNames).toEqual([
      { name: 'b.mail.test', authorized: false, authorizationError: probe.handshake?.authorizationError },
    ]);
    expect(probe.otherNames?.[0]?.authorizationError).not.toBe('ERR_TLS_CERT_ALTNAME_INVALID');
  });
});
