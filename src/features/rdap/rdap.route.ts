import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { ErrorSchema, errorResponses } from '../../api-schema.js';
import type { AppContext } from '../../context.js';
import { answer } from '../../plugins/response-cache.js';
import { RdapQuerySchema, RdapResponseSchema } from './rdap.schema.js';
import { lookupRdap, type RdapLookupDeps } from './rdap.service.js';

const NOT_FOUND = {
  ...ErrorSchema,
  description:
    'Two cases, both cached for 5 minutes: the object is not registered (the authoritative registry answered ' +
    'RDAP 404), or the TLD publishes no RDAP service (it is absent from the IANA RDAP bootstrap registry, ' +
    'RFC 9224). `code` says which (`not_registered` or `no_rdap_service`); `providers_tried` says who answered.',
};

export default async function rdapRoutes(base: FastifyInstance, { ctx }: { ctx: AppContext }) {
  const deps: RdapLookupDeps = {
    chain: ctx.chain,
    loader: ctx.loader,
    providers: base.rdapSources.providers,
    registrar: base.rdapSources.fetcher,
    timeoutMs: ctx.config.providerTimeoutMs,
  };

  const app = base.withTypeProvider<TypeBoxTypeProvider>();
  app.get(
    '/api/rdap',
    {
      schema: {
        tags: ['rdap'],
        summary:
          'Registration data (RDAP, RFC 9083) for a domain or an IP address, from the registry and registrar',
        description:
          'Asks the RDAP aggregator first (its redirect to the authoritative server is followed: at most 5 hops, ' +
          'HTTPS only, each hop checked by outbound safety). After an operational failure of the aggregator, or ' +
          'its own 404 (it may not know the TLD), the authoritative server is found through the IANA bootstrap ' +
          'registry (RFC 9224) and asked directly. For thin registries (.com, .net) the registrar object linked ' +
          'from the registry answer (rel "related", type application/rdap+json) is fetched as `registrar`; if that ' +
          'fails, `registrar` is null and `notes` says why. A 429 with Retry-After from a registry is respected. ' +
          'Cached 1 hour; "not found" answers 5 minutes.',
        querystring: RdapQuerySchema,
        response: { 200: RdapResponseSchema, 404: NOT_FOUND, ...errorResponses(400, 429, 502) },
      },
      // `type` is case-insensitive on input.
      preValidation: async (request) => {
        const query = request.query as Record<string, unknown>;
        if (typeof query.type === 'string') query.type = query.type.toLowerCase();
      },
    },
    async (request, reply) => answer(reply, await lookupRdap(deps, request.query.target, request.query.type)),
  );
}
