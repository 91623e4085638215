/**
 * Real TLS servers for the TLS scan's tests and benchmark, each configured so
 * that what it offers is known exactly: `openssl s_server` profiles (Debian's
 * OpenSSL 3.0) and `gnutls-serv` (a second implementation). Each start helper
 * takes an address (127.0.0.x) and port (the scan uses 443; tests use high
 * ports) and resolves once the server accepts connections, with what it was
 * configured to accept (`expected`: protocols, suites in the server's order,
 * server preference, key types, groups) for the scan's answer to be held
 * against. Protocols Debian's OpenSSL no longer speaks (SSLv2, SSLv3, RC4,
 * export, 3DES) are test/fakes/tls-scan-legacy-server.ts's.
 *
 *   const peer = await startOpensslPeer('dualCert', { address: '127.0.0.20', port: 443 });
 *   ...  // scan peer.address:peer.port, compare with peer.expected
 *   await peer.stop();
 *
 * s_server serves one connection at a time (the others wait in the backlog).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { getDiffieHellman } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CIPHER_SUITES } from '../../src/tls-scan/cipher-suites.js';
import type { GroupName, ProtocolName } from '../../src/tls-scan/client-hello.js';
import { dyingWithUs, findTool, terminate } from './bind-named.js';
import { getTestPki, type IssuedCert, rsaServerLeaf } from './test-ca.js';

export type KeyType = 'RSA' | 'ECDSA';

/** What a peer was configured to accept, for a scan's answer to be held against. */
export interface PeerExpectation {
  /** The versions it accepts, lowest first. */
  protocols: ProtocolName[];
  /** IANA code points accepted per version: in the server's order where it enforces one. */
  suites: Partial<Record<ProtocolName, number[]>>;
  /** Per version: true (server's order), false (client's), null (one suite: cannot tell). */
  serverPreference: Partial<Record<ProtocolName, boolean | null>>;
  /** The leaf key types it serves. */
  keyTypes: KeyType[];
  /** The key-exchange groups it accepts, where the profile restricts them. */
  groups?: GroupName[];
  /** With -prioritize_chacha: a client that lists ChaCha20 first gets it despite the server's order. */
  prioritizeChaCha?: boolean;
  /** The DHE prime's size in bits, where DHE suites are accepted. */
  dhBits?: number;
}

export interface PeerAddress {
  /** 127.0.0.x (the test CA's leaves name 127.0.0.1-9; a scan by address sends no SNI anyway). */
  address: string;
  port: number;
}

export interface TlsPeer extends PeerAddress {
  expected: PeerExpectation;
  stop(): Promise<void>;
}

/** Why openssl s_server cannot run here, or undefined. */
export function opensslUnavailable(): string | undefined {
  return findTool('openssl') ? undefined : 'openssl not found (Debian: apt-get install openssl)';
}

const TLS13_ALL = 'TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256:TLS_AES_128_GCM_SHA256';
const TLS13_ALL_CODES = [0x1302, 0x1303, 0x1301];

interface OpensslProfile {
  /** The certificate s_server's -cert gets; dualCert adds the other as -dcert. */
  leaf: 'ecdsa' | 'rsa' | 'dual';
  /** s_server arguments beyond -accept, -cert, -key. */
  args: string[];
  expected: Omit<PeerExpectation, 'keyTypes'>;
}

/** OpenSSL names → code points, through the suite table (a typo fails loudly). */
function codes(opensslNames: string): number[] {
  return opensslNames.split(':').map((name) => {
    const suite = CIPHER_SUITES.find((s) => s.opensslName === name);
    if (!suite) throw new Error(`no suite named ${name}`);
    return suite.code;
  });
}

const SERVERPREF_12 =
  'ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-ECDSA-AES128-GCM-SHA256:' +
  'ECDHE-RSA-AES256-GCM-SHA384:ECDHE-RSA-CHACHA20-POLY1305:ECDHE-RSA-AES128-GCM-SHA256';
/** Of SERVERPREF_12, what an ECDSA leaf can serve: the ECDHE-RSA suites are configured, never accepted. */
const SERVERPREF_12_ECDSA = codes(
  'ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-ECDSA-AES128-GCM-SHA256',
);
const CHACHA_LAST_12 =
  'ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-ECDSA-CHACHA20-POLY1305';
