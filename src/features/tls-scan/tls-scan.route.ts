import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { errorResponses } from '../../api-schema.js';
import type { AppContext } from '../../context.js';
import { answer } from '../../plugins/response-cache.js';
import { TlsScanQuerySchema, TlsScanResponseSchema } from './tls-scan.schema.js';
import { HANDSHAKE_BUDGET, lookupTlsScan, TLS_SCAN_CACHE_SECONDS } from './tls-scan.service.js';

export default async function tlsScanRoutes(base: FastifyInstance, { ctx }: { ctx: AppContext }) {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();
  app.get(
    '/api/tls-scan',
    {
      config: { expensive: true },
      schema: {
        tags: ['tls'],
        summary: 'Every protocol, cipher suite, group and certificate a web or mail server accepts',
        description:
          'Scans TARGET port 443 (service=https) or port 25 with STARTTLS (service=smtp, every handshake in its ' +
          'own SMTP session, never MAIL or RCPT) with hand-made ClientHellos: SSLv2 to TLS 1.3, every registered ' +
          'cipher suite (offered all at once, the chosen one removed and offered again, so a protocol costs one ' +
          "handshake per accepted suite), the server's order (ChaCha20 prioritisation told apart from client " +
          'order), key-exchange groups including X25519MLKEM768 (from HelloRetryRequests, without computing a ' +
          'share), the DHE prime size, one certificate per key type (and without SNI) judged as GET /api/tls ' +
          'judges one, the OCSP staple verified against the issuer, and TLS features (secure renegotiation, ' +
          'compression, TLS_FALLBACK_SCSV, extended master secret, tickets, ALPN, heartbeat). Findings, a grade ' +
          'and the Mozilla and NCSC-NL ratings are documented in docs/tls-scan.md. At most 4 handshakes at once ' +
          `(2 for SMTP), one deadline, at most ${HANDSHAKE_BUDGET} handshakes. A non-public target is refused ` +
          'with 400 before any connection; a target that cannot be scanned is 200 with `scan.status` "error", ' +
          `never cached. Cached ${TLS_SCAN_CACHE_SECONDS} s per service and host; a scan of a target being scanned ` +
          'joins that scan.',
        querystring: TlsScanQuerySchema,
        response: { 200: TlsScanResponseSchema, ...errorResponses(400, 429, 502) },
      },
    },
    async (request, reply) => {
      const found = await lookupTlsScan(ctx, request.query.target, request.query.service ?? 'https');
      return found.cache ? answer(reply, { body: found.body, cache: found.cache }) : found.body;
    },
  );
}
