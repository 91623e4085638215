import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { errorResponses } from '../../api-schema.js';
import type { AppContext } from '../../context.js';
import { answer } from '../../plugins/response-cache.js';
import { dnssecValidator } from '../dnssec/verdicts.js';
import { inspectTls } from '../tls/tls.service.js';
import { InspectQuerySchema, InspectResponseSchema } from './inspect.schema.js';
import { INSPECT_TTL_SECONDS, type InspectDeps, inspect } from './inspect.service.js';

/** The body is never evidence here (only its size is reported); reading more would only cost time. */
export const INSPECT_MAX_BODY_BYTES = 256 * 1024;

export default async function inspectRoutes(base: FastifyInstance, { ctx }: { ctx: AppContext }) {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();
  const { outbound } = ctx;
  const deps: InspectDeps = {
    resolve: (host) => outbound.resolve(host),
    dns: ctx.dns,
    fetch: (url, onHop) =>
      outbound.fetch(url, {
        // A misconfigured certificate must not hide the site's headers: each HTTPS hop reports
        // `tls.authorized` and the error instead, and the tls part has the full story.
        rejectUnauthorized: false,
        maxRedirects: 10,
        // One deadline per chain (the outbound default), all hops and the body included.
        maxBodyBytes: INSPECT_MAX_BODY_BYTES,
        onHop,
      }),
    // The /api/tls lookup itself, cache included: an inspect right after /api/tls costs no second handshake.
    tls: async (host) => (await inspectTls(ctx, host)).body.tls,
    chain: ctx.chain,
    originProviders: base.routingProviders.origin,
    statusProviders: base.routingProviders.status,
    loader: ctx.loader,
    clock: ctx.clock,
    dnssec: dnssecValidator(ctx),
  };

  app.get(
    '/api/inspect',
    {
      config: { expensive: true },
      schema: {
        tags: ['inspect'],
        summary: 'Live HTTP, security-header, TLS and network evidence for a public host',
        description:
          'Fetches http://TARGET/ and https://TARGET/ and follows each redirect chain (at most 10 hops, every hop ' +
          'resolved and checked again; only ports 80 and 443), reporting each hop with status, Location, HTTP ' +
          'version and phase timings, and the final response with an allow-listed header set. HTTP/2 is what ALPN ' +
          'negotiated; HTTP/3 is only what Alt-Svc advertises. Security headers are judged against their specs ' +
          '(RFC 6797 HSTS with preload eligibility, CSP3, X-Content-Type-Options, X-Frame-Options and ' +
          'frame-ancestors, Referrer-Policy, Permissions-Policy, COOP/CORP/COEP) and graded A+..F; the rules are in ' +
          'docs/security-headers.md. `tls` is the /api/tls evidence (omitted with include_tls=false). `network` ' +
          'gives every resolved address its reverse DNS and origin AS, holder and prefix from RIPEstat, or Team ' +
          'Cymru DNS after a RIPEstat failure. `ip` adds RIPEstat routing status for that address. Each part has ' +
          'its own status, so one failing part leaves the rest. A target that is not a public address is a 400 ' +
          `and nothing is connected to. Counts as an expensive request. Cached ${INSPECT_TTL_SECONDS} s, except ` +
          'answers in which one of our providers failed.',
        querystring: InspectQuerySchema,
        response: { 200: InspectResponseSchema, ...errorResponses(400, 429, 502) },
      },
    },
    async (request, reply) => answer(reply, await inspect(deps, request.query)),
  );
}
