import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../../context.js';
import { type ProvidersResponse, ProvidersResponseSchema } from './providers.schema.js';

const POLICY =
  'Cache first, the primary provider next, a fallback only after an operational failure (timeout, ' +
  'connection or TLS error, HTTP 5xx or 429, unparseable answer). Providers are never rotated to spread quota.';

export default async function providersRoutes(app: FastifyInstance, { ctx }: { ctx: AppContext }) {
  app.get(
    '/api/providers',
    {
      // Service status: needs no lookup session when challenge protection is active.
      config: { passive: true },
      schema: {
        tags: ['service'],
        summary: 'Every upstream provider with capabilities, documentation, access and runtime status',
        response: { 200: ProvidersResponseSchema },
      },
    },
    async (): Promise<ProvidersResponse> => ({ providers: ctx.registry.list(), policy: POLICY }),
  );
}
