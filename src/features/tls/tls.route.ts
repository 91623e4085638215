import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { errorResponses } from '../../api-schema.js';
import type { AppContext } from '../../context.js';
import { answer } from '../../plugins/response-cache.js';
import { TlsQuerySchema, TlsResponseSchema } from './tls.schema.js';
import { lookupTls } from './tls.service.js';

export default async function tlsRoutes(base: FastifyInstance, { ctx }: { ctx: AppContext }) {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();
  app.get(
    '/api/tls',
    {
      config: { expensive: true },
      schema: {
        tags: ['tls'],
        summary: 'The certificate and TLS parameters a host serves on port 443, from one live handshake',
        description:
          'One TLS handshake with HOST:443 (SNI = HOST; none for an IP literal), offering TLS 1.0 to 1.3 so that ' +
          'old protocols are seen and reported. Returns the connection (protocol, IANA cipher name, ALPN, ' +
          'ephemeral key, forward secrecy, OCSP stapling, OpenSSL verification result, name match), the leaf ' +
          'certificate, the chain exactly as the server sent it (read from the Certificate message) with chain ' +
          'findings, and every finding with a severity. A target that is or resolves to a non-public address is ' +
          'refused with 400 before any connection. A refused or timed-out connection, a failed handshake or an ' +
          'unreadable certificate is an answer about the target: 200 with `tls.status` "error", `error` and ' +
          '`stage` (connect, tls handshake), never cached. A 502 means our own DNS resolution failed ' +
          '(`providers_tried`). Evidence is cached 300 s per host.',
        querystring: TlsQuerySchema,
        response: { 200: TlsResponseSchema, ...errorResponses(400, 429, 502) },
      },
    },
    async (request, reply) => {
      const found = await lookupTls(ctx, request.query.target);
      // What the target did instead of a handshake is sent with no-store (http-headers.ts), never kept.
      return found.cache ? answer(reply, { body: found.body, cache: found.cache }) : found.body;
    },
  );
}
