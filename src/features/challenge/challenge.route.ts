import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { errorResponses } from '../../api-schema.js';
import { challengeActive } from '../../config/index.js';
import type { AppContext } from '../../context.js';
import { clientIp } from '../../plugins/client-address.js';
import {
  ChallengeStatusSchema,
  VerifyBodySchema,
  type VerifyResponse,
  VerifyResponseSchema,
} from './challenge.schema.js';
import { answerVerify, describeStatus, type StatusDeps } from './challenge.service.js';
import { ReplaySet } from './replay.js';

export default async function challengeRoutes(base: FastifyInstance, { ctx }: { ctx: AppContext }) {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();
  const { config, clock } = ctx;
  const active = challengeActive(config);
  const verifyDeps = {
    active,
    chain: ctx.chain,
    verifier: base.turnstile,
    replay: new ReplaySet(ctx.cache),
    clock,
    sessionSecret: config.sessionSecret,
    expectedHostname: config.turnstileExpectedHostname,
  };

  const statusDeps: StatusDeps = {
    active,
    siteKey: config.turnstileSiteKey,
    scriptUrl: config.turnstileScriptUrl,
    sessionSecret: config.sessionSecret,
    clock,
    exemptCidrs: config.challengeExemptCidrs,
    limits: async (ip) => ({ rate_limit: await app.rateLimits.peek(ip), tiers: app.rateLimits.tiers() }),
  };

  app.get(
    '/api/challenge/status',
    {
      // Passive: a client must be able to learn it needs a session without having one.
      config: { passive: true },
      schema: {
        tags: ['challenge'],
        summary: 'Whether challenge protection is active, this caller’s session and rate-limit budget',
        description:
          'Never cached. Counts as one request against the general limit; reading the budgets consumes nothing more.',
        response: { 200: ChallengeStatusSchema, ...errorResponses(429) },
      },
    },
    async (request) => describeStatus(statusDeps, { cookie: request.headers.cookie, ip: clientIp(request) }),
  );

  app.post(
    '/api/challenge/verify',
    {
      config: { passive: true },
      schema: {
        tags: ['challenge'],
        summary: 'Exchange a single-use Turnstile token for a 15-minute lookup session cookie',
        description:
          'Checks the token with the verify endpoint (siteverify) and, when accepted, sets a signed, HttpOnly, ' +
          'SameSite=Lax session cookie valid 15 minutes. A token is single-use: posting it again is rejected ' +
          'without asking upstream. When protection is inactive the answer is `verified: false` with no ' +
          'cookie: no session is needed. Counts against the general limit.',
        body: VerifyBodySchema,
        response: { 200: VerifyResponseSchema, ...errorResponses(400, 403, 429, 503) },
      },
    },
    async (request, reply): Promise<VerifyResponse> => {
      // request.protocol honours X-Forwarded-Proto only from a trusted proxy (TRUST_PROXY).
      const input = {
        token: request.body.token,
        remoteIp: clientIp(request),
        https: request.protocol === 'https',
      };
      const { body, setCookie } = await answerVerify(verifyDeps, input);
      if (setCookie) reply.header('set-cookie', setCookie);
      return body;
    },
  );
}
