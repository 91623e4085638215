/**
 * GET /api/dns: cached throughput and the cost of one uncached lookup, each
 * against a bare Fastify route in the same run. The resolver is the fake DNS
 * server on loopback (UDP and DoH), so the uncached figure is our client's
 * and the app's own cost plus a loopback round trip, not the internet's.
 *
 *   npm run bench -- dns [seconds]
 */
import Fastify from 'fastify';
import pino from 'pino';
import { buildApp } from '../src/app.js';
import { testConfig } from '../src/config/index.js';
import { startFakeDnsServer } from '../test/fakes/dns-server.js';
import { getTestPki } from '../test/fakes/test-ca.js';
import { bareRoute, listen, measure, table } from './lib.js';

const seconds = Number(process.argv[2] ?? 5);
const fake = await startFakeDnsServer();
const { caPem } = await getTestPki();
const unlimited = {
  rateLimitGeneral: { points: 1e9, seconds: 60 },
  rateLimitExpensive: { points: 1e9, seconds: 60 },
  // The load generator is one address holding many connections.
  maxConnectionsPerIp: 0,
};

async function appFor(resolver: string) {
  return buildApp(testConfig({ ...unlimited, dnsResolvers: [resolver] }), {
    logger: pino({ level: 'silent' }),
    ca: caPem,
  });
}

// Cached throughput over HTTP with autocannon.
const app = await appFor(fake.udp);
const sample = (await app.inject('/api/dns?target=example.test&type=A')).json();
const bare = await bareRoute('/api/dns', sample);
const appUrl = await listen(app);
const bareUrl = await listen(bare);
const baseline = await measure('bare Fastify route (same body)', `${bareUrl}/api/dns`, seconds);
const cached = await measure('cached /api/dns', `${appUrl}/api/dns?target=example.test&type=A`, seconds);
process.stdout.write(`\n### Cached throughput\n\n${table([baseline, cached], baseline)}\n`);
await app.close();
await bare.close();

// Uncached cost: sequential in-process requests, every name new, against the same bare route.
async function meanMs(n: number, run: (i: number) => Promise<unknown>): Promise<number> {
  for (let i = 0; i < 50; i++) await run(-i - 1); // warm-up
  const start = performance.now();
  for (let i = 0; i < n; i++) await run(i);
  return (performance.now() - start) / n;
}
const n = 2000;
const bareInject = Fastify({ logger: false });
bareInject.get('/api/dns', async () => sample);
const bareMs = await meanMs(n, () => bareInject.inject('/api/dns'));
const lines = ['| path | mean ms per request | cost vs bare route |', '|---|---:|---:|'];
lines.push(`| bare Fastify route (inject) | ${bareMs.toFixed(3)} | 1.0 |`);
for (const [label, resolver] of [
  ['uncached /api/dns, UDP resolver', fake.udp],
  ['uncached /api/dns, DoH (h2) resolver', fake.doh],
] as const) {
  const a = await appFor(resolver);
  const ms = await meanMs(n, (i) =>
    a.inject(`/api/dns?target=n${i < 0 ? `w${-i}` : i}-${label.length}.example.test&type=A`),
  );
  lines.push(`| ${label} | ${ms.toFixed(3)} | ${(ms / bareMs).toFixed(1)} |`);
  await a.close();
}
process.stdout.write(
  `\n### One uncached lookup (sequential, ${n} distinct names, NXDOMAIN from the fake)\n\n${lines.join('\n')}\n`,
);
await fake.close();
