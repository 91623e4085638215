/**
 * The TLS scan's wire layer against a real server: hand-made ClientHellos
 * sent to `openssl s_server` profiles on loopback, through the outbound
 * client's raw TCP exchange, and the parsed answers held against what each
 * server was configured to offer. Where `openssl` is missing the suite is
 * skipped and says why (CI's image has it).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Outbound } from '../../src/net/outbound.js';
import { cipherSuite } from '../../src/tls-scan/cipher-suites.js';
import { buildClientHello, type ClientHelloOptions, NAMED_GROUPS } from '../../src/tls-scan/client-hello.js';
import { probeHello } from '../../src/tls-scan/probe.js';
import { hostsResolver } from '../fakes/address-resolver.js';
import { getTestPki } from '../fakes/test-ca.js';
import { opensslVersion } from '../openssl-s-client.js';

const openssl = opensslVersion();
if (!openssl) console.warn('tls-scan-probe: SKIPPED, `openssl` is not on PATH (CI installs it)');

const PORT = 4433;
/** Every suite the table knows for TLS 1.2 and below, strongest kinds first as a client would. */
const ALL_TLS12 = [
  0xcca9, 0xc02c, 0xc02b, 0xc030, 0xc02f, 0xc024, 0xc023, 0xc00a, 0xc009, 0x009f, 0x009e, 0x0035, 0x002f,
  0x000a,
];
const ALL_TLS13 = [0x1301, 0x1302, 0x1303, 0x1304, 0x1305];

interface Profile {
  address: string;
  args: string[];
}

/** The servers, each on its own loopback address (the test CA's leaf is ECDSA P-256). */
const PROFILES = {
  tls13Only: { address: '127.0.0.2', args: ['-tls1_3', '-ciphersuites', 'TLS_AES_256_GCM_SHA384'] },
  tls12OneSuite: { address: '127.0.0.3', args: ['-tls1_2', '-cipher', 'ECDHE-ECDSA-AES128-GCM-SHA256'] },
  noChaCha: {
    address: '127.0.0.4',
    args: [
      '-cipher',
      'ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-ECDSA-AES128-GCM-SHA256',
      '-ciphersuites',
      'TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384',
      '-serverpref',
    ],
  },
} satisfies Record<string, Profile>;

