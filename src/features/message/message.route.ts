import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyError, FastifyInstance } from 'fastify';
import { errorResponses } from '../../api-schema.js';
import type { AppContext } from '../../context.js';
import { badInput } from '../../errors.js';
import { sendError } from '../../plugins/errors.js';
import {
  MessageAnalysisSchema,
  type MessageJsonBody,
  MessageJsonBodySchema,
  type MessageQuery,
  MessageQuerySchema,
} from './message.schema.js';
import { analyzeMessage, type Envelope, messageDeps } from './message.service.js';

/** The raw forms a message comes in: as mail (RFC 2046 §5.2.1) or as pasted text. */
const RAW_TYPES = ['message/rfc822', 'text/plain'];

export default async function messageRoutes(base: FastifyInstance, { ctx }: { ctx: AppContext }) {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();
  const limit = ctx.config.messageMaxBytes;
  const deps = messageDeps(ctx);
  const appErrors = base.errorHandler;

  // Here only: everywhere else a body is JSON, and text/plain is refused (app.ts).
  app.addContentTypeParser(RAW_TYPES, { parseAs: 'buffer', bodyLimit: limit }, (_request, body, done) =>
    done(null, body),
  );

  app.post(
    '/api/message',
    {
      bodyLimit: limit,
      config: { expensive: true },
      schema: {
        tags: ['email'],
        summary: "One message's DKIM, ARC, SPF and DMARC, judged by netdiag, and the path it took",
        description:
          'Send the raw message (RFC 5322, headers and body, or the headers alone) as `message/rfc822` (or ' +
          '`text/plain`), with `ip`, `helo`, `mail_from` in the query, or as JSON `{message, ip?, helo?, ' +
          'mail_from?}`. Bare LF line ends are read as CRLF. Each DKIM-Signature is verified (mailauth, with ' +
          "netdiag's resolver), the ARC chain validated (RFC 8617), SPF checked for the connecting address " +
          '(given, or read from the Received header the receiving side wrote, which the answer names), DMARC ' +
          "applied to the From domain, the Received hops laid out with their delays, and the message's own " +
          'Authentication-Results marked trusted or not and compared. Every DNS lookup is listed. The message ' +
          `is never logged, cached or kept, and neither is the answer. Larger than ${limit} bytes ` +
          '(MESSAGE_MAX_BYTES): 413. Another content type: 415. Counts as an expensive request.',
        querystring: MessageQuerySchema,
        body: {
          content: {
            'application/json': { schema: MessageJsonBodySchema },
            'message/rfc822': { schema: { description: 'The raw message.' } },
            'text/plain': { schema: { description: 'The raw message, as pasted.' } },
          },
        },
        response: { 200: MessageAnalysisSchema, ...errorResponses(400, 413, 415, 429, 502) },
      },
      errorHandler: (err: FastifyError, request, reply) => {
        if (err.code === 'FST_ERR_CTP_BODY_TOO_LARGE')
          return sendError(reply, 413, {
            error: `the message is larger than ${limit} bytes (MESSAGE_MAX_BYTES)`,
            code: 'bad_request',
          });
        if (err.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE')
          return sendError(reply, 415, {
            error: 'Content-Type must be message/rfc822, text/plain (the raw message) or application/json',
            code: 'bad_request',
          });
        return appErrors(err, request, reply);
      },
    },
    async (request) => {
      const query = request.query as MessageQuery;
      const body = request.body as Buffer | MessageJsonBody | undefined;
      const raw =
        body === undefined
          ? Buffer.alloc(0)
          : Buffer.isBuffer(body)
            ? body
            : Buffer.from(body.message, 'utf8');
      // Whitespace alone is no message either.
      if (raw.every((b) => b === 0x20 || b === 0x09 || b === 0x0a || b === 0x0d))
        throw badInput(
          Buffer.isBuffer(body) ? 'body' : 'message',
          'is empty: send the message (or its headers)',
        );
      const given: Envelope = body === undefined || Buffer.isBuffer(body) ? query : body;
      const envelope: Envelope = {
        ...(given.ip !== undefined ? { ip: given.ip } : {}),
        ...(given.helo !== undefined ? { helo: given.helo } : {}),
        ...(given.mail_from !== undefined ? { mail_from: given.mail_from } : {}),
      };
      return analyzeMessage(deps, raw, envelope);
    },
  );
}
