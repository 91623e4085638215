/**
 * GET /api/tls-scan end to end against real servers on 127.0.214.x:443: the
 * `openssl s_server` profiles and `gnutls-serv` of test/fakes/tls-scan-peers.ts
 * and tls-scan-gnutls.ts, each held to what it was configured to offer
 * (protocols, suites in the server's order, server preference, ChaCha20
 * priority, groups, DHE size, key types, the OCSP staple), and the scripted
 * legacy server for what Debian's OpenSSL no longer speaks (SSLv2, SSLv3, RC4,
 * export). Port 443 needs root: CI's test run and a test's own namespace have
 * it; where `openssl` or `gnutls-serv` is missing their part is skipped, saying why.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer as createTlsServer } from 'node:tls';
import type { FastifyInstance } from 'fastify';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { testConfig } from '../../src/config/index.js';
import type { TlsScan, TlsScanResponse } from '../../src/features/tls-scan/tls-scan.schema.js';
import type { ProtocolName } from '../../src/tls-scan/client-hello.js';
import { makeOcspResponse } from '../fakes/ocsp-responses.js';
import { type FakeSmtpServer, startFakeSmtpServer } from '../fakes/smtp-server.js';
import { getTestPki } from '../fakes/test-ca.js';
import { GNUTLS_PRIORITIES, gnutlsUnavailable, startGnutlsPeer } from '../fakes/tls-scan-gnutls.js';
import { type LegacyTlsServer, startLegacyTlsServer } from '../fakes/tls-scan-legacy-server.js';
import {
  type OpensslProfileName,
  opensslUnavailable,
  type PeerExpectation,
  startOpensslPeer,
  type TlsPeer,
} from '../fakes/tls-scan-peers.js';

const NET = '127.0.214';
/** OpenSSL 3.5 (Node 24) has the ML-KEM hybrids; 3.0 (Node 20, 22) does not. */
const [major, minor] = process.versions.openssl.split('.').map(Number);
const OPENSSL_HAS_MLKEM = major! * 100 + minor! >= 305;
const PORT = 443;
const openssl = opensslUnavailable();
const gnutls = gnutlsUnavailable();
if (openssl) console.warn(`tls-scan-api: openssl profiles SKIPPED: ${openssl}`);
if (gnutls) console.warn(`tls-scan-api: gnutls-serv SKIPPED: ${gnutls}`);

/** One address per server. */
const PROFILES: [OpensslProfileName, number][] = [
  ['tls13Only', 2],
  ['tls12and13ServerPref', 3],
  ['tls12and13ClientPref', 4],
  ['prioritizeChaCha', 5],
  ['legacyCbc', 6],
  ['singleSuite', 7],
  ['dualCert', 8],
  ['dheOnly', 9],
  ['groupsRestricted', 10],
];
const OCSP_GOOD = `${NET}.20`;
const OCSP_REVOKED = `${NET}.21`;
/** One address per preset: a scan is cached per target. */
const GNUTLS = { tls12and13ServerPref: `${NET}.30`, legacy3des: `${NET}.31` };
const LEGACY = `${NET}.40`;
const SSLV2 = `${NET}.41`;
const REFUSED = `${NET}.99`;
/** An SMTP front on port 25 whose TLS is an s_server profile's on port 4443 of the same address. */
const SMTP = `${NET}.50`;

let app: FastifyInstance;
const peers: { stop(): Promise<void> }[] = [];
const started = new Map<string, TlsPeer>();
let dir: string;

beforeAll(async () => {
  const pki = await getTestPki();
  app = await buildApp(
    testConfig({
      unsafeAllowTargetCidrs: [`${NET}.0/24`],
      rateLimitExpensive: { points: 1_000, seconds: 60 },
      rateLimitGeneral: { points: 1_000, seconds: 60 },
      providerTimeoutMs: 5_000,
      loadShedEventLoopDelayMs: 0,
    }),
    { ca: pki.caPem, logger: pino({ level: 'silent' }) },
  );
  dir = mkdtempSync(join(tmpdir(), 'tls-scan-api-'));
  if (!openssl) {
    const starts = PROFILES.map(async ([name, host]) => {
      const peer = await startOpensslPeer(name, { address: `${NET}.${host}`, port: PORT });
      peers.push(peer);
      started.set(name, peer);
    });
    for (const [address, status] of [
      [OCSP_GOOD, 'good'],
      [OCSP_REVOKED, 'revoked'],
    ] as const) {
      const statusFile = makeOcspResponse({
        dir,
        ca: { certPem: pki.caPem, keyPem: pki.caKeyPem },
        leaf: pki.server.certPem,
        status,
      });
      starts.push(
        startOpensslPeer('ocspStapling', { address, port: PORT, statusFile }).then((peer) => {
          peers.push(peer);
        }),
      );
    }
    await Promise.all(starts);
  }
}, 60_000);

