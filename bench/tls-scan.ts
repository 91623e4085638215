/**
 * The TLS scan beside testssl.sh on the same loopback servers, in the same run: `openssl
 * s_server` profiles, `gnutls-serv` and the scripted legacy server of test/fakes/ (what each
 * offers is known). netdiag scans through GET /api/tls-scan (a new app per run: nothing
 * cached), testssl.sh (Debian's package, installed here with apt when missing and possible)
 * with `-p -E -P`: protocols, every suite per protocol, and the server's order — the part
 * of its work the scan's protocols, suites and preference answer. Both must report the same
 * protocols and suites; the table shows wall time, netdiag's handshakes, and the ratio.
 * Needs root for port 443 (or its own namespace) — and testssl.sh must be started without
 * blocking this process: the gnutls-serv peer's forwarder runs on this event loop.
 *
 *   unshare -rn sh -c 'ip link set lo up && npm run bench -- tls-scan [runs]'
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { buildApp } from '../src/app.js';
import { testConfig } from '../src/config/index.js';
import type { TlsScan, TlsScanResponse } from '../src/features/tls-scan/tls-scan.schema.js';
import { getTestPki } from '../test/fakes/test-ca.js';
import { GNUTLS_PRIORITIES, gnutlsUnavailable, startGnutlsPeer } from '../test/fakes/tls-scan-gnutls.js';
import { startLegacyTlsServer } from '../test/fakes/tls-scan-legacy-server.js';
import { opensslUnavailable, startOpensslPeer } from '../test/fakes/tls-scan-peers.js';

const runs = Number(process.argv[2] ?? 3);
const NET = '127.0.217';

function testsslPath(): string | undefined {
  const which = () =>
    spawnSync('sh', ['-c', 'command -v testssl || command -v testssl.sh'], { encoding: 'utf8' });
  let found = which().stdout.trim();
  if (!found && process.getuid?.() === 0 && spawnSync('sh', ['-c', 'command -v apt-get']).status === 0) {
    console.error('bench tls-scan: installing testssl.sh (Debian package)');
    spawnSync('apt-get', ['install', '-y', '-qq', 'testssl.sh'], { stdio: 'inherit' });
    found = which().stdout.trim();
  }
  return found || undefined;
}

const testssl = testsslPath();
const missing =
  opensslUnavailable() ?? gnutlsUnavailable() ?? (testssl ? undefined : 'testssl.sh is not installed');
if (missing) {
  console.error(`bench tls-scan: ${missing}`);
  process.exit(2);
}

interface Seen {
  protocols: string[];
  /** "protocol code", e.g. "TLSv1.2 0xC02F". */
  suites: string[];
}

/** testssl.sh's JSON: protocol ids SSLv2…TLS1_3, then `cipher-<proto>_x<hex>` per suite found. */
function fromTestssl(file: string): Seen {
  const entries = JSON.parse(readFileSync(file, 'utf8')) as { id: string; finding: string }[];
  const PROTOCOL: Record<string, string> = {
    SSLv2: 'SSLv2',
    SSLv3: 'SSLv3',
    TLS1: 'TLSv1',
    TLS1_1: 'TLSv1.1',
    TLS1_2: 'TLSv1.2',
    TLS1_3: 'TLSv1.3',
  };
  const protocols = entries
    .filter((e) => PROTOCOL[e.id] && /^offered/.test(e.finding))
    .map((e) => PROTOCOL[e.id]!);
  const suites = entries.flatMap((e) => {
    const m = /^cipher-(ssl2|ssl3|tls1|tls1_1|tls1_2|tls1_3)_x([0-9a-f]+)$/.exec(e.id);
    if (!m) return [];
    const protocol = {
      ssl2: 'SSLv2',
      ssl3: 'SSLv3',
      tls1: 'TLSv1',
      tls1_1: 'TLSv1.1',
      tls1_2: 'TLSv1.2',
      tls1_3: 'TLSv1.3',
    }[m[1]!]!;
    const digits = protocol === 'SSLv2' ? 6 : 4;
    return [`${protocol} 0x${m[2]!.toUpperCase().padStart(digits, '0')}`];
  });
  return { protocols: protocols.sort(), suites: suites.sort() };
}

function fromNetdiag(scan: TlsScan): Seen {
  return {
    protocols: scan.protocols
      .filter((p) => p.offered)
      .map((p) => p.name)
      .sort(),
    suites: scan.cipher_suites.map((s) => `${s.protocol} ${s.code}`).sort(),
  };
}

