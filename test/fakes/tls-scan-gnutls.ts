/**
 * gnutls-serv as a TLS scan peer: a second implementation beside OpenSSL's
 * (test/fakes/tls-scan-peers.ts has the shared types and the s_server profiles).
 * gnutls-serv cannot bind one address: it listens on every address of its port,
 * which would collide with s_server's 127.0.0.x:443. So it runs on a free port of
 * its own and a forwarder on address:port passes the bytes through unchanged.
 * The forwarder runs in this process's event loop: a caller that blocks it
 * (spawnSync of testssl.sh, execFileSync of s_client) waits for an answer forever.
 *
 *   const peer = await startGnutlsPeer({ address: '127.0.0.30', port: 443, priority: GNUTLS_PRIORITIES.tls12and13 });
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PROTOCOL_VERSIONS, type ProtocolName } from '../../src/tls-scan/client-hello.js';
import { findTool } from './bind-named.js';
import { FakeLifecycle } from './lifecycle.js';
import { getTestPki, rsaServerLeaf } from './test-ca.js';
import {
  type KeyType,
  type PeerAddress,
  type PeerExpectation,
  pemArgs,
  startChild,
  type TlsPeer,
} from './tls-scan-peers.js';

/** Why gnutls-serv cannot run here, or undefined. */
export function gnutlsUnavailable(): string | undefined {
  return findTool('gnutls-serv') && findTool('gnutls-cli')
    ? undefined
    : 'gnutls-serv or gnutls-cli not found (Debian: apt-get install gnutls-bin)';
}

/** gnutls-serv priority strings (gnutls_priority_init(3)); NORMAL honours the client's order. */
export const GNUTLS_PRIORITIES = {
  tls12and13: 'NORMAL:-VERS-ALL:+VERS-TLS1.2:+VERS-TLS1.3',
  tls12and13ServerPref: 'NORMAL:-VERS-ALL:+VERS-TLS1.2:+VERS-TLS1.3:%SERVER_PRECEDENCE',
  /** TLS 1.0-1.2 with 3DES, which Debian's OpenSSL no longer has. */
  legacy3des: 'NORMAL:-VERS-ALL:+VERS-TLS1.0:+VERS-TLS1.1:+VERS-TLS1.2:+3DES-CBC:%SERVER_PRECEDENCE',
} as const;

export interface GnutlsPeerOptions extends PeerAddress {
  priority: string;
  /** The leaf's key; default ECDSA. */
  keyType?: KeyType;
  /** A DER OCSPResponse to staple (--ocsp-response). */
  ocspResponse?: string;
  /** Advertise the heartbeat extension (RFC 6520). */
  heartbeat?: boolean;
}

/**
 * Starts `gnutls-serv` with a priority string. It listens on every address of a free
 * port of its own; a forwarder on address:port passes the bytes through unchanged.
 */
export async function startGnutlsPeer(opts: GnutlsPeerOptions): Promise<TlsPeer> {
  const dir = mkdtempSync(join(tmpdir(), 'netdiag-gnutls-peer-'));
  const keyType = opts.keyType ?? 'ECDSA';
  const leaf = keyType === 'RSA' ? await rsaServerLeaf() : (await getTestPki()).server;
  const backendPort = await freePort();
  const args = [
    '--quiet',
    '--port',
    String(backendPort),
    '--priority',
    opts.priority,
    ...pemArgs(dir, 'leaf', leaf, '--x509certfile', '--x509keyfile'),
    ...(opts.ocspResponse ? ['--ocsp-response', opts.ocspResponse] : []),
    ...(opts.heartbeat ? ['--heartbeat'] : []),
  ];
  const backend: PeerAddress = { address: '127.0.0.1', port: backendPort };
  const stopChild = await startChild('gnutls-serv', args, backend, 'gnutls-serv', () =>
    rmSync(dir, { recursive: true, force: true }),
  );
  let stopForwarder: () => Promise<void>;
  try {
    stopForwarder = await forward(opts, backend);
  } catch (err) {
    await stopChild();
    throw err;
  }
  return {
    address: opts.address,
    port: opts.port,
    expected: gnutlsExpectation(opts.priority, keyType),
    stop: async () => {
      await stopForwarder();
      await stopChild();
    },
  };
}

const GNUTLS_VERSIONS: Record<string, ProtocolName> = {
  'TLS1.0': 'TLSv1',
  'TLS1.1': 'TLSv1.1',
  'TLS1.2': 'TLSv1.2',
  'TLS1.3': 'TLSv1.3',
};

/**
 * What a gnutls-serv with `priority` and a `keyType` leaf accepts, from `gnutls-cli -l`
 * (the suites in priority order, each with the first version it exists in): those the leaf
 * can authenticate, for each version enabled from that one on (TLS 1.3's apart).
 */
export function gnutlsExpectation(priority: string, keyType: KeyType): PeerExpectation {
  const listing = execFileSync('gnutls-cli', ['-l', '--priority', priority], { encoding: 'utf8' });
  const protocols = (/^Protocols: (.*)$/m.exec(listing)?.[1] ?? '')
    .split(', ')
    .map((v) => GNUTLS_VERSIONS[v.replace(/^VERS-/, '')])
    .filter((v): v is ProtocolName => v !== undefined)
    // Listed in the priority string's order; lowest first here, as PeerExpectation has it.
    .sort((a, b) => PROTOCOL_VERSIONS[a] - PROTOCOL_VERSIONS[b]);
  const auth = keyType === 'RSA' ? /^TLS_(RSA|ECDHE_RSA|DHE_RSA)_/ : /^TLS_ECDHE_ECDSA_/;
  const suites: Partial<Record<ProtocolName, number[]>> = {};
  const add = (version: ProtocolName, code: number) => {
    suites[version] = [...(suites[version] ?? []), code];
  };
  const order = ['TLSv1', 'TLSv1.1', 'TLSv1.2'];
  for (const line of listing.split('\n')) {
    const m = /^(TLS_\w+)\s+0x([0-9a-f]{2}), 0x([0-9a-f]{2})\s+(TLS1\.\d)/.exec(line);
    if (!m) continue;
    const code = Number.parseInt(m[2]! + m[3]!, 16);
    const since = GNUTLS_VERSIONS[m[4]!]!;
    if (since === 'TLSv1.3') {
      if (protocols.includes('TLSv1.3')) add('TLSv1.3', code);
      continue;
    }
    if (!auth.test(m[1]!)) continue;
    for (const version of protocols) {
      if (version !== 'TLSv1.3' && order.indexOf(version) >= order.indexOf(since)) add(version, code);
    }
  }
  const precedence = priority.includes('%SERVER_PRECEDENCE');
  return {
    protocols,
    suites,
    serverPreference: Object.fromEntries(protocols.map((v) => [v, precedence])),
    keyTypes: [keyType],
  };
}

/** A port nothing listens on, on any address (gnutls-serv binds the wildcard). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '0.0.0.0', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** Listens on `from` and pipes each connection to `to`, byte for byte, both ways. */
async function forward(from: PeerAddress, to: PeerAddress): Promise<() => Promise<void>> {
  const life = new FakeLifecycle();
  const server: Server = createServer((client: Socket) => {
    life.track(client);
    const upstream = connect({ host: to.address, port: to.port });
    life.track(upstream);
    client.pipe(upstream).pipe(client);
    // Either side's end or failure ends the other, as a direct connection would.
    client.once('error', () => upstream.destroy());
    upstream.once('error', () => client.destroy());
    client.once('close', () => upstream.destroy());
    upstream.once('close', () => client.destroy());
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(from.port, from.address, () => resolve());
  });
  return () => life.close(server);
}
