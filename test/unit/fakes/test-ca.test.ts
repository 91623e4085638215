/**
 * The test PKI must be trusted exactly as a real one would be: these tests
 * prove that Node's TLS verifies its certificates for real (expiry, names,
 * issuer), so a passing TLS test elsewhere means something.
 */
import { execFile } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { AddressInfo, Socket } from 'node:net';
import { connect, createServer } from 'node:tls';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { getTestPki, type IssuedCert } from '../../fakes/test-ca.js';

const DAY_MS = 24 * 60 * 60 * 1000;

/** The outcome of one handshake: 'ok', or the verification error code. */
type Handshake = { ok: true } | { ok: false; code: string };

/** Serves `cert` on 127.0.0.1 and runs `client` against its port; the server is closed afterwards. */
async function withTlsServer<T>(cert: IssuedCert, client: (port: number) => Promise<T>): Promise<T> {
  const sockets = new Set<Socket>();
  const server = createServer({ key: cert.keyPem, cert: cert.certPem }, (socket) => socket.end());
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  // A client that rejects the certificate aborts the handshake; that is expected here.
  server.on('tlsClientError', () => {});
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    return await client((server.address() as AddressInfo).port);
  } finally {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

/** Connects trusting only the test CA; without `servername` the certificate must name 127.0.0.1. */
async function handshake(cert: IssuedCert, servername?: string): Promise<Handshake> {
  const { caPem } = await getTestPki();
  return withTlsServer(
    cert,
    (port) =>
      new Promise<Handshake>((resolve) => {
        const socket = connect({ host: '127.0.0.1', port, ca: caPem, servername }, () => {
          socket.destroy();
          resolve({ ok: true });
        });
        socket.once('error', (err: NodeJS.ErrnoException) => {
          socket.destroy();
          resolve({ ok: false, code: err.code ?? err.message });
        });
      }),
  );
}

describe('test PKI', () => {
  it('is generated once per process', async () => {
    const [a, b] = await Promise.all([getTestPki(), getTestPki()]);
    expect(a).toBe(b);
  });

  it('issues a server leaf for every loopback name, signed by the CA', async () => {
    const { caPem, server } = await getTestPki();
    const ca = new X509Certificate(caPem);
    const leaf = new X509Certificate(server.certPem);
    expect(ca.ca).toBe(true);
    expect(leaf.ca).toBe(false);
    expect(leaf.verify(ca.publicKey)).toBe(true);
    expect(leaf.checkHost('localhost')).toBe('localhost');
    for (const ip of ['127.0.0.1', '::1', '127.0.0.2', '127.0.0.9']) expect(leaf.checkIP(ip)).toBe(ip);
    expect(leaf.keyUsage).toEqual(['1.3.6.1.5.5.7.3.1']); // extKeyUsage serverAuth
    // A positive DER INTEGER: the top bit of the first byte is clear.
    expect(Number.parseInt(leaf.serialNumber.slice(0, 2), 16)).toBeLessThan(0x80);
  });

  it('writes the CA to caFile', async () => {
    const { caPem, caFile } = await getTestPki();
    expect(readFileSync(caFile, 'utf8')).toBe(caPem);
  });

  it('the server leaf passes verification by name and by address', async () => {
    const { server } = await getTestPki();
    expect(await handshake(server, 'localhost')).toEqual({ ok: true });
    expect(await handshake(server)).toEqual({ ok: true });
  });

  it('a leaf whose notAfter has passed fails with CERT_HAS_EXPIRED', async () => {
    const pki = await getTestPki();
    const expired = await pki.issue({ dnsNames: ['localhost'], notAfter: new Date(Date.now() - DAY_MS) });
    expect(await handshake(expired, 'localhost')).toEqual({ ok: false, code: 'CERT_HAS_EXPIRED' });
  });

  it('a leaf whose notBefore is in the future fails with CERT_NOT_YET_VALID', async () => {
    const pki = await getTestPki();
    const early = await pki.issue({ dnsNames: ['localhost'], notBefore: new Date(Date.now() + DAY_MS) });
    expect(await handshake(early, 'localhost')).toEqual({ ok: false, code: 'CERT_NOT_YET_VALID' });
  });

  it('a cert for a.test fails hostname verification for b.test', async () => {
    const pki = await getTestPki();
    const cert = await pki.issue({ dnsNames: ['a.test'] });
    expect(await handshake(cert, 'a.test')).toEqual({ ok: true });
    expect(await handshake(cert, 'b.test')).toEqual({ ok: false, code: 'ERR_TLS_CERT_ALTNAME_INVALID' });
    // Nor does it cover the address it is served from.
    expect(await handshake(cert)).toEqual({ ok: false, code: 'ERR_TLS_CERT_ALTNAME_INVALID' });
  });

  it('a self-signed leaf is not trusted through the CA', async () => {
    const pki = await getTestPki();
    const cert = await pki.issue({ dnsNames: ['localhost'], selfSigned: true });
    expect(await handshake(cert, 'localhost')).toEqual({ ok: false, code: 'DEPTH_ZERO_SELF_SIGNED_CERT' });
  });

  it('a child process trusts the CA through NODE_EXTRA_CA_CERTS', async () => {
    const { server, caFile } = await getTestPki();
    const script = `
      const socket = require('node:tls').connect({ host: '127.0.0.1', port: Number(process.argv[1]), servername: 'localhost' });
      socket.on('secureConnect', () => { console.log('trusted'); socket.destroy(); });
      socket.on('error', (err) => { console.log(err.code); });`;
    const { stdout } = await withTlsServer(server, (port) =>
      promisify(execFile)(process.execPath, ['-e', script, String(port)], {
        env: { ...process.env, NODE_EXTRA_CA_CERTS: caFile },
        timeout: 10_000,
      }),
    );
    expect(stdout.trim()).toBe('trusted');
  });
});
