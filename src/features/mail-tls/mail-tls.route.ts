import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { errorResponses } from '../../api-schema.js';
import type { AppContext } from '../../context.js';
import { answer } from '../../plugins/response-cache.js';
import { dnssecValidator } from '../dnssec/verdicts.js';
import { createSafeFetcher } from '../email/resource-fetcher.js';
import { MailTlsQuerySchema, MailTlsResponseSchema } from './mail-tls.schema.js';
import { lookupMailTls } from './mail-tls.service.js';

/**
 * One SMTP session's deadlines, in provider timeouts (PROVIDER_TIMEOUT_MS, 5 s by default): the
 * whole session, connect to QUIT, three (15 s), which no server can stretch; the banner two
 * (greeting pauses such as postscreen's 6 s); the connect, each reply and the handshake one.
 */
const SESSION_TIMEOUTS = { session: 3, banner: 2, stage: 1 };

export default async function mailTlsRoutes(base: FastifyInstance, { ctx }: { ctx: AppContext }) {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();
  const { config } = ctx;
  const deps = {
    dns: ctx.dns,
    outbound: ctx.outbound,
    fetcher: createSafeFetcher(ctx.outbound),
    loader: ctx.loader,
    clock: ctx.clock,
    dnssec: dnssecValidator(ctx),
    heloName: config.smtpHeloName,
    enabled: config.mailTlsEnabled,
    deadlines: {
      timeoutMs: config.providerTimeoutMs * SESSION_TIMEOUTS.session,
      bannerTimeoutMs: config.providerTimeoutMs * SESSION_TIMEOUTS.banner,
      connectTimeoutMs: config.providerTimeoutMs * SESSION_TIMEOUTS.stage,
      replyTimeoutMs: config.providerTimeoutMs * SESSION_TIMEOUTS.stage,
      handshakeTimeoutMs: config.providerTimeoutMs * SESSION_TIMEOUTS.stage,
    },
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
          'attempted), one per distinct address: hosts sharing an address share its session (SNI = the first of ' +
          'them, `tls.connection.sni`), reported under each. The certificate is judged as GET /api/tls judges it ' +
          'for each MX host name, DANE (RFC 7672) ' +
          'against the chain as sent when netdiag’s own DNSSEC validation finds the TLSA answer secure (never a ' +
          'resolver’s AD bit; a broken chain is reported, not a 502), whether a sender applying the domain’s ' +
          'MTA-STS policy would deliver, and FCrDNS. A connect timeout on every host is reported as such (the ' +
          'likely cause is this service’s own outbound port 25 being blocked). Expensive (6 / 60 s); cached 10 ' +
          'minutes. 503 when the operator turned it off (MAIL_TLS_ENABLED=false), or with Retry-After when the ' +
          'service is running as many SMTP sessions as it allows (MAX_SMTP_SESSIONS) and none freed in time.',
        querystring: MailTlsQuerySchema,
        response: { 200: MailTlsResponseSchema, ...errorResponses(400, 429, 502, 503) },
      },
    },
    async (request, reply) => answer(reply, await lookupMailTls(deps, request.query)),
  );
}