const CHACHA_LAST_13 = 'TLS_AES_256_GCM_SHA384:TLS_AES_128_GCM_SHA256:TLS_CHACHA20_POLY1305_SHA256';
// No 3DES: Debian's OpenSSL 3.0 has no DES-CBC3-SHA even at @SECLEVEL=0 (gnutls-serv and the
// legacy fake offer it). TLS 1.0 and 1.1 need @SECLEVEL=0 for their MD5+SHA-1 signatures.
const LEGACY_CBC_10 = 'ECDHE-RSA-AES256-SHA:ECDHE-RSA-AES128-SHA:AES256-SHA:AES128-SHA';
const LEGACY_CBC_12 = `${LEGACY_CBC_10}:AES128-SHA256`;
const DUAL_12 =
  'ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256';
const DHE_12 = 'DHE-RSA-AES256-GCM-SHA384:DHE-RSA-AES128-GCM-SHA256';

export const OPENSSL_PROFILES = {
  tls13Only: {
    leaf: 'ecdsa',
    args: ['-tls1_3', '-ciphersuites', TLS13_ALL],
    expected: {
      protocols: ['TLSv1.3'],
      suites: { 'TLSv1.3': TLS13_ALL_CODES },
      serverPreference: { 'TLSv1.3': false },
    },
  },
  tls12and13ServerPref: {
    leaf: 'ecdsa',
    args: ['-min_protocol', 'TLSv1.2', '-cipher', SERVERPREF_12, '-ciphersuites', TLS13_ALL, '-serverpref'],
    expected: {
      protocols: ['TLSv1.2', 'TLSv1.3'],
      suites: { 'TLSv1.2': SERVERPREF_12_ECDSA, 'TLSv1.3': TLS13_ALL_CODES },
      serverPreference: { 'TLSv1.2': true, 'TLSv1.3': true },
    },
  },
  tls12and13ClientPref: {
    leaf: 'ecdsa',
    args: ['-min_protocol', 'TLSv1.2', '-cipher', SERVERPREF_12, '-ciphersuites', TLS13_ALL],
    expected: {
      protocols: ['TLSv1.2', 'TLSv1.3'],
      suites: { 'TLSv1.2': SERVERPREF_12_ECDSA, 'TLSv1.3': TLS13_ALL_CODES },
      serverPreference: { 'TLSv1.2': false, 'TLSv1.3': false },
    },
  },
  /** SSL_OP_PRIORITIZE_CHACHA: the server's order, except that a client listing ChaCha20 first gets it. */
  prioritizeChaCha: {
    leaf: 'ecdsa',
    args: [
      '-min_protocol',
      'TLSv1.2',
      '-cipher',
      CHACHA_LAST_12,
      '-ciphersuites',
      CHACHA_LAST_13,
      '-serverpref',
      '-prioritize_chacha',
    ],
    expected: {
      protocols: ['TLSv1.2', 'TLSv1.3'],
      suites: { 'TLSv1.2': codes(CHACHA_LAST_12), 'TLSv1.3': [0x1302, 0x1301, 0x1303] },
      serverPreference: { 'TLSv1.2': true, 'TLSv1.3': true },
      prioritizeChaCha: true,
    },
  },
  legacyCbc: {
    leaf: 'rsa',
    args: [
      '-min_protocol',
      'TLSv1',
      '-max_protocol',
      'TLSv1.2',
      '-cipher',
      `${LEGACY_CBC_12}:@SECLEVEL=0`,
      '-serverpref',
    ],
    expected: {
      protocols: ['TLSv1', 'TLSv1.1', 'TLSv1.2'],
      suites: {
        TLSv1: codes(LEGACY_CBC_10),
        'TLSv1.1': codes(LEGACY_CBC_10),
        'TLSv1.2': codes(LEGACY_CBC_12),
      },
      serverPreference: { TLSv1: true, 'TLSv1.1': true, 'TLSv1.2': true },
    },
  },
  singleSuite: {
    leaf: 'ecdsa',
    args: ['-tls1_2', '-cipher', 'ECDHE-ECDSA-AES128-GCM-SHA256'],
    expected: {
      protocols: ['TLSv1.2'],
      suites: { 'TLSv1.2': codes('ECDHE-ECDSA-AES128-GCM-SHA256') },
      serverPreference: { 'TLSv1.2': null },
    },
  },
  /** ECDSA leaf as -cert, RSA leaf as -dcert: each suite's authentication picks its leaf. */
  dualCert: {
    leaf: 'dual',
    args: ['-min_protocol', 'TLSv1.2', '-cipher', DUAL_12, '-ciphersuites', TLS13_ALL, '-serverpref'],
    expected: {
      protocols: ['TLSv1.2', 'TLSv1.3'],
      suites: { 'TLSv1.2': codes(DUAL_12), 'TLSv1.3': TLS13_ALL_CODES },
      serverPreference: { 'TLSv1.2': true, 'TLSv1.3': true },
    },
  },
  /** TLS 1.2 DHE-RSA only, with a prime of `dhBits` (1024 needs @SECLEVEL=0, hence always set). */
  dheOnly: {
    leaf: 'rsa',
    args: ['-tls1_2', '-cipher', `${DHE_12}:@SECLEVEL=0`, '-serverpref'],
    expected: {
      protocols: ['TLSv1.2'],
      suites: { 'TLSv1.2': codes(DHE_12) },
      serverPreference: { 'TLSv1.2': true },
    },
  },
  /** secp384r1 and ffdhe3072 only: a TLS 1.3 hello with an x25519 share gets a HelloRetryRequest. */
  groupsRestricted: {
    leaf: 'ecdsa',
    args: [
      '-min_protocol',
      'TLSv1.2',
      '-cipher',
      'ECDHE-ECDSA-AES128-GCM-SHA256',
      '-ciphersuites',
      TLS13_ALL,
      '-groups',
      'secp384r1:ffdhe3072',
      '-serverpref',
    ],
    expected: {
      protocols: ['TLSv1.2', 'TLSv1.3'],
      suites: { 'TLSv1.2': codes('ECDHE-ECDSA-AES128-GCM-SHA256'), 'TLSv1.3': TLS13_ALL_CODES },
      serverPreference: { 'TLSv1.2': null, 'TLSv1.3': true },
      groups: ['secp384r1', 'ffdhe3072'],
    },
  },
  /** Staples the DER OCSP response in `statusFile` to a client that asks (status_request). */
  ocspStapling: {
    leaf: 'ecdsa',
    args: ['-min_protocol', 'TLSv1.2', '-cipher', SERVERPREF_12, '-ciphersuites', TLS13_ALL, '-serverpref'],
    expected: {
      protocols: ['TLSv1.2', 'TLSv1.3'],
      suites: { 'TLSv1.2': SERVERPREF_12_ECDSA, 'TLSv1.3': TLS13_ALL_CODES },
      serverPreference: { 'TLSv1.2': true, 'TLSv1.3': true },
    },
  },
} satisfies Record<string, OpensslProfile>;

