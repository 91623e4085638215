import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { errorResponses } from '../../api-schema.js';
import type { AppContext } from '../../context.js';
import { checkReadiness } from './readiness.js';

const HealthSchema = Type.Object({ status: Type.String() }, { additionalProperties: true });

const ReadySchema = Type.Object(
  {
    status: Type.Literal('ready'),
    cache: Type.String({ description: 'The cache backend: memory or redis.' }),
    warnings: Type.Optional(
      Type.Array(
        Type.Object({
          code: Type.Literal('geoip_data_stale'),
          message: Type.String(),
          built_at: Type.String({ format: 'date-time' }),
          age_days: Type.Integer({ minimum: 0 }),
        }),
        {
          description:
            'What an operator should act on without taking the instance out: geoip_data_stale when the ' +
            'geolocation data is more than 60 days old (docs/operations.md). Absent when there is none.',
        },
      ),
    ),
  },
  { additionalProperties: true },
);

export default async function healthRoutes(app: FastifyInstance, { ctx }: { ctx: AppContext }) {
  const readiness = { cache: ctx.cache, geoData: () => app.ipSources.database.loadedDataAge() };
  app.get(
    '/healthz',
    {
      schema: {
        tags: ['operations'],
        summary: 'Liveness: the process is serving',
        response: { 200: HealthSchema },
      },
    },
    async () => ({ status: 'ok' }),
  );

  app.get(
    '/readyz',
    {
      schema: {
        tags: ['operations'],
        summary: 'Readiness: configuration loaded and the cache backend reachable',
        description:
          '503 while the cache backend (Redis) is unreachable. Stale geolocation data does not make the ' +
          'instance unready: it is reported in `warnings`.',
        response: { 200: ReadySchema, ...errorResponses(503) },
      },
    },
    async () => checkReadiness(readiness),
  );
}
