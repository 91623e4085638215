/**
 * The pieces a cached answer passes through on every request, each beside what it
 * replaced (issue 22) or, for the metrics, beside the other way prom-client's public API
 * offers (issue 30), timed in one process: ns per operation, median of interleaved
 * rounds. Everything runs in-process and synchronously where the piece is synchronous;
 * the access-log lines go to /dev/null through pino's own destination. The in-process
 * limiter is timed alone: what it replaced (rate-limiter-flexible, awaited) is no longer a
 * dependency, and its figure stays in docs/performance.md.
 *
 *   npm run bench -- hot-path [rounds]
 */
import { execFileSync, spawn } from 'node:child_process';
import { closeSync, mkdtempSync, openSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { Counter, Histogram, Registry } from 'prom-client';
import { serializeList } from 'structured-headers';
import { type AccessLog, accessLog, createLogger, lineBatches } from '../src/logger.js';
import { Metrics, REQUEST_DURATION_BUCKETS } from '../src/plugins/metrics.js';
import { ClientLimits, rateLimitItem } from '../src/rate-limit/client-limits.js';
import { MemoryStore } from '../src/rate-limit/memory-store.js';

const rounds = Number(process.argv[2] ?? 5);

interface Case {
  piece: string;
  variant: string;
  ops: number;
  run: (ops: number) => unknown;
}

const line = {
  method: 'GET',
  url: '/api/dns?target=example.test&type=A',
  statusCode: 200,
  ms: 0.4,
  ip: '198.51.100.7',
};
const root = createLogger({ logLevel: 'info' }, pino.destination({ dest: '/dev/null', sync: true }));
const access = accessLog(root);
const store = new MemoryStore();
const general = { name: 'general', points: 1e9, seconds: 60 };
const limits = new ClientLimits({ general, expensive: { points: 1e9, seconds: 60 }, store });

// The request metrics with prom-client's label handles bound once per label set and kept
// in a Map, the alternative to Metrics.recordRequest's label objects (issue 30).
const promRegistry = new Registry();
const promRequests = new Counter({
  name: 'requests_total',
  help: 'requests',
  labelNames: ['route', 'method', 'status'] as const,
  registers: [promRegistry],
});
const promDuration = new Histogram({
  name: 'duration_seconds',
  help: 'duration',
  labelNames: ['route', 'method'] as const,
  buckets: REQUEST_DURATION_BUCKETS,
  registers: [promRegistry],
});
const handles = new Map<string, { requests: Counter.Internal; duration: Histogram.Internal<string> }>();
function recordThroughHandles(route: string, method: string, status: number, seconds: number): void {
  const key = `${route} ${method} ${status}`;
  let bound = handles.get(key);
  if (bound === undefined) {
    bound = {
      requests: promRequests.labels({ route, method, status: String(status) }),
      duration: promDuration.labels({ route, method }),
    };
    handles.set(key, bound);
  }
  bound.requests.inc();
  bound.duration.observe(seconds);
}
const metrics = new Metrics();
// A few routes, one answer in sixteen refused, durations across the first buckets.
const routes = ['/api/dns', '/api/email-security', '/api/ip', '/healthz'];
const routeOf = (i: number) => routes[i & 3] as string;
const statusOf = (i: number) => ((i & 15) === 15 ? 429 : 200);
const secondsOf = (i: number) => 0.0004 + (i & 7) * 0.002;

const cases: Case[] = [
  {
    piece: 'access-log line',
    variant: 'before: a child logger per request (reqId bound), redaction on',
    ops: 100_000,
    run: (ops) => {
      for (let i = 0; i < ops; i++) root.child({ reqId: `r-${i}` }).info(line, 'request');
    },
  },
  {
    piece: 'access-log line',
    variant: 'after: accessLog(), reqId in the line, no child, no redaction',
    ops: 100_000,
    run: (ops) => {
      for (let i = 0; i < ops; i++)
        access(`r-${i}`, line.method, line.url, line.statusCode, line.ms, line.ip);
    },
  },
  {
    piece: 'RateLimit header',
    variant: 'before: structured-headers serializeList',
    ops: 500_000,
    run: (ops) => {
      for (let i = 0; i < ops; i++) {
        serializeList([
          [
            'general',
            new Map([
              ['r', i % 30],
              ['t', 60],
            ]),
          ],
        ]);
      }
    },
  },
  {
    piece: 'RateLimit header',
    variant: 'after: rateLimitItem()',
    ops: 500_000,
    run: (ops) => {
      for (let i = 0; i < ops; i++) rateLimitItem('general', i % 30, 60);
    },
  },
  {
    piece: 'request metrics',
    variant: "prom-client's label handles, bound once per label set in a Map",
    ops: 500_000,
    run: (ops) => {
      for (let i = 0; i < ops; i++) recordThroughHandles(routeOf(i), 'GET', statusOf(i), secondsOf(i));
    },
  },
  {
    piece: 'request metrics',
    variant: 'after: Metrics.recordRequest (prom-client inc + observe with label objects)',
    ops: 500_000,
    run: (ops) => {
      for (let i = 0; i < ops; i++) metrics.recordRequest(routeOf(i), 'GET', statusOf(i), secondsOf(i));
    },
  },
  {
    piece: 'cache counter',
    variant: 'prom-client inc with a label object',
    ops: 1_000_000,
    run: (ops) => {
      for (let i = 0; i < ops; i++) metrics.cache.inc({ result: 'hit' });
    },
  },
  {
    piece: 'cache counter',
    variant: "after: prom-client's label handle, bound once (Metrics.cacheHit)",
    ops: 1_000_000,
    run: (ops) => {
      for (let i = 0; i < ops; i++) metrics.cacheHit.inc();
    },
  },
  {
    piece: 'in-process limiter',
    variant: 'MemoryStore.take, one counter (synchronous)',
    ops: 500_000,
    run: (ops) => {
      const counters = [general];
      for (let i = 0; i < ops; i++) store.take(counters, `198.51.100.${i & 255}`);
    },
  },
  {
    piece: 'in-process limiter',
    variant: 'ClientLimits.admit, an expensive route (general point, both policies), RateLimit written',
    ops: 500_000,
    run: (ops) => {
      for (let i = 0; i < ops; i++) limits.admit(limits.expensiveRoute, `198.51.100.${i & 255}`);
    },
  },
];

function timeCase(c: Case): number {
  const started = process.hrtime.bigint();
  c.run(c.ops);
  return Number(process.hrtime.bigint() - started) / c.ops;
}

/**
 * Access-log lines to stdout as the server writes them, into a pipe whose reader keeps up
 * (`cat` on a FIFO), 32 lines per turn of the event loop as under load: sonic-boom's
 * asynchronous mode per line (before) against the lines of a turn written together (after).
 */
const fifo = join(mkdtempSync(join(tmpdir(), 'netdiag-hot-path-')), 'stdout');
execFileSync('mkfifo', [fifo]);
const reader = spawn('sh', ['-c', `cat "${fifo}" > /dev/null`], { stdio: 'ignore' });
const fd = openSync(fifo, 'w');
const stdoutCases: { variant: string; log: AccessLog }[] = [
  {
    variant: "before: sonic-boom's asynchronous mode, line by line",
    log: accessLog(createLogger({ logLevel: 'info' }, pino.destination({ dest: fd, sync: false }))),
  },
  {
    variant: 'after: the lines of a turn written together',
    log: accessLog(createLogger({ logLevel: 'info' }, lineBatches(fd))),
  },
];
async function timeLines(log: AccessLog, ops: number): Promise<number> {
  const started = process.hrtime.bigint();
  for (let i = 0; i < ops; i++) {
    log(`r-${i}`, line.method, line.url, line.statusCode, line.ms, line.ip);
    if (i % 32 === 31) await new Promise((resolve) => setImmediate(resolve));
  }
  return Number(process.hrtime.bigint() - started) / ops;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;
const results = new Map<string, number[]>();
for (const c of cases) c.run(Math.ceil(c.ops / 10)); // warm-up
for (const c of stdoutCases) await timeLines(c.log, 20_000);
for (let round = 0; round < rounds; round++) {
  for (const c of cases) results.set(c.variant, [...(results.get(c.variant) ?? []), timeCase(c)]);
  for (const c of stdoutCases) {
    results.set(c.variant, [...(results.get(c.variant) ?? []), await timeLines(c.log, 100_000)]);
  }
}

const rows = [
  '| piece | variant | ns/op |',
  '|---|---|---:|',
  ...cases.map((c) => `| ${c.piece} | ${c.variant} | ${Math.round(median(results.get(c.variant) ?? []))} |`),
  ...stdoutCases.map(
    (c) =>
      `| access-log line to stdout (a pipe) | ${c.variant} | ${Math.round(median(results.get(c.variant) ?? []))} |`,
  ),
];
process.stdout.write(
  `Medians of ${rounds} interleaved rounds (Node ${process.version}).\n\n${rows.join('\n')}\n`,
);
root.flush();
await new Promise((resolve) => setTimeout(resolve, 200));
closeSync(fd);
reader.kill();
