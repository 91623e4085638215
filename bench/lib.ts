/**
 * Benchmark helpers: every figure is a ratio measured in one run against a
 * bare Fastify route on the same machine, so the number means something on
 * any hardware. Loopback only; each run is bounded in time.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import Fastify, { type FastifyInstance } from 'fastify';

export interface Measured {
  name: string;
  requestsPerSec: number;
  p50Ms: number;
  p99Ms: number;
  non2xx: number;
  /** Server CPU (user + system) per request in µs: steadier than req/s when the load generator saturates first. */
  cpuUsPerRequest: number;
  /** The user-space part of it: the JavaScript's own share, without the kernel's socket work. */
  userUsPerRequest: number;
}

export async function listen(app: FastifyInstance): Promise<string> {
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  if (address === null || typeof address === 'string') throw new Error('no address');
  return `http://127.0.0.1:${address.port}`;
}

/**
 * The baseline: Fastify with nothing but one route answering the same body.
 * Given `headers`, it also sends those (the app's own, copied from one of its
 * replies): the cost of the headers alone, without the work that decides them.
 */
export async function bareRoute(
  path: string,
  body: unknown,
  headers?: Record<string, string>,
): Promise<FastifyInstance> {
  const app = Fastify({ logger: false });
  app.get(path, async (_request, reply) => {
    if (headers) reply.headers(headers);
    return body;
  });
  return app;
}

/** The headers a reply carries that a bare route would not send by itself. */
export function addedHeaders(headers: Record<string, unknown>): Record<string, string> {
  const own = new Set(['content-type', 'content-length', 'date', 'connection', 'keep-alive']);
  return Object.fromEntries(
    Object.entries(headers)
      .filter(([name, value]) => !own.has(name) && typeof value === 'string')
      .map(([name, value]) => [name, value as string]),
  );
}

const autocannonBin = createRequire(import.meta.url).resolve('autocannon/autocannon.js');

interface AutocannonJson {
  requests: { average: number; total: number };
  latency: { p50: number; p99: number };
  non2xx: number;
}

/** Runs autocannon in its own process so the load generator does not share the server's event loop. */
function autocannon(
  url: string,
  seconds: number,
  connections: number,
  rate?: number,
): Promise<AutocannonJson> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [
        autocannonBin,
        '--json',
        '-c',
        String(connections),
        '-d',
        String(seconds),
        ...(rate === undefined ? [] : ['-R', String(rate)]),
        url,
      ],
      {
        stdio: ['ignore', 'pipe', 'ignore'],
      },
    );
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.on('error', reject);
    child.on('exit', (code) => {
      if (code !== 0) return reject(new Error(`autocannon exited with ${code}`));
      resolve(JSON.parse(out) as AutocannonJson);
    });
  });
}

/** CPU time (µs) of a process: this one by default, or a server started as a child. */
export type CpuClock = () => { user: number; system: number };

/** A child process's CPU time from /proc (Linux), in µs; clock ticks are 10 ms, fine over seconds. */
export function childCpu(pid: number): CpuClock {
  return () => {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces), from the state field on: utime is 14th, stime 15th.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const tick = 10_000;
    return { user: Number(fields[11]) * tick, system: Number(fields[12]) * tick };
  };
}

export async function measure(
  name: string,
  url: string,
  seconds: number,
  connections = 50,
  rate?: number,
  cpuClock: CpuClock = () => process.cpuUsage(),
): Promise<Measured> {
  // Warm-up so JIT and caches are hot before the measured window.
  await autocannon(url, 1, connections, rate);
  const before = cpuClock();
  const result = await autocannon(url, seconds, connections, rate);
  const after = cpuClock();
  const cpu = { user: after.user - before.user, system: after.system - before.system };
  return {
    name,
    requestsPerSec: result.requests.average,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    non2xx: result.non2xx,
    cpuUsPerRequest: (cpu.user + cpu.system) / Math.max(1, result.requests.total),
    userUsPerRequest: cpu.user / Math.max(1, result.requests.total),
  };
}

/** One row per route; each row's throughput is compared with the baseline, or with its own when `baselineOf` names one. */
export function table(
  rows: Measured[],
  baseline: Measured,
  baselineOf: (row: Measured) => Measured = () => baseline,
): string {
  const lines = [
    '| route | req/s | p50 ms | p99 ms | non-2xx | server CPU µs/req | throughput vs bare |',
    '|---|---:|---:|---:|---:|---:|---:|',
  ];
  for (const r of rows) {
    const ratio = r.requestsPerSec / baselineOf(r).requestsPerSec;
    lines.push(
      `| ${r.name} | ${Math.round(r.requestsPerSec)} | ${r.p50Ms} | ${r.p99Ms} | ${r.non2xx} | ${r.cpuUsPerRequest.toFixed(1)} | ${ratio.toFixed(2)} |`,
    );
  }
  return lines.join('\n');
}

/** One row per route: the median of each figure over the rounds it was measured in. */
export function medianRow(name: string, rounds: readonly Measured[]): Measured {
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;
  const of = (field: keyof Omit<Measured, 'name'>) => median(rounds.map((m) => m[field]));
  return {
    name,
    requestsPerSec: of('requestsPerSec'),
    p50Ms: of('p50Ms'),
    p99Ms: of('p99Ms'),
    non2xx: of('non2xx'),
    cpuUsPerRequest: of('cpuUsPerRequest'),
    userUsPerRequest: of('userUsPerRequest'),
  };
}

/**
 * How `npm start` runs the server (package.json's start script): its environment assignments,
 * node's flags, and the command as text. Benchmarks start "the operator's process" this way.
 */
export const NPM_START = (() => {
  const words = (
    JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
      scripts: { start: string };
    }
  ).scripts.start.split(/\s+/);
  const env: Record<string, string> = {};
  for (const word of words) {
    const eq = word.indexOf('=');
    if (/^[A-Z_]+=/.test(word)) env[word.slice(0, eq)] = word.slice(eq + 1);
  }
  return {
    env,
    flags: words.filter((w) => w.startsWith('--')),
    text: words.filter((w) => w !== 'exec').join(' '),
  };
})();
