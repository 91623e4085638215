import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { errorResponses } from '../../api-schema.js';
import type { AppContext } from '../../context.js';
import { answer } from '../../plugins/response-cache.js';
import { CertificatesResponseSchema, CtQuerySchema, SubdomainsResponseSchema } from './ct.schema.js';
import { lookupCertificates, lookupSubdomains, type SubdomainDeps } from './ct.service.js';

const SOURCES =
  'History comes from crt.sh; Cert Spotter is asked only after an operational failure of crt.sh (timeout, ' +
  'connection or TLS error, HTTP 5xx or 429, unparseable answer) and only when its API key is configured. ' +
  'When both fail the answer is 502 and nothing is cached: a provider failure is never shown as an empty history.';

export default async function ctRoutes(base: FastifyInstance, { ctx }: { ctx: AppContext }) {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();
  const { providers, attemptTimeoutMs } = base.ctSources;
  const { chain, loader, dns, clock } = ctx;
  const deps: SubdomainDeps = { chain, loader, dns, clock, providers, timeoutMs: attemptTimeoutMs };

  app.get(
    '/api/certificates',
    {
      schema: {
        tags: ['ct'],
        summary: 'Certificate-transparency issuance history of a domain and the names below it',
        description:
          'Public issuances logged in Certificate Transparency for the domain and its subdomains, newest first, ' +
          'a precertificate and its certificate merged into one entry, at most 1000. `truncated` and `gaps` say ' +
          'when the list is not the whole history: more than 1000, crt.sh stopping at its limit of 10 000 ' +
          'matching names (the rest is then an arbitrary subset, not the newest part), expired certificates ' +
          'left out (crt.sh out of time, or the Cert Spotter fallback, which lists unexpired ones only). An ' +
          `issuance record does not prove that the certificate is served now, or ever was. ${SOURCES} ` +
          'Cached one hour, shared with /api/subdomains.',
        querystring: CtQuerySchema,
        response: { 200: CertificatesResponseSchema, ...errorResponses(400, 429, 502) },
      },
    },
    async (request, reply) => answer(reply, await lookupCertificates(deps, request.query.domain)),
  );

  app.get(
    '/api/subdomains',
    {
      config: { expensive: true },
      schema: {
        tags: ['ct'],
        summary: 'Names below a domain found in certificate transparency, the 50 most recent resolved live',
        description:
          'Names at or below the domain taken from its CT history (the same cached history as ' +
          '/api/certificates), `*.` removed, emails and non-DNS names dropped. The 50 names whose latest ' +
          'certificate is valid longest are resolved now (A, AAAA, CNAME); three random names are resolved first ' +
          "to detect a DNS wildcard, and hosts answering only with the wildcard's records are marked `wildcard`, " +
          'not `active`. This is not a port scan and not a complete inventory: names that never had a ' +
          'publicly logged certificate (private, internal, or covered only by a wildcard certificate) do not ' +
          `appear. ${SOURCES} Counts as an expensive request. Cached 30 minutes.`,
        querystring: CtQuerySchema,
        response: { 200: SubdomainsResponseSchema, ...errorResponses(400, 429, 502) },
      },
    },
    async (request, reply) => answer(reply, await lookupSubdomains(deps, request.query.domain)),
  );
}
