import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { challengeActive } from '../../config/index.js';
import type { AppContext } from '../../context.js';
import { badInput } from '../../errors.js';
import { clientIp } from '../../plugins/client-address.js';
import { TurnstileVerifier } from '../../providers/challenge/turnstile.js';
import { errorResponses } from '../shared.schema.js';
import {
  type ChallengeStatus,
  ChallengeStatusSchema,
  VerifyBodySchema,
  type VerifyResponse,
  VerifyResponseSchema,
} from './challenge.schema.js';
import { verifyChallenge } from './challenge.service.js';
import { sessionFromCookies, sessionSetCookie } from './cookie.js';
import { ReplaySet } from './replay.js';

export default async function challengeRoutes(base: FastifyInstance, { ctx }: { ctx: AppContext }) {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();
  const { config, clock } = ctx;
  const active = challengeActive(config);
  const verifier = new TurnstileVerifier(config, ctx.http);
  ctx.registry.registerChain('challenge', [verifier]);
  const replay = new ReplaySet(ctx.cache);

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
    async (request): Promise<ChallengeStatus> => {
      const session = sessionFromCookies(request.headers.cookie, config.sessionSecret, clock());
      return {
        protection: {
          active,
          provider: 'turnstile',
          ...(active ? { site_key: config.turnstileSiteKey, script_url: config.turnstileScriptUrl } : {}),
        },
        session: {
          required: active,
          valid: session !== undefined,
          ...(session ? { expires_at: new Date(session.expiresAt).toISOString() } : {}),
        },
        rate_limit: await app.rateLimits.peek(clientIp(request)),
        tiers: app.rateLimits.tiers(),
      };
    },
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
      // The app's validator coerces scalars to the declared type (meant for query strings), which
      // would turn `{"token": 42}` into "42" and send it upstream; a token must arrive as a string.
      preValidation: async (request) => {
        const body = request.body as Record<string, unknown> | null | undefined;
        if (body && typeof body === 'object' && 'token' in body && typeof body.token !== 'string') {
          throw badInput('token', 'must be a string');
        }
      },
    },
    async (request, reply): Promise<VerifyResponse> => {
      if (!active) {
        return {
          verified: false,
          protection_active: false,
          message: 'challenge protection is not active: no session is needed',
        };
      }
      const { session, value } = await verifyChallenge(
        {
          chain: ctx.chain,
          verifier,
          replay,
          clock,
          sessionSecret: config.sessionSecret,
          expectedHostname: config.turnstileExpectedHostname,
        },
        { token: request.body.token, remoteIp: clientIp(request) },
      );
      // request.protocol honours X-Forwarded-Proto only from a trusted proxy (TRUST_PROXY).
      reply.header('set-cookie', sessionSetCookie(value, request.protocol === 'https'));
      return {
        verified: true,
        protection_active: true,
        expires_at: new Date(session.expiresAt).toISOString(),
      };
    },
  );
}
