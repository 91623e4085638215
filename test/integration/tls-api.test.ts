/**
 * GET /api/tls end to end: the real DNS client against the fake DNS server,
 * real TLS handshakes with fake targets on 127.0.200.x:443 serving
 * certificates from the test PKI (a CA, an intermediate, leaves). Every
 * scenario asserts the exact findings, so a finding that appears or vanishes
 * by mistake fails here.
 */
import type { Socket } from 'node:net';
import { createServer as createTlsServer, type SecureVersion, type TLSSocket } from 'node:tls';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { TlsEvidence, TlsResponse } from '../../src/features/tls/tls.schema.js';
import { type FakeDnsServer, startFakeDnsServer } from '../fakes/dns-server.js';
import { type FakeRecord, testZone } from '../fakes/dns-zones.js';
import { type SilentTarget, startSilentTarget } from '../fakes/http-targets.js';
import { getTestPki, type IssuedCert, type TestIssuer, type TestPki } from '../fakes/test-ca.js';
import { buildTestApp } from '../helper.js';

const DAY_MS = 24 * 60 * 60 * 1000;
/** OpenSSL 3.5 (Node 24) offers and prefers X25519MLKEM768; 3.0 (Node 20, 22) does not know it. */
const OPENSSL_HAS_MLKEM =
  Number(process.versions.openssl.split('.')[0]) * 100 + Number(process.versions.openssl.split('.')[1]) >=
  305;
/** Targets live here; the allow-list covers it and nothing else in 127/8 is used by other test files. */
const TARGET_NET = '127.0.200';
/** Nothing listens here: connection refused. */
const REFUSED = '127.0.201.1';
/** Accepts TCP and never speaks: the handshake times out. */
const SILENT = '127.0.201.2';
/** Outside the allow-list: must never see a connection. */
const CANARY = '127.77.0.1';
const ALLOW = ['127.0.200.0/24', '127.0.201.0/24'];

interface TlsTarget {
  address: string;
  connections: number;
  /** SNI of each completed handshake (false: none sent); the server learns of completion after the client. */
  servernames: (string | false)[];
  close(): Promise<void>;
}

interface TlsTargetOptions {
  /** The leaf first, then whatever else the server should send, in that order. */
  chain: string[];
  key: string;
  address?: string;
  minVersion?: SecureVersion;
  maxVersion?: SecureVersion;
  ciphers?: string;
  /** Staple this as the OCSP response. */
  ocsp?: Buffer;
}

