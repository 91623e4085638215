/**
 * Load: cached /api/dns at 1, 50 and 500 connections against a bare Fastify
 * route in the same run; a mixed workload with the contract's rate limits on
 * (most answers 429, none 5xx, memory stable); 10 000 distinct cached keys
 * (RSS growth bounded by the cache's byte cap). Loopback only, bounded time.
 *
 *   npm run bench -- load [seconds]
 */
import { cpus, totalmem } from 'node:os';
import pino from 'pino';
import { buildApp } from '../src/app.js';
import { testConfig } from '../src/config/index.js';
import { startFakeDnsServer } from '../test/fakes/dns-server.js';
import { addedHeaders, bareRoute, listen, measure, table } from './lib.js';

const seconds = Number(process.argv[2] ?? 5);
const fake = await startFakeDnsServer();
const unlimited = {
  rateLimitGeneral: { points: 1e9, seconds: 60 },
  rateLimitExpensive: { points: 1e9, seconds: 60 },
  // The load generator is one address holding many connections.
  maxConnectionsPerIp: 0,
};
const mb = (n: number) => `${(n / 1024 / 1024).toFixed(1)} MB`;
const out: string[] = [
  `Machine: ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, ${mb(totalmem())} RAM, Node ${process.version}.`,
];

// 1. Cached throughput at three concurrency levels.
const app = await buildApp(
  testConfig({ ...unlimited, dnsResolvers: [fake.udp], loadShedEventLoopDelayMs: 0 }),
  {
    logger: pino({ level: 'silent' }),
  },
);
const path = '/api/dns?target=example.test&type=A';
const sample = await app.inject(path);
const bare = await bareRoute('/api/dns', sample.json());
const withHeaders = await bareRoute('/api/dns', sample.json(), addedHeaders(sample.headers));
const appUrl = await listen(app);
const bareUrl = await listen(bare);
const withHeadersUrl = await listen(withHeaders);
for (const connections of [1, 50, 500]) {
  const baseline = await measure(
    `bare route, ${connections} conn`,
    `${bareUrl}/api/dns`,
    seconds,
    connections,
  );
  const headersOnly = await measure(
    `bare route + the app's headers, ${connections} conn`,
    `${withHeadersUrl}/api/dns`,
    seconds,
    connections,
  );
  const cached = await measure(
    `cached /api/dns, ${connections} conn`,
    `${appUrl}${path}`,
    seconds,
    connections,
  );
  out.push(
    `\n### ${connections} connection${connections === 1 ? '' : 's'}\n\n${table([baseline, headersOnly, cached], baseline)}`,
  );
}
await app.close();
await bare.close();
await withHeaders.close();

// 2. Overload with the contract's limits: one client far over its budget.
const limited = await buildApp(
  testConfig({ dnsResolvers: [fake.udp], loadShedEventLoopDelayMs: 0, maxConnectionsPerIp: 0 }),
  {
    logger: pino({ level: 'silent' }),
  },
);
const limitedUrl = await listen(limited);
const rssBefore = process.memoryUsage().rss;
const overload = await measure(
  'cached /api/dns, contract limits, 50 conn',
  `${limitedUrl}${path}`,
  seconds,
  50,
);
const rssAfter = process.memoryUsage().rss;
out.push(
  `\n### Overload with the contract's rate limits (one client)\n\n` +
    `${Math.round(overload.requestsPerSec)} req/s, p99 ${overload.p99Ms} ms, non-2xx ${overload.non2xx} ` +
    `(429s; the first 30 are 200), RSS ${mb(rssBefore)} → ${mb(rssAfter)}.`,
);
await limited.close();

// 3. 10 000 distinct keys through the cache: RSS growth bounded by the byte cap.
const wide = await buildApp(
  testConfig({ ...unlimited, dnsResolvers: [fake.udp], loadShedEventLoopDelayMs: 0 }),
  {
    logger: pino({ level: 'silent' }),
  },
);
global.gc?.();
const wideBefore = process.memoryUsage();
let failures = 0;
for (let i = 0; i < 10_000; i++) {
  const res = await wide.inject(`/api/dns?target=k${i}.example.test&type=A`);
  if (res.statusCode !== 200) failures++;
}
global.gc?.();
const wideAfter = process.memoryUsage();
out.push(
  `\n### 10 000 distinct cached keys\n\nheap ${mb(wideBefore.heapUsed)} → ${mb(wideAfter.heapUsed)}, ` +
    `RSS ${mb(wideBefore.rss)} → ${mb(wideAfter.rss)}, non-200: ${failures}.`,
);
await wide.close();
await fake.close();
process.stdout.write(`${out.join('\n')}\n`);