describe.skipIf(!openssl)('tls-scan probe against openssl s_server', () => {
  const servers: ChildProcess[] = [];
  let dir: string;
  const outbound = new Outbound({
    resolver: hostsResolver({}),
    allowCidrs: ['127.0.0.0/8'],
    timeoutMs: 5_000,
    limits: { liveProbes: 8, smtpSessions: 2, waitMs: 1_000 },
  });

  beforeAll(async () => {
    const pki = await getTestPki();
    dir = mkdtempSync(join(tmpdir(), 'tls-scan-'));
    writeFileSync(join(dir, 'cert.pem'), pki.server.certPem);
    writeFileSync(join(dir, 'key.pem'), pki.server.keyPem);
    await Promise.all(
      Object.values(PROFILES).map((p) =>
        startServer(p, join(dir, 'cert.pem'), join(dir, 'key.pem'), servers),
      ),
    );
  }, 20_000);

  afterAll(() => {
    for (const server of servers) server.kill();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const probe = (profile: Profile, opts: ClientHelloOptions) =>
    probeHello(
      outbound,
      { host: profile.address, port: PORT, allowedPorts: [PORT] },
      buildClientHello({ serverName: 'localhost', ...opts }).bytes,
      { timeoutMs: 5_000 },
    );

  it('TLS 1.3 only: the ServerHello says TLS 1.3 and the one configured suite, with an x25519 share', async () => {
    const result = await probe(PROFILES.tls13Only, { version: 'TLSv1.3', cipherSuites: ALL_TLS13 });
    expect(result.end).toBe('done');
    expect(result.reply).toMatchObject({
      kind: 'server_hello',
      version: 'TLSv1.3',
      cipherSuite: 0x1302,
      extensions: { keyShareGroup: NAMED_GROUPS.x25519 },
    });
    expect(result.timings.totalMs).toBeLessThan(5_000);
    expect(result.timings.connectMs).toBeLessThanOrEqual(result.timings.totalMs);
  });

  it('TLS 1.3 only: a TLS 1.2 hello is refused with protocol_version', async () => {
    const result = await probe(PROFILES.tls13Only, { version: 'TLSv1.2', cipherSuites: ALL_TLS12 });
    expect(result.reply).toMatchObject({ kind: 'alert', level: 2, name: 'protocol_version' });
  });

  it('asks for a share in a HelloRetryRequest when the only group offered has none', async () => {
    const result = await probe(PROFILES.tls13Only, {
      version: 'TLSv1.3',
      cipherSuites: ALL_TLS13,
      groups: [NAMED_GROUPS.secp384r1],
      keyShares: [],
    });
    expect(result.reply).toMatchObject({
      kind: 'hello_retry_request',
      version: 'TLSv1.3',
      cipherSuite: 0x1302,
      selectedGroup: NAMED_GROUPS.secp384r1,
    });
  });

  it('TLS 1.2 with one suite: that suite is chosen out of many, with the TLS 1.2 features', async () => {
    const result = await probe(PROFILES.tls12OneSuite, {
      version: 'TLSv1.2',
      cipherSuites: ALL_TLS12,
      alpn: ['h2', 'http/1.1'],
    });
    expect(result.reply).toMatchObject({
      kind: 'server_hello',
      version: 'TLSv1.2',
      cipherSuite: 0xc02b,
      compressionMethod: 0,
      extensions: { secureRenegotiation: true, extendedMasterSecret: true },
    });
    if (result.reply.kind !== 'server_hello') throw new Error('unreachable');
    expect(cipherSuite(result.reply.cipherSuite)?.opensslName).toBe('ECDHE-ECDSA-AES128-GCM-SHA256');
    // s_server's certificate follows in the same flight, whole or not; at least the ServerHello was read alone.
    expect(result.bytesReceived).toBeGreaterThan(0);
  });

  it('TLS 1.2 with one suite: a hello without it gets a handshake_failure alert', async () => {
    const result = await probe(PROFILES.tls12OneSuite, {
      version: 'TLSv1.2',
      cipherSuites: [0xc02c, 0xc030],
    });
    expect(result.reply).toMatchObject({ kind: 'alert', level: 2, name: 'handshake_failure' });
  });

  it('no ChaCha: a TLS 1.3 hello of ChaCha20 alone is refused; ChaCha20 first gets AES', async () => {
    const only = await probe(PROFILES.noChaCha, { version: 'TLSv1.3', cipherSuites: [0x1303] });
    expect(only.reply).toMatchObject({ kind: 'alert', name: 'handshake_failure' });
    const first = await probe(PROFILES.noChaCha, { version: 'TLSv1.3', cipherSuites: [0x1303, 0x1301] });
    expect(first.reply).toMatchObject({ kind: 'server_hello', version: 'TLSv1.3', cipherSuite: 0x1301 });
    const tls12 = await probe(PROFILES.noChaCha, {
      version: 'TLSv1.2',
      cipherSuites: [0xcca9, 0xc02b, 0xc02c],
    });
    // -serverpref: the server's first suite wins over the client's order.
    expect(tls12.reply).toMatchObject({ kind: 'server_hello', version: 'TLSv1.2', cipherSuite: 0xc02c });
  });

  it('reports a closed port as a connect failure, not as an answer', async () => {
    await expect(
      probeHello(outbound, { host: '127.0.0.9', port: PORT, allowedPorts: [PORT] }, Buffer.from([0x16]), {
        timeoutMs: 2_000,
      }),
    ).rejects.toMatchObject({ stage: 'connect' });
  });

  it('refuses a port outside the allowed ones before connecting', async () => {
    await expect(
      probeHello(outbound, { host: '127.0.0.2', port: PORT }, Buffer.from([0x16]), { timeoutMs: 2_000 }),
    ).rejects.toMatchObject({ statusCode: 400 });
  });
});

/** Starts `openssl s_server` for a profile and resolves once it accepts connections. */
function startServer(profile: Profile, cert: string, key: string, servers: ChildProcess[]): Promise<void> {
  const child = spawn(
    'openssl',
    [
      's_server',
      '-accept',
      `${profile.address}:${PORT}`,
      '-cert',
      cert,
      '-key',
      key,
      '-quiet',
      ...profile.args,
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  servers.push(child);
  let output = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  // Its stdout is block-buffered into a pipe, so 'ACCEPT' may never show: connect until it answers.
  const exited = new Promise<never>((_, reject) =>
    child.once('exit', (code) => reject(new Error(`s_server ${profile.address} exited ${code}: ${output}`))),
  );
  return Promise.race([exited, waitForListener(profile.address, PORT)]);
}

async function waitForListener(host: string, port: number): Promise<void> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const up = await new Promise<boolean>((resolve) => {
      const socket = connect({ host, port }, () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (up) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`nothing listens on ${host}:${port}`);
}