function runTestssl(address: string, jsonFile: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(
      testssl!,
      [
        '--quiet',
        '--color',
        '0',
        '--warnings',
        'off',
        '--nodns',
        'none',
        '--jsonfile',
        jsonFile,
        '-p',
        '-E',
        '-P',
        `${address}:443`,
      ],
      { stdio: 'ignore' },
    );
    child.once('error', reject);
    child.once('exit', () => resolve(performance.now() - started));
  });
}

async function scanWithNetdiag(address: string, ca: string): Promise<{ ms: number; scan: TlsScan }> {
  const app = await buildApp(
    testConfig({
      unsafeAllowTargetCidrs: [`${NET}.0/24`],
      rateLimitExpensive: { points: 1_000, seconds: 60 },
      loadShedEventLoopDelayMs: 0,
    }),
    { ca, logger: pino({ level: 'silent' }) },
  );
  try {
    const started = performance.now();
    const res = await app.inject({ url: `/api/tls-scan?target=${address}` });
    const ms = performance.now() - started;
    const { scan } = res.json<TlsScanResponse>();
    if (scan.status !== 'ok') throw new Error(`${address}: ${scan.error}`);
    return { ms, scan };
  } finally {
    await app.close();
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
const pki = await getTestPki();
const dir = mkdtempSync(join(tmpdir(), 'bench-tls-scan-'));
const PEERS: [string, () => Promise<{ stop(): Promise<void> }>][] = [
  [
    's_server TLS 1.2 + 1.3, server order',
    () => startOpensslPeer('tls12and13ServerPref', { address: `${NET}.2`, port: 443 }),
  ],
  ['s_server TLS 1.0–1.2 CBC', () => startOpensslPeer('legacyCbc', { address: `${NET}.3`, port: 443 })],
  ['s_server dual RSA + ECDSA', () => startOpensslPeer('dualCert', { address: `${NET}.4`, port: 443 })],
  [
    'gnutls-serv TLS 1.0–1.2 with 3DES',
    () =>
      startGnutlsPeer({
        address: `${NET}.5`,
        port: 443,
        priority: GNUTLS_PRIORITIES.legacy3des,
        keyType: 'RSA',
      }),
  ],
  [
    'scripted SSLv3 + TLS 1.0, RC4/export/3DES',
    () =>
      startLegacyTlsServer(
        { address: `${NET}.6`, port: 443 },
        { versions: ['SSLv3', 'TLSv1'], suites: [0x0005, 0x0003, 0x000a], serverPreference: true },
      ),
  ],
];

const rows: string[] = [];
try {
  for (const [i, [label, start]] of PEERS.entries()) {
    const address = `${NET}.${i + 2}`;
    const peer = await start();
    try {
      // A first scan not counted: V8 compiling the scan's code is not the scan.
      await scanWithNetdiag(address, pki.caPem);
      const ours: number[] = [];
      let last: TlsScan | undefined;
      for (let r = 0; r < runs; r++) {
        const { ms, scan } = await scanWithNetdiag(address, pki.caPem);
        ours.push(ms);
        last = scan;
      }
      const jsonFile = join(dir, `testssl-${i}.json`);
      const theirs = await runTestssl(address, jsonFile);
      const a = fromNetdiag(last!);
      const b = fromTestssl(jsonFile);
      const same = (x: string[], y: string[]) =>
        JSON.stringify(x) === JSON.stringify(y)
          ? 'same'
          : `differ: ${x.filter((v) => !y.includes(v)).join(' ')} | ${y.filter((v) => !x.includes(v)).join(' ')}`;
      rows.push(
        `| ${label} | ${median(ours).toFixed(0)} ms | ${last!.handshakes} | ${(theirs / 1000).toFixed(1)} s | ${(median(ours) / theirs).toFixed(3)} | ${same(a.protocols, b.protocols)} | ${same(a.suites, b.suites)} (${a.suites.length}) |`,
      );
    } finally {
      await peer.stop();
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}

console.log(
  `\nTLS scan beside testssl.sh ${'-p -E -P'}, netdiag median of ${runs} runs (a new app each: no cache)\n`,
);
console.log('| server | netdiag | handshakes | testssl.sh | netdiag / testssl.sh | protocols | suites |');
console.log('|---|---|---|---|---|---|---|');
for (const row of rows) console.log(row);