export type OpensslProfileName = keyof typeof OPENSSL_PROFILES;

export interface OpensslPeerOptions extends PeerAddress {
  /** ocspStapling: the DER OCSPResponse to staple (required there, refused elsewhere). */
  statusFile?: string;
  /** dheOnly: the prime's size; RFC 2409/3526 MODP groups (1024: group 2, 2048: group 14). Default 2048. */
  dhBits?: 1024 | 2048 | 3072 | 4096;
}

/** Starts `openssl s_server` with a profile on address:port; resolves once it accepts connections. */
export async function startOpensslPeer(name: OpensslProfileName, opts: OpensslPeerOptions): Promise<TlsPeer> {
  const profile: OpensslProfile = OPENSSL_PROFILES[name];
  if ((name === 'ocspStapling') !== (opts.statusFile !== undefined))
    throw new Error('statusFile goes with the ocspStapling profile, and it needs one');
  const dir = mkdtempSync(join(tmpdir(), 'netdiag-tls-peer-'));
  const args = ['s_server', '-accept', `${opts.address}:${opts.port}`, '-quiet'];
  const [ecdsa, rsa] = await Promise.all([getTestPki().then((p) => p.server), rsaServerLeaf()]);
  const first = profile.leaf === 'rsa' ? rsa : ecdsa;
  args.push(...pemArgs(dir, 'leaf', first, '-cert', '-key'));
  if (profile.leaf === 'dual') args.push(...pemArgs(dir, 'second', rsa, '-dcert', '-dkey'));
  let dhBits: number | undefined;
  if (name === 'dheOnly') {
    dhBits = opts.dhBits ?? 2048;
    const file = join(dir, 'dh.pem');
    writeFileSync(file, dhParamsPem(dhBits));
    args.push('-dhparam', file);
  }
  if (opts.statusFile) args.push('-status_file', opts.statusFile);
  args.push(...profile.args);

  const keyTypes: KeyType[] = profile.leaf === 'dual' ? ['ECDSA', 'RSA'] : [first === rsa ? 'RSA' : 'ECDSA'];
  const expected: PeerExpectation = { ...profile.expected, keyTypes, ...(dhBits ? { dhBits } : {}) };
  const stopChild = await startChild('openssl', args, opts, `s_server ${name}`, () =>
    rmSync(dir, { recursive: true, force: true }),
  );
  return { address: opts.address, port: opts.port, expected, stop: stopChild };
}

