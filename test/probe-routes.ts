/**
 * Probe routes for platform tests: a validated GET, a JSON POST, a route that
 * crashes, a cached provider-backed route and an expensive one. They exercise
 * the shared plugins exactly as feature routes do, before those features exist.
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { errorResponses } from '../src/api-schema.js';
import { ProviderError } from '../src/errors.js';
import type { Provider, ProviderInfo } from '../src/providers/types.js';

export class ProbeProvider implements Provider {
  calls = 0;
  fail = false;
  readonly info: ProviderInfo;
  constructor(id: string) {
    this.info = {
      id,
      name: `Probe ${id}`,
      capabilities: ['probe'],
      docs_url: 'https://example.test',
      access: 'none',
      configured: true,
      endpoint: 'https://example.test',
    };
  }
  async answer(q: string): Promise<{ echo: string }> {
    this.calls++;
    if (this.fail) throw new ProviderError('http_status', 'HTTP 503 from example.test');
    return { echo: q };
  }
}

export function probeRoutes(providers: ProbeProvider[]) {
  return async (base: FastifyInstance) => {
    const app = base.withTypeProvider<TypeBoxTypeProvider>();
    app.ctx.registry.registerChain('probe', providers);
    app.get(
      '/api/probe',
      {
        schema: {
          querystring: Type.Object({
            target: Type.String({ minLength: 1, maxLength: 253 }),
            type: Type.Optional(Type.Enum(['A', 'AAAA', 'MX'])),
            flag: Type.Optional(Type.Boolean()),
          }),
          response: {
            200: Type.Object({ target: Type.String(), type: Type.String() }),
            ...errorResponses(400),
          },
        },
      },
      async (request) => ({ target: request.query.target, type: request.query.type ?? 'A' }),
    );
    app.post(
      '/api/probe',
      {
        schema: {
          body: Type.Object(
            { target: Type.String(), type: Type.Enum(['A', 'MX']) },
            { additionalProperties: false },
          ),
          response: { 200: Type.Object({ ok: Type.Boolean() }), ...errorResponses(400) },
        },
      },
      async () => ({ ok: true }),
    );
    app.get('/api/probe/crash', async () => {
      throw new Error('secret internal detail at /srv/app.ts:42');
    });
    app.get(
      '/api/probe/cached',
      {
        schema: {
          querystring: Type.Object({ q: Type.String() }),
          response: {
            200: Type.Object({
              echo: Type.String(),
              source: Type.String(),
              source_id: Type.String(),
              providers_tried: Type.Array(Type.Object({}, { additionalProperties: true })),
            }),
          },
        },
      },
      async (request, reply) => {
        const { q } = request.query;
        const result = await app.ctx.chain.run({
          capability: 'probe',
          providers,
          key: q,
          call: (p) => p.answer(q),
          ttl: () => 120,
        });
        reply.cacheable(result.cache);
        return {
          ...result.value,
          source: result.source,
          source_id: result.source_id,
          providers_tried: result.providers_tried,
        };
      },
    );
    // A live measurement, as the expensive routes make one: nothing cached, so it is paid for.
    app.get('/api/probe/expensive', { config: { expensive: true } }, async (request) => {
      const measured = await app.ctx.loader.load(`probe:expensive:${request.id}`, async () => ({
        value: { ok: true },
        ttl: 0,
      }));
      return measured.value;
    });
  };
}
