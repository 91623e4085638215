/**
 * Platform overhead: a cached, provider-backed route through the whole app
 * (rate limiter, cache, chain, headers, metrics, serialization) against a bare
 * Fastify route answering the same JSON, measured in one run.
 *
 *   npm run bench -- cached-route [seconds]
 */
import pino from 'pino';
import { Type } from 'typebox';
import { buildApp } from '../src/app.js';
import { testConfig } from '../src/config/index.js';
import type { Provider, ProviderInfo } from '../src/providers/types.js';
import { addedHeaders, bareRoute, listen, measure, table } from './lib.js';

const seconds = Number(process.argv[2] ?? 5);

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
const answer = { target: 'example.com', type: 'A', records: [{ address: '192.0.2.1', ttl: 300 }] };

const app = await buildApp(
  // The contract limits would cap a load test at 30 requests; lift them for the measurement only.
  testConfig({
    rateLimitGeneral: { points: 1e9, seconds: 60 },
    rateLimitExpensive: { points: 1e9, seconds: 60 },
  }),
  { logger: pino({ level: 'silent' }) },
);
app.get(
  '/api/bench',
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
      call: async () => answer,
      ttl: () => 300,
    });
    reply.cacheable(result.cache);
    return { ...result.value, source: result.source, source_id: result.source_id };
  },
);
const body = { ...answer, source: info.name, source_id: info.id };
const bare = await bareRoute('/api/bench', body);
const sample = await app.inject('/api/bench');
const withHeaders = await bareRoute('/api/bench', body, addedHeaders(sample.headers));

const appUrl = await listen(app);
const bareUrl = await listen(bare);
const withHeadersUrl = await listen(withHeaders);
const baseline = await measure('bare Fastify route', `${bareUrl}/api/bench`, seconds);
const headersOnly = await measure(
  "bare route sending the app's headers",
  `${withHeadersUrl}/api/bench`,
  seconds,
);
const cached = await measure('cached route through the full app', `${appUrl}/api/bench`, seconds);
process.stdout.write(`${table([baseline, headersOnly, cached], baseline)}\n`);
await app.close();
await bare.close();
await withHeaders.close();
