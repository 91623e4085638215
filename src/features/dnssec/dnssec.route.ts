import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { errorResponses } from '../../api-schema.js';
import type { AppContext } from '../../context.js';
import { answer } from '../../plugins/response-cache.js';
import { DnssecQuerySchema, DnssecResponseSchema } from './dnssec.schema.js';
import { lookupDnssec } from './dnssec.service.js';

export default async function dnssecRoutes(base: FastifyInstance, { ctx }: { ctx: AppContext }) {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();
  app.get(
    '/api/dnssec',
    {
      config: { expensive: true },
      schema: {
        tags: ['dns'],
        summary: "netdiag's own DNSSEC validation of a name, link by link from the trust anchor",
        description:
          "Resolves TARGET/TYPE iteratively from the root (DNS_ROOT_HINTS), asking each zone's authoritative " +
          'servers itself, and validates the answer with its own validator (RFC 4033–4035, 5155, 6840; ' +
          'algorithms 5, 7, 8, 10, 13, 14, 15, 16; DS digests 1, 2, 4) from the trust anchors ' +
          '(DNSSEC_TRUST_ANCHORS, else the IANA root KSKs 20326 and 38696). `chain` lists every zone from the ' +
          'anchor down with its DS, DNSKEY and signatures; `reason` names the first broken link (bogus) or ' +
          "where the chain of trust ends (insecure). A resolver's AD bit is never used. Every name server " +
          "address passes outbound safety (a private one is refused and reported). Cached by the answer's " +
          'TTLs and signature expirations; an indeterminate answer is not cached.',
        querystring: DnssecQuerySchema,
        response: { 200: DnssecResponseSchema, ...errorResponses(400, 429) },
      },
    },
    async (request, reply) =>
      answer(reply, await lookupDnssec(ctx, request.query.target, request.query.type)),
  );
}
