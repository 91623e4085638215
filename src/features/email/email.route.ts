import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { errorResponses } from '../../api-schema.js';
import type { AppContext } from '../../context.js';
import { answer } from '../../plugins/response-cache.js';
import { blocklistCatalogue } from '../blocklists/blocklists.service.js';
import { mxListingFindings } from '../blocklists/mx-listings.js';
import { dnssecValidator } from '../dnssec/verdicts.js';
import { markRootsLoader } from './bimi.js';
import { EmailSecurityQuerySchema, EmailSecurityResponseSchema } from './email.schema.js';
import { lookupEmailSecurity } from './email.service.js';
import { createSafeFetcher } from './resource-fetcher.js';

export default async function emailRoutes(base: FastifyInstance, { ctx }: { ctx: AppContext }) {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();
  const markRoots = markRootsLoader(ctx.config.bimiVmcRootsFile);
  // The operator's roots are read now, so a file that is not what it should be stops the start;
  // the bundled list alone waits for the first VMC.
  if (ctx.config.bimiVmcRootsFile) markRoots();
  // MTA-STS policies and BIMI assets are user-influenced destinations: outbound safety, always.
  const catalogue = blocklistCatalogue(ctx.config);
  const deps = {
    dns: ctx.dns,
    fetcher: createSafeFetcher(ctx.outbound),
    clock: ctx.clock,
    loader: ctx.loader,
    dnssec: dnssecValidator(ctx),
    markRoots,
    mxListings: (hosts: readonly { exchange: string; addresses: readonly string[] }[]) =>
      mxListingFindings(
        { engine: ctx.dnsEngine, cache: ctx.cache, catalogue, timeoutMs: ctx.config.providerTimeoutMs },
        hosts,
      ),
  };
  app.get(
    '/api/email-security',
    {
      config: { expensive: true },
      schema: {
        tags: ['email'],
        summary: 'Mail authentication and transport security of a domain, scored 0–100 with a grade',
        description:
          'Checks MX (RFC 5321, 7505), SPF (RFC 7208, with the include tree and lookup counts), DMARC (RFC 9989, ' +
          'with the DNS Tree Walk), DKIM (RFC 6376, 8301, 8463; the caller’s selectors, then a disclosed list), ' +
          'MTA-STS (RFC 8461; the policy fetched over HTTPS), TLS-RPT (RFC 8460), BIMI (logo and VMC) and DNSSEC ' +
          '(netdiag’s own validation of the domain and each MX host, never a resolver’s AD bit; a broken chain ' +
          'is a finding and a 200, its records read as published, not a 502). Every ' +
          'check returns its points and per-rule breakdown, so the score can be recomputed from the response: ' +
          'score = min(round(100 × Σ points / Σ max_points), caps). A check whose DNS lookup failed is `error` ' +
          'and leaves the maximum. A domain that does not exist is a 200 with score 0. Expensive (6 / 60 s); ' +
          'cached 300 s (answers with a failed lookup are not cached).',
        querystring: EmailSecurityQuerySchema,
        response: { 200: EmailSecurityResponseSchema, ...errorResponses(400, 429, 502) },
      },
    },
    async (request, reply) => answer(reply, await lookupEmailSecurity(deps, request.query)),
  );
}
