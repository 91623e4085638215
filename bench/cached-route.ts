/**
 * Where a cached answer's time goes: the same JSON served by a bare Fastify
 * route, by that route sending the app's headers, and through the whole app
 * layer by layer (a non-API route: request id, metrics, security headers; a
 * zero-work API route: plus the rate limiter, its headers and CORS; a cached
 * provider-backed route through the chain; cached /api/dns itself, and a cached
 * /api/spf against a bare route serving its larger body). A cached answer asked
 * again is a replay, answered before Fastify routes it (plugins/response-cache.ts),
 * so the cached rows measure that path. The in-process rows log nothing (a silent
 * logger): they show the app's own work. Last, the app as an operator runs it:
 * its own process, started as `npm start` starts it (NPM_START), with LOG_LEVEL=info
 * (one access-log line per request, read through a pipe), metrics, the default connection cap and
 * load shedding, and the limiter counting every request (its budget raised so none
 * is refused), for /api/dns and /api/spf; its CPU is read from /proc. With
 * redis-server on PATH, once more with REDIS_URL (cache and limits in Redis).
 *
 * This machine's throughput drifts from one second to the next (a shared VM),
 * so the routes are measured in interleaved rounds and each figure is the
 * median over the rounds.
 *
 *   npm run bench -- cached-route [seconds per round] [rounds]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { Type } from 'typebox';
import { build } from '../scripts/build.js';
import { buildApp } from '../src/app.js';
import { testConfig } from '../src/config/index.js';
import { answer } from '../src/plugins/response-cache.js';
import type { Provider, ProviderInfo } from '../src/providers/types.js';
import { startFakeDnsServer } from '../test/fakes/dns-server.js';
import { redisBinary, startRedis } from '../test/fakes/redis.js';
import { startNetdiag } from '../test/scale/netdiag-process.js';
import {
  addedHeaders,
  bareRoute,
  type CpuClock,
  childCpu,
  listen,
  type Measured,
  measure,
  medianRow,
  NPM_START,
  table,
} from './lib.js';

const seconds = Number(process.argv[2] ?? 3);
const rounds = Number(process.argv[3] ?? 5);

const fake = await startFakeDnsServer();
const info: ProviderInfo = {
  id: 'bench',
  name: 'Bench provider',
  capabilities: ['bench'],
  docs_url: 'https://example.test',
  access: 'none',
  configured: true,
  endpoint: 'memory',
};
const provider: Provider = { info };
const record = { target: 'example.com', type: 'A', records: [{ address: '192.0.2.1', ttl: 300 }] };

const app = await buildApp(
  // The contract limits would cap a load test at 30 requests; lift them for the measurement only.
  testConfig({
    rateLimitGeneral: { points: 1e9, seconds: 60 },
    rateLimitExpensive: { points: 1e9, seconds: 60 },
    // The load generator is one address holding 50 connections.
    maxConnectionsPerIp: 0,
    dnsResolvers: [fake.udp],
    loadShedEventLoopDelayMs: 0,
  }),
  { logger: pino({ level: 'silent' }) },
);
const dnsPath = '/api/dns?target=example.test&type=A';
// The body every route answers: a cached /api/dns answer, taken from a twin app.
const twin = await buildApp(testConfig({ dnsResolvers: [fake.udp], loadShedEventLoopDelayMs: 0 }), {
  logger: pino({ level: 'silent' }),
});
const sample = await twin.inject(dnsPath);
// Another cached GET endpoint through the same shared path: an SPF evaluation with its trace (larger body).
const spfPath = '/api/spf?ip=192.0.2.1&domain=example.test';
const spfSample = await twin.inject(spfPath);
if (spfSample.statusCode !== 200) throw new Error(`the SPF sample answered ${spfSample.statusCode}`);
await twin.close();
const body = sample.json() as Record<string, unknown>;

app.get('/bench/static', async () => body);
app.get('/api/bench/static', async () => body);
app.get(
  '/api/bench/chain',
  {
    schema: {
      response: {
        200: Type.Object({
          target: Type.String(),
          type: Type.String(),
          records: Type.Array(Type.Object({ address: Type.String(), ttl: Type.Integer() })),
          source: Type.String(),
          source_id: Type.String(),
        }),
      },
    },
  },
  async (_request, reply) => {
    const result = await app.ctx.chain.run({
      capability: 'bench',
      providers: [provider],
      key: 'example.com:A',
      call: async () => record,
      ttl: () => 300,
    });
    // As every cached route answers: a hit sent shared, and replayed to the next identical requests.
    return answer(reply, {
      body: { ...result.value, source: result.source, source_id: result.source_id },
      cache: result.cache,
    });
  },
);
const bare = await bareRoute('/', body);
const withHeaders = await bareRoute('/', body, addedHeaders(sample.headers));
const bareSpf = await bareRoute('/', spfSample.json());
const appUrl = await listen(app);
const lists = mkdtempSync(join(tmpdir(), 'netdiag-bench-lists-'));
await build({ ifStale: true });
// The operator's process: production settings, the budget raised so nothing is refused.
const operatorEnv = {
  DNS_RESOLVERS: fake.udp,
  RATE_LIMIT_GENERAL: '1000000000/60',
  RATE_LIMIT_EXPENSIVE: '1000000000/60',
  LIST_CACHE_DIR: lists,
  // Nothing listens there: the relay lists fail to load (logged once), as nothing here asks for them.
  RELAY_RANGES_URL: 'https://127.0.0.1:9/egress-ip-ranges.csv',
  TOR_EXIT_LIST_URL: 'https://127.0.0.1:9/torbulkexitlist',
};
const operator = await startNetdiag(
  { ...NPM_START.env, ...operatorEnv },
  { drainAfterListening: true, nodeArgs: NPM_START.flags },
);
// With redis-server on PATH, the same process as a scaled-out instance runs it: cache and limits in Redis.
const redis = redisBinary ? await startRedis() : undefined;
const scaled = redis
  ? await startNetdiag(
      {
        ...NPM_START.env,
        ...operatorEnv,
        REDIS_URL: redis.url,
        SESSION_SECRET: 'bench-session-secret-0123456789abcdef',
      },
      { drainAfterListening: true, nodeArgs: NPM_START.flags },
    )
  : undefined;
const BARE_SPF = 'bare Fastify route serving the /api/spf body';
const OPERATOR_SPF = "cached /api/spf, operator's process";
const routes: [string, string, CpuClock?][] = [
  ['bare Fastify route', `${await listen(bare)}/`],
  ["bare route sending the app's headers", `${await listen(withHeaders)}/`],
  ['non-API route through the app', `${appUrl}/bench/static`],
  ['zero-work API route through the app', `${appUrl}/api/bench/static`],
  ['cached route through the provider chain', `${appUrl}/api/bench/chain`],
  ['cached /api/dns', `${appUrl}${dnsPath}`],
  [BARE_SPF, `${await listen(bareSpf)}/`],
  ['cached /api/spf (a larger body)', `${appUrl}${spfPath}`],
  [
    `cached /api/dns, operator's process (${NPM_START.text}, LOG_LEVEL=info)`,
    `${operator.base}${dnsPath}`,
    childCpu(operator.serverPid),
  ],
  [OPERATOR_SPF, `${operator.base}${spfPath}`, childCpu(operator.serverPid)],
  ...(scaled
    ? ([
        [
          "cached /api/dns, operator's process with REDIS_URL (cache and limits in Redis)",
          `${scaled.base}${dnsPath}`,
          childCpu(scaled.serverPid),
        ],
      ] satisfies [string, string, CpuClock][])
    : []),
];

const runs = new Map<string, Measured[]>();
for (let round = 0; round < rounds; round++) {
  for (const [name, url, cpu] of routes) {
    const m = await measure(name, url, seconds, 50, undefined, cpu);
    runs.set(name, [...(runs.get(name) ?? []), m]);
  }
}
const rows = routes.map(([name]) => medianRow(name, runs.get(name) ?? []));
const [baseline] = rows;
if (baseline === undefined) throw new Error('no baseline');
// The /api/spf rows are compared with the bare route serving their own (larger) body.
const spfBaseline = rows.find((r) => r.name === BARE_SPF) ?? baseline;
const ownBaseline = (row: Measured) =>
  row.name.includes('/api/spf') && row.name !== BARE_SPF ? spfBaseline : baseline;
process.stdout.write(
  `Medians of ${rounds} interleaved rounds of ${seconds} s, 50 connections; the /api/spf rows against the bare route serving their body.\n\n${table(rows, baseline, ownBaseline)}\n`,
);
await app.close();
await bare.close();
await withHeaders.close();
await bareSpf.close();
await operator.stop();
await scaled?.stop();
await redis?.stop();
await fake.close();
rmSync(lists, { recursive: true, force: true });
