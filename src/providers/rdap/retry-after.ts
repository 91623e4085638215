/**
 * Respecting Retry-After: when an RDAP server answers 429 with Retry-After
 * (RFC 6585 §4, RFC 9110 §10.2.3), this service does not ask that server
 * again before the time it named. Until then a request to it fails at once,
 * as a rate_limited operational failure, without being sent; the chain moves
 * on to the next source exactly as it would after a real 429.
 *
 * Per process and per origin (scheme, host and port): registries limit per
 * client address, and each instance has its own.
 */
import type { Clock } from '../../cache/types.js';
import { ProviderError } from '../../errors.js';
import { parseRetryAfter } from '../http-client.js';

/** A server cannot make us stay away for longer than this, whatever it says. */
export const MAX_RETRY_AFTER_SECONDS = 3600;

export class RetryAfterGate {
  readonly #until = new Map<string, number>();
  readonly #clock: Clock;

  constructor(clock: Clock) {
    this.#clock = clock;
  }

  /** Throws rate_limited when the server of `url` asked not to be queried yet. */
  check(url: string): void {
    const origin = originOf(url);
    const until = this.#until.get(origin);
    if (until === undefined) return;
    const now = this.#clock();
    if (now >= until) {
      this.#until.delete(origin);
      return;
    }
    const seconds = Math.ceil((until - now) / 1000);
    throw new ProviderError(
      'rate_limited',
      `${new URL(url).host} asked not to be queried for another ${seconds} s (429, Retry-After): not sent, skipped until ${new Date(until).toISOString()}`,
    );
  }

  /**
   * Records a 429's Retry-After for the server of `url` (nothing when the
   * header is absent); returns until when that server is left alone.
   */
  record(url: string, retryAfter: string | string[] | undefined): number | undefined {
    const now = this.#clock();
    const wait = parseRetryAfter(retryAfter, now);
    if (wait === undefined || wait <= 0) return undefined;
    for (const [origin, until] of this.#until) if (until <= now) this.#until.delete(origin);
    const until = now + Math.min(wait, MAX_RETRY_AFTER_SECONDS * 1000);
    this.#until.set(originOf(url), until);
    return until;
  }
}

function originOf(url: string): string {
  return new URL(url).origin;
}
