/**
 * Globalping's measurement quota, as its answers to POST /v1/measurements report it.
 *
 * Globalping counts tests (one per probe) in a fixed hourly window per client:
 * 250 per address (IPv6 /64) without a token, 500 per account with one, past
 * which an account spends credits (jsdelivr/globalping config/default.cjs,
 * `measurement.rateLimit.post`; src/lib/rate-limiter/rate-limiter-post.ts).
 * Every answer to a create, 202 or 429, carries `X-RateLimit-Limit`,
 * `-Remaining` and `-Reset` (seconds until the window ends, not a date), and
 * `X-Request-Cost`; `X-Credits-Remaining` when an account's credits were
 * looked at. A 429 carries no `Retry-After`: the reset is the only "when".
 *
 * An anonymous request asking for more probes than remain is refused before
 * any probe is chosen (`precheckPostMeasurementRateLimit`), so once fewer tests
 * remain than a measurement needs, the next one is certain to be refused until
 * the reset, and is not sent. With a token the same shortfall may be paid in
 * credits, so only a 429 stops the adapter then.
 *
 * The state is this process's: each instance learns the shared quota from its
 * own answers, at the price of at most one refused request per instance and
 * window. A response without these headers (a 429 from something in front of
 * Globalping, the test faults' bare 429) says nothing about the quota and is
 * ignored here; the caller treats it as an ordinary failure.
 */
import { formatDateTime } from '../../client/words.js';
import type { ProviderQuota } from '../registry.js';

/** Why and until when a measurement would be refused; what the adapter and the API say about it. */
export interface QuotaRefusal {
  /** Epoch ms when the window resets. */
  resetAt: number;
  /** Whole seconds until then, at least 1: a Retry-After. */
  retryAfterSeconds: number;
  /** e.g. "0 of 250 tests left this hour, a measurement needs 10; resets at 2025-01-01 01:00 UTC" */
  reason: string;
}

interface Observation {
  limit: number;
  remaining: number;
  resetAt: number;
  observedAt: number;
  /** The create this came with was refused (429). */
  refused: boolean;
  creditsRemaining: number | undefined;
}

type Headers = Record<string, string | string[] | undefined>;

export class GlobalpingQuota {
  readonly #clock: () => number;
  readonly #authenticated: boolean;
  #last: Observation | undefined;

  constructor(opts: { clock: () => number; authenticated: boolean }) {
    this.#clock = opts.clock;
    this.#authenticated = opts.authenticated;
  }

  /**
   * Reads the headers of an answer to a create. Returns true when this answer is
   * the one that tells the quota is spent (it was not known to be just before), so
   * the caller reports it once per window rather than once per refused request.
   */
  observe(status: number, headers: Headers, cost: number): boolean {
    const limit = count(headers['x-ratelimit-limit']);
    const remaining = count(headers['x-ratelimit-remaining']);
    const reset = count(headers['x-ratelimit-reset']);
    if (limit === undefined || remaining === undefined || reset === undefined) return false;
    const wasRefusing = this.refusal(cost) !== undefined;
    const now = this.#clock();
    this.#last = {
      limit,
      remaining,
      resetAt: now + reset * 1000,
      observedAt: now,
      refused: status === 429,
      creditsRemaining: count(headers['x-credits-remaining']),
    };
    return !wasRefusing && this.refusal(cost) !== undefined;
  }

  /** Set while a measurement of `cost` tests is known to be refused: why, and until when. */
  refusal(cost: number): QuotaRefusal | undefined {
    const last = this.#last;
    const now = this.#clock();
    if (last === undefined || now >= last.resetAt) return undefined;
    const short = last.remaining < cost && !this.#authenticated;
    if (!last.refused && !short) return undefined;
    const credits = last.creditsRemaining !== undefined ? `, ${last.creditsRemaining} credits left` : '';
    return {
      resetAt: last.resetAt,
      retryAfterSeconds: Math.max(1, Math.ceil((last.resetAt - now) / 1000)),
      reason:
        `${last.remaining} of ${last.limit} tests left this hour${credits}, a measurement needs ${cost}; ` +
        `resets at ${formatDateTime(new Date(last.resetAt))}`,
    };
  }

  /** What /api/providers shows: the last answer's figures, or a fresh window once it has reset. */
  listing(): ProviderQuota | undefined {
    const last = this.#last;
    if (last === undefined) return undefined;
    const observed_at = new Date(last.observedAt).toISOString();
    if (this.#clock() >= last.resetAt) {
      // The next window starts with the next measurement; until then nothing is spent.
      return { limit: last.limit, remaining: last.limit, reset_at: null, observed_at };
    }
    return {
      limit: last.limit,
      remaining: last.remaining,
      reset_at: new Date(last.resetAt).toISOString(),
      observed_at,
    };
  }
}

/** A non-negative integer header, as Globalping writes them; undefined when absent or otherwise. */
function count(header: string | string[] | undefined): number | undefined {
  const value = (Array.isArray(header) ? header[0] : header)?.trim();
  return value !== undefined && /^\d{1,9}$/.test(value) ? Number(value) : undefined;
}
