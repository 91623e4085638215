/**
 * Cloudflare Turnstile server-side validation (siteverify):
 * https://developers.cloudflare.com/turnstile/get-started/server-side-validation/
 *
 * POST form fields `secret`, `response`, `remoteip`, `idempotency_key`; the
 * answer is `{success, "error-codes", hostname?, challenge_ts?, action?, ...}`.
 *
 * The adapter separates a verdict on the visitor's token (returned) from an
 * operational failure (thrown as ProviderError, so the caller answers 503):
 * unreachable, timeout, 5xx/429, an unparseable body, and the error codes
 * that say our side of the call is broken (wrong secret, malformed request,
 * Cloudflare's own internal error), which the visitor cannot fix by retrying
 * the challenge.
 */
import { randomUUID } from 'node:crypto';
import type { Config } from '../../config/index.js';
import { ProviderError } from '../../errors.js';
import { providerCatalog } from '../catalog.js';
import { deadlineSignal } from '../deadline.js';
import { type HttpClient, parseJson } from '../http-client.js';
import type { Provider, ProviderInfo } from '../types.js';

/** Siteverify's answer as Cloudflare documents it; only the fields we read. */
interface SiteverifyResponse {
  success?: unknown;
  'error-codes'?: unknown;
  hostname?: unknown;
  challenge_ts?: unknown;
  action?: unknown;
}

export type TurnstileVerdict =
  | {
      success: true;
      hostname: string | undefined;
      challengeTs: string | undefined;
      action: string | undefined;
    }
  | { success: false; errorCodes: string[] };

/**
 * Error codes that blame our request, not the visitor's token (Cloudflare's
 * "Error codes" table on the page above). `internal-error` is Cloudflare's
 * own fault and documented as retryable.
 */
const OPERATIONAL_CODES = new Set([
  'missing-input-secret',
  'invalid-input-secret',
  'bad-request',
  'internal-error',
]);

/** A verify call should be quick: a visitor is waiting on it after solving the challenge. */
const DEFAULT_TIMEOUT_MS = 3000;

export interface TurnstileOptions {
  /** Cap on one verify call; the provider chain's own timeout applies too, the smaller wins. */
  timeoutMs?: number;
}

export class TurnstileVerifier implements Provider {
  readonly info: ProviderInfo;
  readonly #http: HttpClient;
  readonly #url: string;
  readonly #secret: string | undefined;
  readonly #timeoutMs: number;

  constructor(config: Config, http: HttpClient, opts: TurnstileOptions = {}) {
    this.info = providerCatalog(config).turnstile;
    this.#http = http;
    this.#url = config.turnstileVerifyUrl;
    this.#secret = config.turnstileSecretKey;
    this.#timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  }

  async verify(
    req: { token: string; remoteIp?: string | undefined },
    signal: AbortSignal,
  ): Promise<TurnstileVerdict> {
    if (this.#secret === undefined)
      throw new ProviderError('upstream_error', 'TURNSTILE_SECRET_KEY is not set');
    const form = new URLSearchParams({ secret: this.#secret, response: req.token });
    if (req.remoteIp) form.set('remoteip', req.remoteIp);
    // Random per call, never derived from the token: Cloudflare answers a repeated
    // key with the first verdict, which would let a replayed token succeed again
    // whenever our replay set is unavailable.
    form.set('idempotency_key', randomUUID());

    const res = await this.#http.send(this.#url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: form.toString(),
      signal: deadlineSignal(this.#timeoutMs, signal),
      maxBytes: 64 * 1024,
    });
    const data = parseJson<SiteverifyResponse>(res.body, this.#url);
    if (typeof data !== 'object' || data === null || typeof data.success !== 'boolean') {
      throw new ProviderError(
        'bad_response',
        `siteverify answered HTTP ${res.status} without a success flag`,
      );
    }
    const codes = Array.isArray(data['error-codes'])
      ? data['error-codes'].filter((c): c is string => typeof c === 'string')
      : [];
    if (data.success) {
      return {
        success: true,
        hostname: stringOrUndefined(data.hostname),
        challengeTs: stringOrUndefined(data.challenge_ts),
        action: stringOrUndefined(data.action),
      };
    }
    const operational = codes.filter((c) => OPERATIONAL_CODES.has(c));
    if (operational.length > 0) {
      throw new ProviderError('upstream_error', `siteverify refused the call: ${operational.join(', ')}`);
    }
    return { success: false, errorCodes: codes };
  }
}

function stringOrUndefined(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}
