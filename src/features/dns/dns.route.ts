import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { errorResponses } from '../../api-schema.js';
import type { AppContext } from '../../context.js';
import { answer } from '../../plugins/response-cache.js';
import { DnsQuerySchema, DnsResponseSchema } from './dns.schema.js';
import { lookupDns } from './dns.service.js';

export default async function dnsRoutes(base: FastifyInstance, { ctx }: { ctx: AppContext }) {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();
  app.get(
    '/api/dns',
    {
      schema: {
        tags: ['dns'],
        summary: 'DNS records of one type, with the response code and DNSSEC AD status',
        description:
          'Asks the primary resolver (DoH by default) with EDNS0 and the DO bit; a second resolver is used only ' +
          'after an operational failure (timeout, network or TLS error, HTTP error, SERVFAIL, REFUSED, malformed ' +
          'reply). NXDOMAIN and empty answers are answers. Cached no longer than the smallest TTL (negative ' +
          'answers: the SOA minimum, at most 300 s). `_` is accepted in owner names for SRV, TXT and CNAME. ' +
          '`authenticated_data` is the answering resolver’s AD flag, its verdict and not netdiag’s (GET ' +
          '/api/dnssec validates a name itself, from the root); a resolver that validates answers SERVFAIL for ' +
          'a name whose DNSSEC is broken, and this endpoint then answers 502 with that in providers_tried.',
        querystring: DnsQuerySchema,
        response: { 200: DnsResponseSchema, ...errorResponses(400, 429, 502) },
      },
      // `type` is case-insensitive on input and canonical upper case everywhere after.
      preValidation: (request, _reply, done) => {
        const query = request.query as Record<string, unknown>;
        if (typeof query.type === 'string') query.type = query.type.toUpperCase();
        done();
      },
    },
    async (request, reply) =>
      answer(reply, await lookupDns(ctx.dns, request.query.target, request.query.type ?? 'A')),
  );
}
