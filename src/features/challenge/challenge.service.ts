/**
 * Verifying a challenge token and opening a lookup session (docs/architecture.md §5).
 *
 *   spent locally?  → 403 challenge_failed, no upstream call
 *   siteverify      → unreachable / timeout / 5xx / garbage / our-side error → 503 unavailable
 *                   → success: false, or a hostname other than the configured one → 403 challenge_failed
 *                   → success → a signed session valid 15 minutes
 *
 * The token is spent as soon as siteverify has given a verdict on it, whatever
 * the verdict: Cloudflare has consumed it by then, so asking again can only
 * waste an upstream call. A 503 leaves it unspent so the visitor may retry.
 */

import type { Clock } from '../../cache/types.js';
import { AppError, isUpstreamFailed } from '../../errors.js';
import { isAllowedByCidrs } from '../../net/address.js';
import type { ProviderChain } from '../../providers/chain.js';
import type { TurnstileVerdict, TurnstileVerifier } from '../../providers/challenge/turnstile.js';
import { sessionFromCookies, sessionSetCookie } from '../../session/cookie.js';
import { issueSession, type Session } from '../../session/session.js';
import type { ChallengeStatus, VerifyResponse } from './challenge.schema.js';
import type { ReplaySet } from './replay.js';

export interface VerifyDeps {
  chain: ProviderChain;
  verifier: TurnstileVerifier;
  replay: ReplaySet;
  clock: Clock;
  sessionSecret: string;
  /** When set, the verdict must name this hostname (case-insensitive). */
  expectedHostname: string | undefined;
}

export interface VerifiedSession {
  session: Session;
  /** The signed cookie value. */
  value: string;
}

function rejected(why: string): AppError {
  return new AppError(403, 'challenge_failed', `challenge verification rejected: ${why}`);
}

export async function verifyChallenge(
  deps: VerifyDeps,
  input: { token: string; remoteIp: string | undefined },
): Promise<VerifiedSession> {
  if (await deps.replay.isSpent(input.token)) {
    throw rejected('this token was already used; complete the challenge again for a new one');
  }

  let verdict: TurnstileVerdict;
  try {
    // No cache key: a verdict is never reused. The chain times the call out and
    // records the outcome for /api/providers and the metrics.
    const result = await deps.chain.run({
      capability: 'challenge',
      providers: [deps.verifier],
      call: (verifier, signal) => verifier.verify(input, signal),
      ttl: () => 0,
    });
    verdict = result.value;
  } catch (err) {
    // The chain's "every provider failed" (upstream_failed) is, for this endpoint, the verify step being unavailable.
    if (isUpstreamFailed(err)) {
      throw new AppError(503, 'unavailable', 'challenge verification is unavailable; try again shortly', {
        cause: err,
      });
    }
    throw err;
  }

  await deps.replay.markSpent(input.token);
  if (!verdict.success) {
    throw rejected(verdict.errorCodes.length > 0 ? verdict.errorCodes.join(', ') : 'token not accepted');
  }
  const expected = deps.expectedHostname;
  if (expected !== undefined && verdict.hostname?.toLowerCase() !== expected.toLowerCase()) {
    throw rejected('the token was issued for another site');
  }
  return issueSession(deps.sessionSecret, deps.clock());
}

/** The /api/challenge/verify answer, and the Set-Cookie value when a session was issued. */
export interface VerifyAnswer {
  body: VerifyResponse;
  setCookie?: string;
}

/**
 * POST /api/challenge/verify: without protection, no session is needed; with it, the token
 * is verified and a session cookie issued (Secure when the request came over HTTPS).
 */
export async function answerVerify(
  deps: VerifyDeps & { active: boolean },
  input: { token: string; remoteIp: string | undefined; https: boolean },
): Promise<VerifyAnswer> {
  if (!deps.active) {
    return {
      body: {
        verified: false,
        protection_active: false,
        message: 'challenge protection is not active: no session is needed',
      },
    };
  }
  const { session, value } = await verifyChallenge(deps, input);
  return {
    body: { verified: true, protection_active: true, expires_at: new Date(session.expiresAt).toISOString() },
    setCookie: sessionSetCookie(value, input.https),
  };
}

/** The configuration /api/challenge/status describes. */
export interface StatusDeps {
  active: boolean;
  siteKey: string | undefined;
  scriptUrl: string;
  sessionSecret: string;
  clock: Clock;
  /** CHALLENGE_EXEMPT_CIDRS: callers from these need no session. */
  exemptCidrs: readonly string[];
  /** The caller's remaining budgets and the limits (rate-limit/client-limits.ts). */
  limits: (ip: string) => Promise<Pick<ChallengeStatus, 'rate_limit' | 'tiers'>>;
}

/** GET /api/challenge/status: whether protection is on, this caller's session, and its budgets. */
export async function describeStatus(
  deps: StatusDeps,
  caller: { cookie: string | undefined; ip: string },
): Promise<ChallengeStatus> {
  const session = sessionFromCookies(caller.cookie, deps.sessionSecret, deps.clock());
  return {
    protection: {
      active: deps.active,
      provider: 'turnstile',
      ...(deps.active ? { site_key: deps.siteKey, script_url: deps.scriptUrl } : {}),
    },
    session: {
      required: deps.active && !isAllowedByCidrs(caller.ip, deps.exemptCidrs),
      valid: session !== undefined,
      ...(session ? { expires_at: new Date(session.expiresAt).toISOString() } : {}),
    },
    ...(await deps.limits(caller.ip)),
  };
}
