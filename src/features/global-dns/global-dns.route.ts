import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { errorResponses } from '../../api-schema.js';
import type { AppContext } from '../../context.js';
import { GlobalDnsBodySchema, GlobalDnsResponseSchema } from './global-dns.schema.js';
import { createGlobalDnsService, REUSE_SECONDS } from './global-dns.service.js';

/**
 * Why the default ten (GLOBAL_DNS_COUNTRIES): every inhabited continent, with a
 * second vantage point where resolver populations and CDN/geo-DNS regions are
 * largest, all where Globalping's probe network is dense. Kept in step
 * with docs/global-dns.md.
 */
const COUNTRY_RATIONALE =
  'The default ten are US and CA (North America), BR (South America), GB and DE (Europe: the London and ' +
  'Frankfurt exchange regions, UK and EU), ZA (Africa), IN (South Asia), SG (Southeast Asia), JP (East Asia) ' +
  'and AU (Oceania): every inhabited continent, two vantage points where resolver populations and CDN ' +
  "regions are largest, all where Globalping's probe network is dense, so geo-DNS and propagation " +
  'differences show up and few countries go unmeasured.';

export default async function globalDnsRoutes(base: FastifyInstance, { ctx }: { ctx: AppContext }) {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();
  const service = createGlobalDnsService({
    chain: ctx.chain,
    providers: base.globalDnsProviders,
    countries: ctx.config.globalDnsCountries,
    clock: ctx.clock,
  });

  app.post(
    '/api/global-dns',
    {
      config: { expensive: true },
      schema: {
        tags: ['dns'],
        summary: 'One DNS question measured from ten countries, with a consistency summary',
        description:
          `Creates a distributed DNS measurement (Globalping) with one probe in each of the ten countries of ` +
          `GLOBAL_DNS_COUNTRIES (here: ${ctx.config.globalDnsCountries.join(', ')}), each asking its own ` +
          `resolver, and answers when it is complete, or after about 20 s with the probes that reported ` +
          `(\`complete: false\`). ${COUNTRY_RATIONALE} A country without an available probe is reported as ` +
          '`no_probe` (unmeasured), not as a failure. `summary` compares the answer sets ignoring TTL and ' +
          'order. Slower and heavier than /api/dns: counts against the expensive limit. Identical measurements ' +
          `within ${REUSE_SECONDS} s are reused (\`reused: true\`) rather than created again; responses are ` +
          'never cached at the edge. SRV and PTR are not accepted (400). A type the provider does not offer ' +
          '(Globalping does not list CAA today) answers 502 with its reason in `providers_tried`. Each ' +
          "measurement spends ten tests of Globalping's hourly quota for this service (250 an hour per " +
          'address without GLOBALPING_TOKEN, 500 with one). While it is spent the answer is 503 at once, ' +
          'its `error` naming the reason and the reset time and `Retry-After` counting down to it: 503, not ' +
          "429, because the quota is the service's, shared by every user, not the caller's (slowing down " +
          'would change nothing); /api/providers shows what is left. A reused measurement still answers.',
        body: GlobalDnsBodySchema,
        response: { 200: GlobalDnsResponseSchema, ...errorResponses(400, 429, 502, 503) },
      },
      // `type` is case-insensitive on input and canonical upper case everywhere after, as on /api/dns.
      preValidation: async (request) => {
        const body = request.body as unknown;
        if (typeof body === 'object' && body !== null && !Array.isArray(body)) {
          const fields = body as Record<string, unknown>;
          if (typeof fields.type === 'string') fields.type = fields.type.toUpperCase();
        }
      },
    },
    async (request) => service.measure(request.body.target, request.body.type),
  );
}
