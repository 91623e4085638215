import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { errorResponses } from '../../api-schema.js';
import type { AppContext } from '../../context.js';
import { answer } from '../../plugins/response-cache.js';
import { BlocklistsQuerySchema, BlocklistsResponseSchema } from './blocklists.schema.js';
import { blocklistCatalogue, lookupBlocklists, registerLists } from './blocklists.service.js';

export default async function blocklistsRoutes(base: FastifyInstance, { ctx }: { ctx: AppContext }) {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();
  const catalogue = blocklistCatalogue(ctx.config);
  registerLists(ctx, catalogue);
  app.get(
    '/api/blocklists',
    {
      config: { expensive: true },
      schema: {
        tags: ['email'],
        summary: 'Is this address or domain listed, on which DNS blocklists, and can the answer be trusted',
        description:
          'Checks `ip` against the enabled IP lists of the catalogue (BLOCKLISTS_FILE, else the bundled one; ' +
          'docs/blocklists.md), or `domain` against the domain lists and its MX hosts’ addresses against the IP ' +
          "lists. Every list is asked through netdiag's own iterative resolver, never through the public " +
          'resolvers the lists refuse. Per list: listed (code, the list’s meaning, its TXT reason, the delisting ' +
          'page), not_listed, refused (the list declined: a refusal code, a key missing — never a listing), ' +
          'error, or broken (it fails its RFC 5782 test points or lists everything; not counted). Cached by the ' +
          'answers’ TTLs (an hour at most); an answer with a list in error is not cached.',
        querystring: BlocklistsQuerySchema,
        response: { 200: BlocklistsResponseSchema, ...errorResponses(400, 429, 502) },
      },
    },
    async (request, reply) => {
      const found = await lookupBlocklists(ctx, catalogue, request.query);
      return found.cache ? answer(reply, { body: found.body, cache: found.cache }) : found.body;
    },
  );
}
