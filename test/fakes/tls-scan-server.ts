/**
 * A web server for the TLS scan's views (site, CLI, MCP): `openssl s_server` on a free
 * 127.0.0.x:443 (port 443 needs root, as in CI or a test's own namespace) with a test-CA
 * certificate for `www.scan.test`, in the server's own order: TLS 1.3 with two suites, TLS 1.2
 * with three (ChaCha20 in the middle, not prioritised). What it offers is exported, so a test
 * holds the scan's answer to the configuration rather than to a copy of it.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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

const ARGS = [
  '-serverpref',
  '-no_tls1',
  '-no_tls1_1',
  '-ciphersuites',
  'TLS_AES_256_GCM_SHA384:TLS_AES_128_GCM_SHA256',
  '-cipher',
  'ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-ECDSA-AES128-GCM-SHA256',
];

export interface TlsScanServer {
  address: string;
  close(): Promise<void>;
}

/** Why the server cannot run here (no openssl), or undefined. */
export function tlsScanServerUnavailable(): string | undefined {
  const probe = spawnSync('openssl', ['version'], { encoding: 'utf8' });
  return probe.status === 0 ? undefined : '`openssl` is not on PATH';
}

/** The server on the first free 127.0.0.x:443 from a per-process start; undefined without root or openssl. */
export async function startTlsScanServer(): Promise<TlsScanServer | undefined> {
  if (tlsScanServerUnavailable()) return undefined;
  const pki = await getTestPki();
  const dir = mkdtempSync(join(tmpdir(), 'netdiag-scan-'));
  for (let i = 0; i < 20; i++) {
    const address = `127.0.0.${10 + ((process.pid * 17 + 101 + i) % 240)}`;
    const cert = await pki.issue({ dnsNames: [SCAN_HOST], ips: [address] });
    writeFileSync(join(dir, 'cert.pem'), cert.certPem);
    writeFileSync(join(dir, 'key.pem'), cert.keyPem);
    const child = spawn(
      'openssl',
      [
        's_server',
        '-accept',
        `${address}:443`,
        '-cert',
        join(dir, 'cert.pem'),
        '-key',
        join(dir, 'key.pem'),
        '-quiet',
        ...ARGS,
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let output = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    const exited = new Promise<false>((resolve) => child.once('exit', () => resolve(false)));
    const up = await Promise.race([exited, listening(address)]);
    if (up) {
      return {
        address,
        close: async () => {
          await stop(child);
          rmSync(dir, { recursive: true, force: true });
        },
      };
    }
    // Permission denied: no root, no server. Address in use: the next one.
    if (/Permission denied|errno=13/.test(output)) break;
  }
  rmSync(dir, { recursive: true, force: true });
  return undefined;
}

async function listening(host: string): Promise<boolean> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const up = await new Promise<boolean>((resolve) => {
      const socket = connect({ host, port: 443 }, () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (up) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return false;
}

function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill();
  });
}
