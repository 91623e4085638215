import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { AppContext } from '../../context.js';
import { AppError } from '../../errors.js';
import { errorResponses } from '../shared.schema.js';

const HealthSchema = Type.Object({ status: Type.String() }, { additionalProperties: true });

export default async function healthRoutes(app: FastifyInstance, { ctx }: { ctx: AppContext }) {
  const { cache } = ctx;
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
        response: { 200: HealthSchema, ...errorResponses(503) },
      },
    },
    async () => {
      if (!(await cache.ping())) {
        throw new AppError(503, 'unavailable', `cache backend (${cache.kind}) unreachable`);
      }
      return { status: 'ready', cache: cache.kind };
    },
  );
}
