/**
 * npm run bench -- replay-keys [spellings]: what 20 000 long distinct spellings of one
 * cached question leave in the process (issue 29 F5). The replays of cached answers
 * (plugins/response-cache.ts) are bounded; this shows the bound holds for what a caller
 * controls: the URL (an unknown query parameter still hits the cache) and Accept-Encoding.
 *
 * Each kind of spelling in a process of its own, run under `node --expose-gc` so a full
 * GC can be forced: the app (buildApp, limits lifted, a silent logger) against the fake
 * DNS server on loopback, asked over real sockets, ten at a time on keep-alive
 * connections, as a replay is only sent by the server's listener. The question asked
 * twice (a MISS, then a HIT, kept as a replay), a full GC, heap used, buffers and RSS;
 * then the spellings, each asked once (a HIT through Fastify, or a replay), a full GC,
 * the same figures again, and what the replay store holds as its bound counts it. The
 * answer is /api/spf's (1.4 KB of JSON; 0.55 KB when sent as br).
 *
 * Kinds: URLs of 15 000 characters (longer than REPLAY_URL_MAX: never kept); URLs of
 * 2 000 characters (kept, each counted with its key); Accept-Encoding values of 15 000
 * characters ending in `br` (each chooses br: one replay).
 */
import { spawnSync } from 'node:child_process';
import { Agent, request } from 'node:http';
import { fileURLToPath } from 'node:url';
import pino from 'pino';
import { buildApp } from '../src/app.js';
import { testConfig } from '../src/config/index.js';
import { startFakeDnsServer } from '../test/fakes/dns-server.js';
import { listen } from './lib.js';

const SPELLINGS = Number(process.argv[2] ?? 20_000);
/** Set in the process measuring one kind (an index into KINDS). */
const KIND = process.env.REPLAY_KEYS_KIND;
const CONCURRENCY = 10;
const PATH = '/api/spf?ip=192.0.2.1&domain=example.test';

interface Kind {
  name: string;
  spelling(i: number): { path: string; headers: Record<string, string> };
}

const padded = (i: number, length: number) => {
  const path = `${PATH}&pad=${i}-`;
  return path + 'p'.repeat(length - path.length);
};
const KINDS: Kind[] = [
  { name: 'URLs of 15 000 characters', spelling: (i) => ({ path: padded(i, 15_000), headers: {} }) },
  { name: 'URLs of 2 000 characters', spelling: (i) => ({ path: padded(i, 2_000), headers: {} }) },
  {
    name: 'Accept-Encoding of 15 000 characters',
    spelling: (i) => ({
      path: PATH,
      headers: { 'accept-encoding': `x-${i}-${'a'.repeat(15_000 - 12)}, br` },
    }),
  },
];

const mb = (bytes: number) => (bytes / 2 ** 20).toFixed(1);

/** After a full GC: V8's heap used, the buffers outside it (payloads), and the process's RSS. */
function settle(): { heap: number; buffers: number; rss: number } {
  const gc = globalThis.gc;
  if (gc === undefined) throw new Error('run under node --expose-gc');
  for (let i = 0; i < 3; i++) gc();
  const { heapUsed, arrayBuffers, rss } = process.memoryUsage();
  return { heap: heapUsed, buffers: arrayBuffers, rss };
}

async function get(
  agent: Agent,
  base: string,
  path: string,
  headers: Record<string, string>,
): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(`${base}${path}`, { agent, headers }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end();
  });
}

async function measure(kind: Kind, dnsUdp: string): Promise<string> {
  const app = await buildApp(
    testConfig({
      rateLimitGeneral: { points: 1e9, seconds: 60 },
      rateLimitExpensive: { points: 1e9, seconds: 60 },
      maxConnectionsPerIp: 0,
      dnsResolvers: [dnsUdp],
      loadShedEventLoopDelayMs: 0,
    }),
    { logger: pino({ level: 'silent' }) },
  );
  const base = await listen(app);
  const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  try {
    for (let i = 0; i < 2; i++) {
      const status = await get(agent, base, PATH, {});
      if (status !== 200) throw new Error(`${PATH} answered ${status}`);
    }
    const before = settle();
    const statuses = new Map<number, number>();
    let next = 0;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < SPELLINGS) {
          const { path, headers } = kind.spelling(next++);
          const status = await get(agent, base, path, headers);
          statuses.set(status, (statuses.get(status) ?? 0) + 1);
        }
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    const after = settle();
    // Absent before issue 29 (the same bench run on the code before it).
    const held = (app as { replays?: typeof app.replays }).replays?.holdings();
    const answered = [...statuses].map(([s, n]) => `${n}× ${s}`).join(', ');
    return `| ${kind.name} | ${mb(before.heap)} → ${mb(after.heap)} | ${mb(before.buffers)} → ${mb(after.buffers)} | ${mb(before.rss)} → ${mb(after.rss)} | ${
      held ? `${held.entries} / ${mb(held.bytes)} MB of ${mb(held.maxBytes)}` : 'n/a'
    } | ${answered} in ${seconds.toFixed(1)} s |`;
  } finally {
    agent.destroy();
    await app.close();
  }
}

if (KIND !== undefined) {
  // One kind in this process: its row on stdout.
  const dns = await startFakeDnsServer();
  console.log(await measure(KINDS[Number(KIND)]!, dns.udp));
  await dns.close();
  process.exit(0);
}
// Each kind in a process of its own, under --expose-gc: RSS figures that owe nothing to the kind before.
const rows = KINDS.map((_, i) => {
  const run = spawnSync(
    process.execPath,
    ['--expose-gc', '--import', 'tsx', fileURLToPath(import.meta.url), String(SPELLINGS)],
    { env: { ...process.env, REPLAY_KEYS_KIND: String(i) }, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  if (run.status !== 0) throw new Error(`${KINDS[i]!.name}: exited ${run.status}`);
  return run.stdout.toString().trim();
});
console.log(
  [
    `${SPELLINGS} distinct spellings of one cached /api/spf question, ${CONCURRENCY} at a time; V8 heap used, buffers outside it and RSS after a full GC, before → after.`,
    '',
    '| spellings | heap used MB | buffers MB | RSS MB | replays held (entries / counted) | answered |',
    '|---|---:|---:|---:|---|---|',
    ...rows,
    '',
    `(${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC, Node ${process.versions.node})`,
  ].join('\n'),
);
process.exit(0);
