/**
 * Benchmark helpers: every figure is a ratio measured in one run against a
 * bare Fastify route on the same machine, so the number means something on
 * any hardware. Loopback only; each run is bounded in time.
 */
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import Fastify, { type FastifyInstance } from 'fastify';

export interface Measured {
  name: string;
  requestsPerSec: number;
  p50Ms: number;
  p99Ms: number;
  non2xx: number;
}

export async function listen(app: FastifyInstance): Promise<string> {
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  if (address === null || typeof address === 'string') throw new Error('no address');
  return `http://127.0.0.1:${address.port}`;
}

/** The baseline: Fastify with nothing but one route answering the same body. */
export async function bareRoute(path: string, body: unknown): Promise<FastifyInstance> {
  const app = Fastify({ logger: false });
  app.get(path, async () => body);
  return app;
}

const autocannonBin = createRequire(import.meta.url).resolve('autocannon/autocannon.js');

interface AutocannonJson {
  requests: { average: number };
  latency: { p50: number; p99: number };
  non2xx: number;
}

/** Runs autocannon in its own process so the load generator does not share the server's event loop. */
function autocannon(url: string, seconds: number, connections: number): Promise<AutocannonJson> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [autocannonBin, '--json', '-c', String(connections), '-d', String(seconds), url],
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

export async function measure(
  name: string,
  url: string,
  seconds: number,
  connections = 50,
): Promise<Measured> {
  // Warm-up so JIT and caches are hot before the measured window.
  await autocannon(url, 1, connections);
  const result = await autocannon(url, seconds, connections);
  return {
    name,
    requestsPerSec: result.requests.average,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    non2xx: result.non2xx,
  };
}

export function table(rows: Measured[], baseline: Measured): string {
  const lines = [
    '| route | req/s | p50 ms | p99 ms | non-2xx | throughput vs bare |',
    '|---|---:|---:|---:|---:|---:|',
  ];
  for (const r of rows) {
    const ratio = r.requestsPerSec / baseline.requestsPerSec;
    lines.push(
      `| ${r.name} | ${Math.round(r.requestsPerSec)} | ${r.p50Ms} | ${r.p99Ms} | ${r.non2xx} | ${ratio.toFixed(2)} |`,
    );
  }
  return lines.join('\n');
}