afterAll(async () => {
  await app?.close();
  await Promise.all(peers.map((p) => p.stop()));
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function scanOf(target: string, service = 'https'): Promise<TlsScan> {
  const res = await app.inject({ url: `/api/tls-scan?target=${target}&service=${service}` });
  expect(res.statusCode, res.body).toBe(200);
  const { scan } = res.json<TlsScanResponse>();
  if (scan.status !== 'ok') throw new Error(`no scan: ${scan.error}`);
  return scan;
}

const codesOf = (scan: TlsScan, protocol: string) =>
  scan.cipher_suites.filter((s) => s.protocol === protocol).map((s) => Number.parseInt(s.code, 16));

/** The scan said what the server was configured to offer, no more and no less. */
function expectHeldTo(scan: TlsScan, expected: PeerExpectation) {
  const offered = scan.protocols.filter((p) => p.offered).map((p) => p.name);
  expect(offered.sort()).toEqual([...expected.protocols].sort());
  for (const protocol of expected.protocols) {
    const found = codesOf(scan, protocol);
    const want = expected.suites[protocol] ?? [];
    // In the server's order where it enforces one; as a set where the client's order rules.
    if (expected.serverPreference[protocol] === true) expect(found, protocol).toEqual(want);
    else expect([...found].sort(), protocol).toEqual([...want].sort());
    expect(scan.server_preference[protocol as ProtocolName], protocol).toBe(
      expected.serverPreference[protocol],
    );
  }
  expect(scan.certificates.map((c) => c.key_type).sort()).toEqual([...expected.keyTypes].sort());
  if (expected.groups) expect(scan.groups.map((g) => g.name).sort()).toEqual([...expected.groups].sort());
  if (expected.dhBits) expect(scan.dhe?.bits).toBe(expected.dhBits);
  if (expected.prioritizeChaCha)
    for (const protocol of expected.protocols)
      expect(scan.chacha20_preference[protocol as ProtocolName]).toBe(true);
  expect(scan.complete).toBe(true);
  expect(scan.handshakes).toBeLessThan(100);
}

describe.skipIf(openssl)('GET /api/tls-scan against openssl s_server profiles', () => {
  it.each(PROFILES.map(([name]) => name))(
    '%s: protocols, suites, order, key types as configured',
    async (name) => {
      const peer = started.get(name)!;
      expectHeldTo(await scanOf(peer.address), peer.expected);
    },
  );

  it('ChaCha20 priority is server preference, not its absence (internet.nl issues 683, 753, 1734)', async () => {
    const scan = await scanOf(started.get('prioritizeChaCha')!.address);
    expect(scan.server_preference).toEqual({ 'TLSv1.2': true, 'TLSv1.3': true });
    expect(scan.chacha20_preference).toEqual({ 'TLSv1.2': true, 'TLSv1.3': true });
    expect(scan.findings.map((f) => f.code)).not.toContain('no_server_preference');
    // Without the option the same server order gives a ChaCha20-first client the server's first suite.
    const plain = await scanOf(started.get('tls12and13ServerPref')!.address);
    expect(Object.values(plain.chacha20_preference).every((v) => v !== true)).toBe(true);
  });

  it('groups from HelloRetryRequests: only the two configured, no share computed for ffdhe3072', async () => {
    const scan = await scanOf(started.get('groupsRestricted')!.address);
    expect(scan.groups.filter((g) => g.protocol === 'TLSv1.3').map((g) => g.name)).toEqual([
      'secp384r1',
      'ffdhe3072',
    ]);
    expect(scan.groups.find((g) => g.name === 'ffdhe3072')).toMatchObject({ kind: 'ffdhe', code: 257 });
  });

  it('DHE: the prime size from the ServerKeyExchange, and a MODP prime is not an RFC 7919 group', async () => {
    const scan = await scanOf(started.get('dheOnly')!.address);
    expect(scan.dhe).toMatchObject({ bits: 2048, group: null, ncsc: 'insufficient' });
    expect(scan.cipher_suites.every((s) => s.key_exchange === 'DHE')).toBe(true);
  });

  it('a dual-certificate server: an RSA and an ECDSA leaf, each with its own fingerprint and chain checks', async () => {
    const scan = await scanOf(started.get('dualCert')!.address);
    const [ecdsa, rsa] = ['ECDSA', 'RSA'].map((t) => scan.certificates.find((c) => c.key_type === t)!);
    expect(ecdsa?.leaf.key).toMatchObject({ type: 'EC', bits: 256 });
    expect(rsa?.leaf.key).toMatchObject({ type: 'RSA', bits: 2048 });
    expect(ecdsa?.fingerprint_sha256).not.toBe(rsa?.fingerprint_sha256);
    // Scanned by address: no SNI, and the test leaves do not name 127.0.214.8.
    expect(scan.without_sni).toBeNull();
    expect(rsa?.verdict.status).toBe('rejected');
    expect(scan.grade).toBe('T');
  });

  it('TLS 1.0 to 1.2 with CBC: deprecated protocols found, graded and rated as such', async () => {
    const scan = await scanOf(started.get('legacyCbc')!.address);
    const codes = scan.findings.map((f) => f.code);
    expect(codes).toEqual(expect.arrayContaining(['tls10_offered', 'tls11_offered']));
    expect(scan.ratings.mozilla.meets).not.toBe('modern');
    expect(scan.ratings.ncsc.protocols.find((p) => p.name === 'TLSv1')?.class).toBe('insufficient');
    expect(scan.features).toMatchObject({
      fallback_scsv: true,
      secure_renegotiation: true,
      compression: false,
    });
  });

  it('the OCSP staple: good, verified against the issuer, with its window', async () => {
    const scan = await scanOf(OCSP_GOOD);
    expect(scan.ocsp_stapling).toMatchObject({ stapled: true, status: 'good', reason: null });
    expect(Date.parse(scan.ocsp_stapling.next_update!)).toBeGreaterThan(Date.now());
  });

  it('the OCSP staple: revoked is a critical finding and an F', async () => {
    const scan = await scanOf(OCSP_REVOKED);
    expect(scan.ocsp_stapling).toMatchObject({ stapled: true, status: 'revoked' });
    expect(scan.findings[0]).toMatchObject({ code: 'ocsp_revoked', severity: 'critical' });
    expect(scan.grade).toBe('F');
  });

  it('no staple where none is configured', async () => {
    const scan = await scanOf(started.get('tls13Only')!.address);
    expect(scan.ocsp_stapling).toMatchObject({ stapled: false, status: null });
  });
});

describe.skipIf(openssl)('GET /api/tls-scan?service=smtp: every handshake in its own SMTP session', () => {
  let mx: FakeSmtpServer;
  let backend: TlsPeer;
  beforeAll(async () => {
    backend = await startOpensslPeer('tls12and13ServerPref', { address: SMTP, port: 4443 });
    mx = await startFakeSmtpServer({
      cert: (await getTestPki()).server,
      host: SMTP,
      port: 25,
      relay: { host: SMTP, port: 4443 },
    });
  });
  afterAll(async () => {
    await mx?.close();
    await backend?.stop();
  });

  it('finds what the server behind STARTTLS offers, two sessions at a time, never MAIL or RCPT', async () => {
    mx.set({});
    mx.connections.resetPeak();
    const scan = await scanOf(SMTP, 'smtp');
    expect(scan).toMatchObject({ service: 'smtp', port: 25 });
    expectHeldTo(scan, backend.expected);
    expect(scan.features.alpn).toBeNull();
    // One SMTP session per handshake, each EHLO then STARTTLS, and nothing else.
    expect(mx.sessions).toHaveLength(scan.handshakes);
    for (const session of mx.sessions)
      expect(session.commands).toEqual([expect.stringMatching(/^EHLO /), 'STARTTLS']);
    // Two at a time (the https scan's four would show here): the server may count one more, as it
    // learns of a session's end a moment after the client let it go (s_server closes its side of
    // a completed handshake as the client does); session.test.ts holds the client to its bound.
    expect(mx.connections.peak).toBeGreaterThanOrEqual(2);
    expect(mx.connections.peak).toBeLessThanOrEqual(3);
  });

  it('a port 25 without STARTTLS is an answer at the smtp stage', async () => {
    const bare = `${NET}.51`;
    const noTls = await startFakeSmtpServer({ cert: (await getTestPki()).server, host: bare, port: 25 });
    noTls.set({ fault: 'no-starttls' });
    const res = await app
      .inject({ url: `/api/tls-scan?target=${bare}&service=smtp` })
      .finally(() => noTls.close());
    expect(res.json().scan).toMatchObject({
      status: 'error',
      stage: 'smtp',
      error: expect.stringMatching(/STARTTLS is not offered/),
    });
  });
});

describe.skipIf(gnutls)('GET /api/tls-scan against gnutls-serv (a second implementation)', () => {
  it.each([
    ['tls12and13ServerPref', 'ECDSA'],
    ['legacy3des', 'RSA'],
  ] as const)('%s (%s leaf): as gnutls-cli lists its priority string', async (preset, keyType) => {
    const peer = await startGnutlsPeer({
      address: GNUTLS[preset],
      port: PORT,
      priority: GNUTLS_PRIORITIES[preset],
      keyType,
    });
    try {
      const scan = await scanOf(GNUTLS[preset]);
      expectHeldTo(scan, peer.expected);
      if (preset === 'legacy3des') expect(scan.findings.map((f) => f.code)).toContain('3des_suites');
    } finally {
      await peer.stop();
    }
  });
});

describe('GET /api/tls-scan against a scripted server of what OpenSSL no longer speaks', () => {
  let legacy: LegacyTlsServer;
  let sslv2: LegacyTlsServer;
  beforeAll(async () => {
    legacy = await startLegacyTlsServer(
      { address: LEGACY, port: PORT },
      {
        versions: ['SSLv3', 'TLSv1'],
        // RC4-SHA, EXP-RC4-MD5, DES-CBC3-SHA, in the server's order.
        suites: [0x0005, 0x0003, 0x000a],
        serverPreference: true,
        compression: true,
        heartbeat: true,
        secureRenegotiation: false,
        fallbackScsv: false,
      },
    );
    sslv2 = await startLegacyTlsServer(
      { address: SSLV2, port: PORT },
      {
        versions: ['TLSv1'],
        suites: [0x0005],
        serverPreference: true,
        sslv2: { cipherSpecs: [0x010080, 0x020080] },
      },
    );
  });
  afterAll(async () => {
    await legacy?.stop();
    await sslv2?.stop();
  });

  it('SSLv3 and TLS 1.0 with RC4, export and 3DES in the server order, every weakness a finding, an F', async () => {
    const before = legacy.hellos.length;
    const scan = await scanOf(LEGACY);
    expect(scan.protocols.filter((p) => p.offered).map((p) => p.name)).toEqual(['SSLv3', 'TLSv1']);
    for (const protocol of ['SSLv3', 'TLSv1'])
      expect(codesOf(scan, protocol)).toEqual([0x0005, 0x0003, 0x000a]);
    expect(scan.server_preference).toEqual({ SSLv3: true, TLSv1: true });
    expect(scan.features).toMatchObject({
      compression: true,
      heartbeat: true,
      secure_renegotiation: false,
      fallback_scsv: false,
    });
    const codes = scan.findings.map((f) => f.code);
    expect(codes).toEqual(
      expect.arrayContaining(['sslv3_offered', 'export_suites', 'rc4_suites', '3des_suites', 'compression']),
    );
    expect(scan.grade).toBe('F');
    // Node's OpenSSL completes no handshake with it: no certificate, and the answer says why.
    expect(scan.certificates).toEqual([]);
    expect(scan.features.alpn).toBeNull();
    expect(scan.notes.join(' ')).toMatch(
      /No certificate could be read: Node's OpenSSL completed no handshake/,
    );
    expect(scan.ratings.mozilla.meets).toBeNull();
    expect(scan.ratings.ncsc.overall).toBe('insufficient');
    // Every connection the scan made reached the server, and the answer counts them all.
    expect(legacy.hellos.length - before).toBe(scan.handshakes);
  });

  it('SSLv2: the SERVER-HELLO lists its cipher specs in one answer', async () => {
    const scan = await scanOf(SSLV2);
    expect(scan.protocols.find((p) => p.name === 'SSLv2')?.offered).toBe(true);
    expect(scan.cipher_suites.filter((s) => s.protocol === 'SSLv2').map((s) => s.code)).toEqual([
      '0x010080',
      '0x020080',
    ]);
    expect(scan.findings.map((f) => f.code)).toContain('sslv2_offered');
    expect(scan.grade).toBe('F');
  });

  it('TLS 1.3 groups by HelloRetryRequest: the hybrid X25519MLKEM768 told without an ML-KEM share', async () => {
    const address = `${NET}.43`;
    const server = await startLegacyTlsServer(
      { address, port: PORT },
      {
        versions: ['TLSv1.2'],
        suites: [0xc02f],
        serverPreference: true,
        tls13: { suites: [0x1302, 0x1301], groups: [0x11ec, 0x001d, 0x0017] },
      },
    );
    try {
      const scan = await scanOf(address);
      expect(scan.groups.map((g) => [g.name, g.kind])).toEqual([
        ['X25519MLKEM768', 'hybrid_pq'],
        ['x25519', 'ecdhe'],
        ['secp256r1', 'ecdhe'],
      ]);
      expect(scan.groups[0]?.ncsc).toBe('good');
      expect(codesOf(scan, 'TLSv1.3')).toEqual([0x1302, 0x1301]);
      // The group enumeration's hellos carried no key share at all.
      const probes = server.hellos.filter((h) => h.answer === 'hello_retry_request');
      expect(probes.length).toBeGreaterThanOrEqual(3);
    } finally {
      await server.stop();
    }
  });

  it('is cached an hour, and concurrent requests for one target share one scan', async () => {
    const fresh = `${NET}.42`;
    const server = await startLegacyTlsServer(
      { address: fresh, port: PORT },
      { versions: ['TLSv1'], suites: [0x002f, 0x0035], serverPreference: false },
    );
    try {
      const [a, b] = await Promise.all([
        app.inject({ url: `/api/tls-scan?target=${fresh}` }),
        app.inject({ url: `/api/tls-scan?target=${fresh}` }),
      ]);
      const scan = a.json<TlsScanResponse>().scan as TlsScan;
      expect(b.json()).toEqual(a.json());
      expect(server.hellos.length).toBe(scan.handshakes);
      const again = await app.inject({ url: `/api/tls-scan?target=${fresh}` });
      expect(again.headers['x-service-cache']).toBe('HIT');
      expect(again.headers['cache-control']).toMatch(/max-age=(3[0-5]\d\d|3600)/);
      expect(server.hellos.length).toBe(scan.handshakes);
    } finally {
      await server.stop();
    }
  });
});

describe.skipIf(!OPENSSL_HAS_MLKEM)(
  'GET /api/tls-scan against OpenSSL 3.5 with the ML-KEM hybrid (Node 24)',
  () => {
    it('finds X25519MLKEM768 first, as the server prefers it, from a HelloRetryRequest', async () => {
      const pki = await getTestPki();
      const address = `${NET}.60`;
      const server = createTlsServer({
        cert: pki.server.certPem,
        key: pki.server.keyPem,
        minVersion: 'TLSv1.3',
        ecdhCurve: 'X25519MLKEM768:X25519:P-256',
        honorCipherOrder: true,
      });
      server.on('tlsClientError', () => {});
      await new Promise<void>((resolve) => server.listen(PORT, address, resolve));
      try {
        const scan = await scanOf(address);
        expect(scan.groups.map((g) => g.name)).toEqual(['X25519MLKEM768', 'x25519', 'secp256r1']);
        expect(scan.protocols.filter((p) => p.offered).map((p) => p.name)).toEqual(['TLSv1.3']);
      } finally {
        await new Promise((resolve) => server.close(resolve));
      }
    });
  },
);

describe('GET /api/tls-scan: what is not a scan', () => {
  it('nothing listening is an answer (status error, stage connect), never cached', async () => {
    for (let i = 0; i < 2; i++) {
      const res = await app.inject({ url: `/api/tls-scan?target=${REFUSED}` });
      expect(res.statusCode).toBe(200);
      expect(res.json().scan).toMatchObject({ status: 'error', stage: 'connect', target: REFUSED });
      expect(res.headers['x-service-cache']).not.toBe('HIT');
    }
  });

  it('refuses a private target before any connection, and a service it does not know', async () => {
    const private10 = await app.inject({ url: '/api/tls-scan?target=10.1.2.3' });
    expect(private10.statusCode).toBe(400);
    expect(private10.json().error).toMatch(/10\.1\.2\.3/);
    const bad = await app.inject({ url: `/api/tls-scan?target=${REFUSED}&service=imap` });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error).toMatch(/service/);
  });
});
