/**
 * What each of the app's platform plugins costs a request on its own: one Fastify app per
 * step, each adding the next plugin (the app's own modules, registered as buildApp does,
 * in its order) in front of the same route sending a pre-serialized body, as a cache hit
 * does. Interleaved rounds, medians; server CPU per request is the figure to read (the
 * throughput of the first rows is capped by the load generator, not the server).
 *
 *   npm run bench -- platform-layers [seconds per round] [rounds]
 */

import { openSync } from 'node:fs';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, LogController } from 'fastify';
import { accessLog, createLogger, lazyChildLogger, lineBatches } from '../src/logger.js';
import { ChallengeGate } from '../src/plugins/challenge-gate.js';
import { clientIp } from '../src/plugins/client-address.js';
import compression from '../src/plugins/compression.js';
import { ConnectionGuard } from '../src/plugins/connection-guard.js';
import errorsPlugin from '../src/plugins/errors.js';
import httpHeaders from '../src/plugins/http-headers.js';
import { LoadMonitor } from '../src/plugins/load-shedding.js';
import metricsPlugin, { Metrics } from '../src/plugins/metrics.js';
import requestChecksPlugin, { RequestPipeline, requestChecks } from '../src/plugins/request-checks.js';
import { ClientLimits } from '../src/rate-limit/client-limits.js';
import { MemoryStore } from '../src/rate-limit/memory-store.js';
import { listen, type Measured, measure, medianRow, table } from './lib.js';

const seconds = Number(process.argv[2] ?? 3);
const rounds = Number(process.argv[3] ?? 3);

const body = JSON.stringify({
  target: 'example.test',
  query_name: 'example.test',
  type: 'A',
  rcode: 'NOERROR',
  authenticated_data: false,
  records: [{ ttl: 300, address: '192.0.2.10' }],
  source: 'DNS over HTTPS (127.0.0.1:53)',
  source_id: 'doh-1',
  providers_tried: [{ id: 'doh-1', name: 'DNS over HTTPS (127.0.0.1:53)', status: 'ok' }],
});

const steps = [
  'bare Fastify, the body as a string',
  '+ logger (lazy request child) and request id',
  '+ errors plugin',
  '+ response headers hook',
  '+ compression (body under its threshold)',
  '+ metrics',
  '+ access-log line at info (stdout batched per turn, to /dev/null)',
  '+ the request checks (connection cap, Host, load shedding, rate limit in process, gate off)',
] as const;

/** The app's request checks as buildApp wires them, in process, with a budget no run spends. */
function pipeline(): RequestPipeline {
  const budget = { points: 1e9, seconds: 60 };
  return new RequestPipeline(
    requestChecks({
      connections: new ConnectionGuard({ maxPerAddress: 64, trusted: () => false }),
      load: new LoadMonitor(1000),
      limits: new ClientLimits({ general: budget, expensive: budget, store: new MemoryStore() }),
      gate: new ChallengeGate({ active: false, sessionSecret: 'x', clock: Date.now, exemptCidrs: [] }),
    }),
  );
}

async function appWith(layers: number): Promise<FastifyInstance> {
  // The production logger and destination (a turn's lines written together), on /dev/null.
  const logger = createLogger({ logLevel: 'info' }, lineBatches(openSync('/dev/null', 'w')));
  const app =
    layers >= 1
      ? Fastify({
          loggerInstance: logger as FastifyBaseLogger,
          logController: new LogController({ disableRequestLogging: true }),
          childLoggerFactory: lazyChildLogger,
          genReqId: () => crypto.randomUUID(),
        })
      : Fastify({ logger: false });
  if (layers >= 2) await app.register(errorsPlugin, {});
  if (layers >= 3) await app.register(httpHeaders);
  if (layers >= 4) await app.register(compression);
  if (layers >= 5) await app.register(metricsPlugin, { metrics: new Metrics() });
  if (layers >= 6) {
    const access = accessLog(app.log);
    app.addHook('onResponse', (request, reply, done) => {
      access(request.id, request.method, request.url, reply.statusCode, reply.elapsedTime, clientIp(request));
      done();
    });
  }
  if (layers >= 7) await app.register(requestChecksPlugin, { pipeline: pipeline() });
  app.get('/api/bench', async (_request, reply) => reply.type('application/json; charset=utf-8').send(body));
  return app;
}

const apps = await Promise.all(steps.map((_, i) => appWith(i)));
const urls = await Promise.all(apps.map(async (app) => `${await listen(app)}/api/bench`));
const runs = steps.map((): Measured[] => []);
for (let round = 0; round < rounds; round++) {
  for (const [i, name] of steps.entries()) runs[i]?.push(await measure(name, urls[i]!, seconds));
}
const rows = steps.map((name, i) => medianRow(name, runs[i] ?? []));
process.stdout.write(
  `Medians of ${rounds} interleaved rounds of ${seconds} s, 50 connections (Node ${process.version}).\n\n${table(rows, rows[0]!)}\n`,
);
await Promise.all(apps.map((app) => app.close()));
