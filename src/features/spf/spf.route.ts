import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { errorResponses } from '../../api-schema.js';
import type { AppContext } from '../../context.js';
import { answer } from '../../plugins/response-cache.js';
import { dnssecValidator } from '../dnssec/verdicts.js';
import { SpfQuerySchema, SpfResponseSchema } from './spf.schema.js';
import { lookupSpf } from './spf.service.js';

export default async function spfRoutes(base: FastifyInstance, { ctx }: { ctx: AppContext }) {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();
  const deps = {
    dns: ctx.dns,
    clock: ctx.clock,
    loader: ctx.loader,
    receiver: ctx.config.smtpHeloName,
    dnssec: dnssecValidator(ctx),
  };
  app.get(
    '/api/spf',
    {
      schema: {
        tags: ['email'],
        summary:
          'Would mail from this IP, as this sender, pass SPF? check_host() of RFC 7208, with the trace',
        description:
          'Evaluates the sender domain’s SPF policy for the client address exactly as RFC 7208 check_host() ' +
          'does: record selection (§4.5), syntax (§4.6), every mechanism with CIDR lengths, include and redirect ' +
          '(§5, §6), the macro language (§7) and the limits (§4.6.4: 10 DNS-querying terms, 2 void lookups, 10 ' +
          'names per mx/ptr). The result is one of RFC 7208 §2.6’s; `trace` shows each record and term; ' +
          '`received_spf` and `authentication_results` are ready to paste. A DNS timeout or SERVFAIL inside ' +
          'the evaluation is the result `temperror`; when netdiag’s own DNSSEC validation finds the refused answer ' +
          'bogus, `dnssec` names the broken link and the result on the records as published. A 502 only when no ' +
          'resolver could be reached at all. The ' +
          'address is only compared, never contacted. Passes the openspf RFC 7208 test suite. Cached 300 s ' +
          '(temperror never).',
        querystring: SpfQuerySchema,
        response: { 200: SpfResponseSchema, ...errorResponses(400, 429, 502) },
      },
    },
    async (request, reply) => answer(reply, await lookupSpf(deps, request.query)),
  );
}