/** A TLS server on a free 127.0.200.x:443 that completes the handshake and says nothing. */
async function startTlsTarget(opts: TlsTargetOptions): Promise<TlsTarget> {
  const sockets = new Set<Socket>();
  const target: TlsTarget = {
    address: '',
    connections: 0,
    servernames: [],
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
  const server = createTlsServer(
    {
      key: opts.key,
      // PEM blocks from @peculiar/x509 carry no trailing newline; OpenSSL needs one between blocks.
      cert: opts.chain.map((pem) => `${pem.trim()}\n`).join(''),
      ...(opts.minVersion ? { minVersion: opts.minVersion } : {}),
      ...(opts.maxVersion ? { maxVersion: opts.maxVersion } : {}),
      ...(opts.ciphers ? { ciphers: opts.ciphers } : {}),
    },
    (socket: TLSSocket) => {
      target.servernames.push(socket.servername || false);
    },
  );
  if (opts.ocsp) {
    const response = opts.ocsp;
    server.on(
      'OCSPRequest',
      (_cert: Buffer, _issuer: Buffer, done: (err: Error | null, resp: Buffer) => void) =>
        done(null, response),
    );
  }
  server.on('tlsClientError', () => {});
  server.on('connection', (socket: Socket) => {
    target.connections += 1;
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  const candidates = opts.address
    ? [opts.address]
    : Array.from({ length: 253 }, (_, i) => `${TARGET_NET}.${2 + ((process.pid + i) % 253)}`);
  for (const address of candidates) {
    const error = await new Promise<NodeJS.ErrnoException | undefined>((resolve) => {
      server.once('error', resolve);
      server.listen(443, address, () => {
        server.off('error', resolve);
        resolve(undefined);
      });
    });
    if (!error) {
      target.address = address;
      return target;
    }
    if (error.code !== 'EADDRINUSE') throw error;
  }
  throw new Error('no free address for a TLS target');
}

let pki: TestPki;
let dns: FakeDnsServer;
let silent: SilentTarget;
const targets: Record<string, TlsTarget> = {};
let intermediate: TestIssuer;
let expiredIntermediate: TestIssuer;
const OCSP_RESPONSE = Buffer.from('a stapled OCSP response (the client does not parse it)');

function chainOf(leaf: IssuedCert, ...rest: { certPem: string }[]): TlsTargetOptions {
  return { chain: [leaf.certPem, ...rest.map((c) => c.certPem)], key: leaf.keyPem };
}

beforeAll(async () => {
  pki = await getTestPki();
  const now = Date.now();
  const in90Days = new Date(now + 90 * DAY_MS);
  intermediate = await pki.issueIntermediate({ commonName: 'netdiag test intermediate' });
  expiredIntermediate = await pki.issueIntermediate({
    commonName: 'netdiag expired intermediate',
    notAfter: new Date(now - 3 * DAY_MS),
  });
  const leaf = (name: string, extra: Partial<Parameters<TestPki['issue']>[0]> = {}) =>
    pki.issue({ dnsNames: [name], issuer: intermediate, notAfter: in90Days, ...extra });
  const root = { certPem: pki.caPem };

  const valid = await leaf('valid.tls.test');
  const specs: Record<string, TlsTargetOptions> = {
    valid: { ...chainOf(valid, intermediate), ocsp: OCSP_RESPONSE },
    expired: chainOf(await leaf('expired.tls.test', { notAfter: new Date(now - 2 * DAY_MS) }), intermediate),
    'self-signed': chainOf(await leaf('self-signed.tls.test', { selfSigned: true })),
    'wrong-name': chainOf(await leaf('other.tls.test'), intermediate),
    'leaf-only': chainOf(await leaf('leaf-only.tls.test')),
    tls12: { ...chainOf(await leaf('tls12.tls.test'), intermediate), maxVersion: 'TLSv1.2' },
    tls11: {
      ...chainOf(await leaf('tls11.tls.test'), intermediate),
      minVersion: 'TLSv1',
      maxVersion: 'TLSv1.1',
      ciphers: 'DEFAULT@SECLEVEL=0',
    },
    misordered: chainOf(await leaf('misordered.tls.test'), root, intermediate),
    misordered12: {
      ...chainOf(await leaf('misordered12.tls.test'), root, intermediate),
      maxVersion: 'TLSv1.2',
    },
    'expired-intermediate': chainOf(
      await pki.issue({
        dnsNames: ['expired-intermediate.tls.test'],
        issuer: expiredIntermediate,
        notAfter: in90Days,
      }),
      expiredIntermediate,
    ),
  };
  for (const [name, spec] of Object.entries(specs)) targets[name] = await startTlsTarget(spec);
  targets.canary = await startTlsTarget({ ...chainOf(valid, intermediate), address: CANARY });

  silent = await startSilentTarget({ address: SILENT });

  const records: FakeRecord[] = [
    ...Object.entries(targets).map(([name, t]) => ({ name: `${name}.tls.test`, type: 'A', data: t.address })),
    { name: 'refused.tls.test', type: 'A', data: REFUSED },
    { name: 'silent.tls.test', type: 'A', data: SILENT },
  ];
  dns = await startFakeDnsServer({ zones: [testZone('tls.test', records)] });
});

afterAll(async () => {
  await silent?.close();
  await Promise.all(Object.values(targets).map((t) => t.close()));
  await dns?.close();
});

async function app(opts: { clock?: () => number; timeoutMs?: number } = {}): Promise<FastifyInstance> {
  return buildTestApp({
    ca: pki.caPem,
    ...(opts.clock ? { clock: opts.clock } : {}),
    config: {
      dnsResolvers: [dns.doh],
      unsafeAllowTargetCidrs: ALLOW,
      providerTimeoutMs: opts.timeoutMs ?? 3_000,
      rateLimitExpensive: { points: 1_000, seconds: 60 },
      rateLimitGeneral: { points: 1_000, seconds: 60 },
    },
  });
}

async function inspect(a: FastifyInstance, target: string) {
  const res = await a.inject({ method: 'GET', url: '/api/tls', query: { target } });
  return res;
}

async function tlsOf(a: FastifyInstance, target: string): Promise<TlsEvidence> {
  const res = await inspect(a, target);
  expect(res.statusCode, res.body).toBe(200);
  const { tls } = res.json() as TlsResponse;
  if (tls.status !== 'ok') throw new Error(`no TLS evidence: ${tls.error}`);
  return tls;
}

const codes = (findings: { code: string; severity: string }[]) =>
  findings.map((f) => `${f.severity}:${f.code}`);

describe('GET /api/tls against fake targets', () => {
  it('valid chain with an intermediate: authorized, no findings, the chain exactly as sent', async () => {
    const a = await app();
    const handshakesBefore = targets.valid!.servernames.length;
    const res = await inspect(a, 'valid.tls.test');
    expect(res.statusCode).toBe(200);
    expect(res.headers['x-service-cache']).toBe('MISS');
    expect(res.headers['cache-control']).toBe('public, max-age=300');
    const { tls } = res.json() as TlsResponse;
    if (tls.status !== 'ok') throw new Error(`no TLS evidence: ${tls.error}`);
    expect(tls.host).toBe('valid.tls.test');
    expect(tls.port).toBe(443);
    expect(tls.connection).toMatchObject({
      address: targets.valid!.address,
      sni: 'valid.tls.test',
      protocol: 'TLSv1.3',
      alpn: null,
      forward_secrecy: true,
      ocsp_stapled: true,
      authorized: true,
      authorization_error: null,
      hostname_matches: true,
    });
    expect(tls.connection.cipher).toMatch(/^TLS_(AES_(128|256)_GCM_SHA(256|384)|CHACHA20_POLY1305_SHA256)$/);
    // Both ends run this Node: OpenSSL 3.5 (Node 24) agrees on the hybrid post-quantum group first.
    expect(tls.connection.ephemeral_key).toMatchObject(
      OPENSSL_HAS_MLKEM ? { type: 'KEM', curve: 'X25519MLKEM768' } : { type: 'ECDH', curve: 'X25519' },
    );
    expect(tls.leaf).toMatchObject({
      subject: 'CN=valid.tls.test',
      issuer: 'CN=netdiag test intermediate, O=netdiag tests',
      san: ['valid.tls.test'],
      expired: false,
      self_signed: false,
      key: { type: 'EC', curve: 'P-256', bits: 256 },
      signature_algorithm: 'ecdsa-with-SHA256',
      sct_count: 0,
      ocsp_urls: [],
    });
    expect(tls.leaf.days_remaining).toBeGreaterThanOrEqual(89);
    expect(tls.leaf.fingerprint_sha256).toMatch(/^([0-9A-F]{2}:){31}[0-9A-F]{2}$/);
    expect(tls.chain.source).toBe('handshake');
    expect(tls.chain.sent_count).toBe(2);
    expect(tls.chain.certificates.map((c) => [c.index, c.role, c.issued_by, c.subject])).toEqual([
      [0, 'leaf', 1, 'CN=valid.tls.test'],
      [1, 'intermediate', null, 'CN=netdiag test intermediate, O=netdiag tests'],
    ]);
    // The root was not sent: the client's trust store (here the test CA) supplied it.
    expect(tls.chain.root).toMatchObject({
      subject: 'CN=netdiag test CA, O=netdiag tests',
      source: 'trust store',
    });
    expect(tls.findings).toEqual([]);
    expect(tls.chain.findings).toEqual([]);
    await vi.waitFor(
      () => expect(targets.valid!.servernames.slice(handshakesBefore)).toEqual(['valid.tls.test']),
      { timeout: 15_000 },
    );
  });

  it('is cached 300 s: a second request makes no handshake', async () => {
    const a = await app();
    await tlsOf(a, 'tls12.tls.test');
    const before = targets.tls12!.connections;
    const res = await inspect(a, 'TLS12.tls.test.');
    expect(res.headers['x-service-cache']).toBe('HIT');
    expect(targets.tls12!.connections).toBe(before);
  });

  it('expired leaf: CERT_HAS_EXPIRED, finding expired only', async () => {
    const tls = await tlsOf(await app(), 'expired.tls.test');
    expect(tls.connection.authorized).toBe(false);
    expect(tls.connection.authorization_error).toBe('CERT_HAS_EXPIRED');
    expect(tls.leaf.expired).toBe(true);
    expect(tls.leaf.days_remaining).toBeLessThan(0);
    expect(codes(tls.findings)).toEqual(['critical:expired']);
  });

  it('self-signed leaf: DEPTH_ZERO_SELF_SIGNED_CERT, finding untrusted only', async () => {
    const tls = await tlsOf(await app(), 'self-signed.tls.test');
    expect(tls.connection.authorization_error).toBe('DEPTH_ZERO_SELF_SIGNED_CERT');
    expect(tls.connection.hostname_matches).toBe(true);
    expect(tls.leaf.self_signed).toBe(true);
    expect(tls.chain.certificates.map((c) => c.role)).toEqual(['leaf']);
    expect(tls.chain.root).toMatchObject({ subject: 'CN=self-signed.tls.test', source: 'sent' });
    expect(codes(tls.findings)).toEqual(['critical:untrusted']);
    expect(tls.findings[0]!.message).toContain('self-signed');
  });

  it('wrong name: ERR_TLS_CERT_ALTNAME_INVALID, finding name_mismatch only', async () => {
    const tls = await tlsOf(await app(), 'wrong-name.tls.test');
    expect(tls.connection.authorization_error).toBe('ERR_TLS_CERT_ALTNAME_INVALID');
    expect(tls.connection.hostname_matches).toBe(false);
    expect(tls.leaf.san).toEqual(['other.tls.test']);
    expect(codes(tls.findings)).toEqual(['critical:name_mismatch']);
  });

  it('leaf only (intermediate not sent): finding incomplete_chain only', async () => {
    const tls = await tlsOf(await app(), 'leaf-only.tls.test');
    expect(tls.connection.authorized).toBe(false);
    expect(tls.connection.authorization_error).toBe('UNABLE_TO_VERIFY_LEAF_SIGNATURE');
    expect(tls.chain.sent_count).toBe(1);
    expect(tls.chain.root).toBeNull();
    expect(codes(tls.findings)).toEqual(['high:incomplete_chain']);
    expect(codes(tls.chain.findings)).toEqual(['high:incomplete_chain']);
  });

  it('TLS 1.2-only server: TLSv1.2 with an ECDHE suite, no findings', async () => {
    const tls = await tlsOf(await app(), 'tls12.tls.test');
    expect(tls.connection.protocol).toBe('TLSv1.2');
    expect(tls.connection.cipher).toMatch(/^TLS_ECDHE_ECDSA_WITH_AES_(128|256)_GCM_SHA(256|384)$/);
    expect(tls.connection.cipher_openssl).toMatch(/^ECDHE-ECDSA-AES(128|256)-GCM-SHA(256|384)$/);
    expect(tls.connection.forward_secrecy).toBe(true);
    expect(tls.connection.ocsp_stapled).toBe(false);
    expect(tls.chain.source).toBe('handshake');
    expect(tls.chain.sent_count).toBe(2);
    expect(tls.findings).toEqual([]);
  });

  it('TLS 1.1 server: reached with the old protocol and reported', async () => {
    const tls = await tlsOf(await app(), 'tls11.tls.test');
    expect(tls.connection.protocol).toBe('TLSv1.1');
    expect(tls.connection.authorized).toBe(true);
    expect(tls.chain.source).toBe('handshake');
    expect(codes(tls.findings)).toEqual(['high:protocol_below_tls_1_2']);
  });

  // Node's getPeerCertificate(true) shows this chain as leaf → intermediate → root, exactly like the valid one:
  // only the Certificate message tells the order and that the root was sent.
  it('chain sent as leaf, root, intermediate (TLS 1.3): wrong order and root sent, read from the encrypted records', async () => {
    const tls = await tlsOf(await app(), 'misordered.tls.test');
    expect(tls.connection.protocol).toBe('TLSv1.3');
    expect(tls.connection.authorized).toBe(true);
    expect(tls.chain.source).toBe('handshake');
    expect(tls.chain.certificates.map((c) => [c.role, c.issued_by, c.subject])).toEqual([
      ['leaf', 2, 'CN=misordered.tls.test'],
      ['root', null, 'CN=netdiag test CA, O=netdiag tests'],
      ['intermediate', 1, 'CN=netdiag test intermediate, O=netdiag tests'],
    ]);
    expect(tls.chain.root).toMatchObject({ source: 'sent' });
    expect(codes(tls.findings)).toEqual(['low:chain_wrong_order', 'low:chain_contains_root']);
  });

  it('the same chain over TLS 1.2 (cleartext records): wrong order is a MUST violation there', async () => {
    const tls = await tlsOf(await app(), 'misordered12.tls.test');
    expect(tls.connection.protocol).toBe('TLSv1.2');
    expect(tls.chain.source).toBe('handshake');
    expect(tls.chain.certificates.map((c) => c.index)).toEqual([0, 1, 2]);
    expect(codes(tls.findings)).toEqual(['medium:chain_wrong_order', 'low:chain_contains_root']);
  });

  it('expired intermediate on the path: CERT_HAS_EXPIRED explained by expired_intermediate', async () => {
    const tls = await tlsOf(await app(), 'expired-intermediate.tls.test');
    expect(tls.connection.authorization_error).toBe('CERT_HAS_EXPIRED');
    expect(tls.leaf.expired).toBe(false);
    expect(tls.chain.certificates[1]).toMatchObject({ role: 'intermediate', expired: true });
    expect(codes(tls.findings)).toEqual(['critical:expired_intermediate']);
  });

  it('expiry horizons follow the app clock: 10 days left → 14-day finding, 20 days → 30-day finding', async () => {
    const now = Date.now();
    const in10 = await tlsOf(await app({ clock: () => now + 80 * DAY_MS }), 'valid.tls.test');
    expect(in10.leaf.days_remaining).toBeLessThanOrEqual(10);
    expect(codes(in10.findings)).toEqual(['high:expires_within_14_days']);
    const in20 = await tlsOf(await app({ clock: () => now + 70 * DAY_MS }), 'valid.tls.test');
    expect(codes(in20.findings)).toEqual(['medium:expires_within_30_days']);
    expect(in20.checked_at).toBe(new Date(now + 70 * DAY_MS).toISOString());
  });

  it('an IP literal target sends no SNI and is matched against IP SANs', async () => {
    const target = targets.valid!;
    // Earlier handshakes may still be finishing on the server side.
    await vi.waitFor(() => expect(target.servernames.length).toBe(target.connections), { timeout: 15_000 });
    const before = target.servernames.length;
    const tls = await tlsOf(await app(), `https://${target.address}:443/some/path`);
    expect(tls.host).toBe(target.address);
    expect(tls.connection.sni).toBeNull();
    await vi.waitFor(() => expect(target.servernames.slice(before)).toEqual([false]), { timeout: 15_000 });
    expect(tls.connection.hostname_matches).toBe(false);
    expect(codes(tls.findings)).toEqual(['critical:name_mismatch']);
  });
});

describe('GET /api/tls refusals and failures', () => {
  it('a name resolving outside the allowed ranges is a 400 and the target sees no connection', async () => {
    const a = await app();
    const before = targets.canary!.connections;
    const res = await inspect(a, 'canary.tls.test');
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ code: 'bad_request' });
    expect(res.json().error).toContain('not a public address');
    expect(res.headers['cache-control']).toBe('no-store');
    expect(targets.canary!.connections).toBe(before);
  });

  it.each([
    ['169.254.169.254', 'cloud metadata'],
    ['[::ffff:127.77.0.1]', 'IPv4-mapped canary'],
    ['0x7f.77.0.1', 'hex spelling of the canary'],
  ])('the literal %s (%s) is a 400 without a connection', async (target) => {
    const before = targets.canary!.connections;
    const res = await inspect(await app(), target);
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toContain('not a public address');
    expect(targets.canary!.connections).toBe(before);
  });

  it.each([
    ['', 'must not be empty'],
    ['valid.tls.test:8443', 'port 8443'],
    ['ftp://valid.tls.test/', 'scheme ftp'],
    ['https://user:pw@valid.tls.test/', 'user:password'],
    ['valid.tls.test/path', 'host name'],
    ['exa mple.com', 'host name'],
  ])('bad input %j is a 400 naming target', async (target, why) => {
    const res = await inspect(await app(), target);
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toMatch(/^target /);
    expect(res.json().error).toContain(why);
  });

  // Issue 31: what the target did instead of a handshake is what the user came to learn, an
  // answer (200); a 502 is kept for our own providers' failures.
  it('connection refused: an answer naming the connect stage, never cached', async () => {
    const a = await app();
    for (let i = 0; i < 2; i++) {
      const res = await inspect(a, 'refused.tls.test');
      expect(res.statusCode).toBe(200);
      const { tls } = res.json() as TlsResponse;
      expect(tls).toMatchObject({ status: 'error', stage: 'connect' });
      expect(tls.status === 'error' && tls.error).toContain('connect stage');
      expect(res.headers['cache-control']).toBe('no-store');
      expect(res.headers['x-service-cache']).toBeUndefined();
    }
  });

  it('a server that never answers the hello: an answer naming the tls handshake stage after the timeout', async () => {
    const res = await inspect(await app({ timeoutMs: 400 }), 'silent.tls.test');
    expect(res.statusCode).toBe(200);
    const { tls } = res.json() as TlsResponse;
    expect(tls).toMatchObject({ status: 'error', stage: 'tls handshake' });
    expect(tls.status === 'error' && tls.error).toContain('tls handshake stage (timeout)');
  });

  it('a name that does not exist is a 400', async () => {
    const res = await inspect(await app(), 'nothing-here.tls.test');
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toContain('NXDOMAIN');
  });
});
