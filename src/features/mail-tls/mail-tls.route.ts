import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../../context.js';
import { answer } from '../../plugins/cached-answers.js';
import { createSafeFetcher } from '../email/resource-fetcher.js';
import { errorResponses } from '../shared.schema.js';
import { MailTlsQuerySchema, MailTlsResponseSchema } from './mail-tls.schema.js';
import { lookupMailTls } from './mail-tls.service.js';

/** An SMTP session may be slow to greet (greylisting, postscreen pauses): three provider timeouts. */
const SESSION_TIMEOUTS = 3;

export default async function mailTlsRoutes(base: FastifyInstance, { ctx }: { ctx: AppContext }) {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();
  const { config } = ctx;
  const deps = {
    dns: ctx.dns,
    outbound: ctx.outbound,
    fetcher: createSafeFetcher(ctx.outbound),
    loader: ctx.loader,
    clock: ctx.clock,
    heloName: config.smtpHeloName,
    enabled: config.mailTlsEnabled,
    timeoutMs: config.providerTimeoutMs * SESSION_TIMEOUTS,
    connectTimeoutMs: config.providerTimeoutMs,
  };
  app.get(
    '/api/mail-tls',
    {
      config: { expensive: true },
      schema: {
        tags: ['email'],
        summary: 'The mail servers themselves: STARTTLS, certificates, DANE and MTA-STS per MX host',
        description:
          'For each MX host (preference order, at most 10; the implicit MX of RFC 5321 §5.1 when there is none) ' +
          'and at most one IPv4 and one IPv6 address of it, concurrently: a private or special-use address is ' +
          'reported as refused and never contacted; otherwise an SMTP session on port 25 (banner, EHLO, STARTTLS, ' +
          'the TLS handshake with SNI = the MX host, EHLO again, QUIT; never MAIL FROM or RCPT: no mail is ' +
          'attempted), the certificate judged as GET /api/tls judges it for the MX host name, DANE (RFC 7672) ' +
          'against the chain as sent when the TLSA answer validated, whether a sender applying the domain’s ' +
          'MTA-STS policy would deliver, and FCrDNS. A connect timeout on every host is reported as such (the ' +
          'likely cause is this service’s own outbound port 25 being blocked). Expensive (6 / 60 s); cached 10 ' +
          'minutes. 503 when the operator turned it off (MAIL_TLS_ENABLED=false).',
        querystring: MailTlsQuerySchema,
        response: { 200: MailTlsResponseSchema, ...errorResponses(400, 429, 502, 503) },
      },
    },
    async (request, reply) => answer(reply, await lookupMailTls(deps, request.query)),
  );
}
