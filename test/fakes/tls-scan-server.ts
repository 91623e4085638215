/**
 * A web server for the TLS scan's views (site, CLI, MCP): Node's TLS server (OpenSSL) in
 * process on a free 127.0.216.x:443 (port 443 needs root, as in CI or a test's own namespace)
 * with a test-CA certificate for `www.scan.test`, in the server's own order: TLS 1.3 with two
 * suites, TLS 1.2 with three (ChaCha20 in the middle, not prioritised). What it offers is
 * exported, so a test holds the scan's answer to the configuration rather than to a copy of it.
 * In process, not an `openssl s_server`: a taken address is EADDRINUSE at once, so the parallel
 * test files that each start one never share or steal one another's.
 */
import { createServer, type Server } from 'node:tls';
import { getTestPki } from './test-ca.js';

export const SCAN_HOST = 'www.scan.test';

/** The server's order, as IANA names them (the scan's `name`). */
export const SCAN_SERVER_SUITES = {
  'TLSv1.3': ['TLS_AES_256_GCM_SHA384', 'TLS_AES_128_GCM_SHA256'],
  'TLSv1.2': [
    'TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384',
    'TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256',
    'TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256',
  ],
} as const;

/** Node takes TLS 1.3 suites in the same list, in order (OpenSSL's SSL_CTX_set_ciphersuites). */
const CIPHERS = [
  'TLS_AES_256_GCM_SHA384',
  'TLS_AES_128_GCM_SHA256',
  'ECDHE-ECDSA-AES256-GCM-SHA384',
  'ECDHE-ECDSA-CHACHA20-POLY1305',
  'ECDHE-ECDSA-AES128-GCM-SHA256',
].join(':');

export interface TlsScanServer {
  address: string;
  close(): Promise<void>;
}

/** The server on the first free 127.0.216.x:443 from a per-process start; undefined without root. */
export async function startTlsScanServer(): Promise<TlsScanServer | undefined> {
  const pki = await getTestPki();
  for (let i = 0; i < 40; i++) {
    // Its own /24: the fixture app's web and mail servers take 127.0.0.x, and port 25 there must stay theirs.
    const address = `127.0.216.${10 + ((process.pid * 17 + 101 + i) % 240)}`;
    const cert = await pki.issue({ dnsNames: [SCAN_HOST], ips: [address] });
    const server: Server = createServer({
      cert: cert.certPem,
      key: cert.keyPem,
      minVersion: 'TLSv1.2',
      ciphers: CIPHERS,
      honorCipherOrder: true,
    });
    server.on('secureConnection', (socket) => socket.end('HTTP/1.1 204 No Content\r\n\r\n'));
    server.on('tlsClientError', () => {});
    try {
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(443, address, () => resolve());
      });
      return { address, close: () => new Promise((resolve) => server.close(() => resolve())) };
    } catch (err) {
      // Permission denied: no root, no server. Address in use: the next one.
      if ((err as NodeJS.ErrnoException).code === 'EACCES') return undefined;
    }
  }
  return undefined;
}
