/**
 * Interop: what /api/tls reports against what `openssl s_client -showcerts`
 * sees on the same fake target (protocol, cipher, ALPN, key exchange group,
 * verification, and per certificate as sent: subject, issuer, serial,
 * SHA-256 fingerprint, chain length and order), through test/openssl-s-client.ts.
 * CI's Debian image has openssl; where it is missing the suite is
 * skipped and says why.
 */
import type { Socket } from 'node:net';
import { createServer as createTlsServer, type Server } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TlsEvidence, TlsResponse } from '../../src/features/tls/tls.schema.js';
import { type FakeDnsServer, startFakeDnsServer } from '../fakes/dns-server.js';
import { testZone } from '../fakes/dns-zones.js';
import { type HttpTarget, startHttpTarget } from '../fakes/http-targets.js';
import { getTestPki, type IssuedCert, type TestPki } from '../fakes/test-ca.js';
import { buildTestApp } from '../helper.js';
import { asCertificateViews, opensslVersion, type SClientView, sClientView } from '../openssl-s-client.js';

const DAY_MS = 24 * 60 * 60 * 1000;
/** A TLS 1.2-only target that sends its chain out of order, on its own address. */
const TLS12_ADDRESS = '127.0.202.1';

const openssl = opensslVersion();
if (openssl) console.info(`tls-openssl-interop: comparing with ${openssl}`);
else console.warn('tls-openssl-interop: SKIPPED, `openssl` is not on PATH (CI installs it)');

/** `openssl s_client` against address:443 with SNI `name`, verifying the chain and the name. */
function opensslView(address: string, name: string, caFile: string): Promise<SClientView> {
  return sClientView({
    connect: `${address}:443`,
    servername: name,
    verifyHostname: name,
    caFile,
    alpn: 'h2,http/1.1',
  });
}

describe.skipIf(!openssl)('/api/tls agrees with openssl s_client', () => {
  let pki: TestPki;
  let dns: FakeDnsServer;
  let h2Target: HttpTarget;
  let tls12: Server;
  const tls12Sockets = new Set<Socket>();

  const pemChain = (...certs: { certPem: string }[]) => certs.map((c) => `${c.certPem.trim()}\n`).join('');

  beforeAll(async () => {
    pki = await getTestPki();
    const intermediate = await pki.issueIntermediate();
    const notAfter = new Date(Date.now() + 90 * DAY_MS);
    const leaf13: IssuedCert = await pki.issue({
      dnsNames: ['interop13.tls.test'],
      issuer: intermediate,
      notAfter,
    });
    const leaf12: IssuedCert = await pki.issue({
      dnsNames: ['interop12.tls.test'],
      issuer: intermediate,
      notAfter,
    });
    h2Target = await startHttpTarget({
      protocol: 'https',
      h2: true,
      // A classical-groups server, as most are: the system's s_client may not offer the hybrid
      // post-quantum group Node 24 (OpenSSL 3.5) prefers, and the comparison needs one handshake.
      groups: 'X25519:P-256',
      cert: { certPem: pemChain(leaf13, intermediate), keyPem: leaf13.keyPem },
    });
    // Out of order on purpose: both sides must report the order as sent.
    tls12 = createTlsServer(
      {
        key: leaf12.keyPem,
        cert: pemChain(leaf12, { certPem: pki.caPem }, intermediate),
        maxVersion: 'TLSv1.2',
      },
      (socket) => socket.end(),
    );
    tls12.on('tlsClientError', () => {});
    tls12.on('connection', (socket: Socket) => {
      tls12Sockets.add(socket);
      socket.once('close', () => tls12Sockets.delete(socket));
    });
    await new Promise<void>((resolve) => tls12.listen(443, TLS12_ADDRESS, resolve));
    dns = await startFakeDnsServer({
      zones: [
        testZone('tls.test', [
          { name: 'interop13.tls.test', type: 'A', data: h2Target.address },
          { name: 'interop12.tls.test', type: 'A', data: TLS12_ADDRESS },
        ]),
      ],
    });
  });

  afterAll(async () => {
    for (const s of tls12Sockets) s.destroy();
    if (tls12) await new Promise((resolve) => tls12.close(resolve));
    await h2Target?.close();
    await dns?.close();
  });

  async function apiView(name: string): Promise<TlsEvidence> {
    const app = await buildTestApp({
      ca: pki.caPem,
      config: {
        dnsResolvers: [dns.doh],
        unsafeAllowTargetCidrs: ['127.0.0.0/16'],
        rateLimitExpensive: { points: 1_000, seconds: 60 },
      },
    });
    const res = await app.inject({ method: 'GET', url: '/api/tls', query: { target: name } });
    expect(res.statusCode, res.body).toBe(200);
    const { tls } = res.json() as TlsResponse;
    if (tls.status !== 'ok') throw new Error(`no TLS evidence: ${tls.error}`);
    return tls;
  }

  it.each([
    ['interop13.tls.test', () => h2Target.address],
    ['interop12.tls.test', () => TLS12_ADDRESS],
  ])(
    '%s: same protocol, cipher, ALPN, group, verdict and certificates in the same order',
    async (name, address) => {
      const [ours, theirs] = await Promise.all([apiView(name), opensslView(address(), name, pki.caFile)]);
      expect(theirs.certificates.length).toBeGreaterThan(0);

      expect(ours.connection.protocol).toBe(theirs.protocol);
      // s_client names TLS 1.3 suites by their IANA names and older ones by OpenSSL's.
      expect(ours.connection.cipher_openssl).toBe(theirs.cipher);
      expect(ours.connection.alpn).toBe(theirs.alpn);
      expect(theirs.tempKey).toContain(ours.connection.ephemeral_key?.curve ?? 'none');
      expect(ours.connection.authorized).toBe(theirs.verifyCode === 0);

      expect(ours.chain.sent_count).toBe(theirs.certificates.length);
      expect(asCertificateViews(ours.chain.certificates)).toEqual(theirs.certificates);
      expect(ours.leaf.fingerprint_sha256).toBe(theirs.certificates[0]!.fingerprint);
    },
  );
});