/** Writes a leaf's PEMs into `dir` and returns the two flags that name them. */
export function pemArgs(
  dir: string,
  name: string,
  leaf: IssuedCert,
  certFlag: string,
  keyFlag: string,
): string[] {
  const cert = join(dir, `${name}.pem`);
  const key = join(dir, `${name}.key`);
  writeFileSync(cert, leaf.certPem);
  writeFileSync(key, leaf.keyPem, { mode: 0o600 });
  return [certFlag, cert, keyFlag, key];
}

/**
 * A PKCS#3 DHParameter (SEQUENCE { prime, base }, PEM "DH PARAMETERS") for a well-known
 * MODP group: fixed primes, so nothing is generated (a safe-prime search takes seconds).
 */
export function dhParamsPem(bits: number): string {
  const group = { 1024: 'modp2', 2048: 'modp14', 3072: 'modp15', 4096: 'modp16' }[bits];
  if (!group) throw new Error(`no MODP group of ${bits} bits`);
  const dh = getDiffieHellman(group);
  const der = derSequence([derInteger(dh.getPrime()), derInteger(dh.getGenerator())]);
  const b64 = der.toString('base64').replace(/.{64}/g, '$&\n');
  return `-----BEGIN DH PARAMETERS-----\n${b64.trim()}\n-----END DH PARAMETERS-----\n`;
}

function derLength(length: number): Buffer {
  if (length < 0x80) return Buffer.from([length]);
  const bytes = Buffer.from(length.toString(16).padStart(length > 0xff ? 4 : 2, '0'), 'hex');
  return Buffer.concat([Buffer.from([0x80 | bytes.length]), bytes]);
}

function derInteger(unsigned: Buffer): Buffer {
  // A leading zero keeps a value with its top bit set positive (X.690 §8.3).
  const value = unsigned[0]! & 0x80 ? Buffer.concat([Buffer.from([0]), unsigned]) : unsigned;
  return Buffer.concat([Buffer.from([0x02]), derLength(value.length), value]);
}

function derSequence(items: Buffer[]): Buffer {
  const body = Buffer.concat(items);
  return Buffer.concat([Buffer.from([0x30]), derLength(body.length), body]);
}

/**
 * Spawns a server (dying with this process where setpriv can arrange it) and waits until
 * `at` accepts a connection; the returned stop() ends it and then runs `cleanup`.
 */
export async function startChild(
  command: string,
  args: string[],
  at: PeerAddress,
  label: string,
  cleanup: () => void,
): Promise<() => Promise<void>> {
  const [file, ...argv] = dyingWithUs([command, ...args]);
  const child = spawn(file!, argv, { stdio: ['ignore', 'ignore', 'pipe'] });
  let output = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-4_000);
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const stop = async () => {
    await terminate(child);
    cleanup();
  };
  try {
    await Promise.race([
      exited.then((code) => {
        throw new Error(`${label} on ${at.address}:${at.port} exited ${code}: ${output.trim()}`);
      }),
      waitForListener(at, child),
    ]);
  } catch (err) {
    await stop();
    throw err;
  }
  return stop;
}

/** Connects until something listens (a server's "ready" line may sit in a pipe's buffer). */
async function waitForListener(at: PeerAddress, child: ChildProcess): Promise<void> {
  for (let attempt = 0; attempt < 200 && child.exitCode === null; attempt++) {
    const up = await new Promise<boolean>((resolve) => {
      const socket = connect({ host: at.address, port: at.port }, () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (up) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`nothing listens on ${at.address}:${at.port}`);
}
