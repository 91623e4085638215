/**
 * Challenge tokens are single-use on our side too: once the verify endpoint
 * has answered for a token, the token is spent and a second POST of it is
 * refused locally, without another upstream call.
 *
 * The set lives in the shared Cache, so with Redis it holds across every
 * instance. Entries last 5 minutes, the lifetime Cloudflare gives a Turnstile
 * token: after that the token is dead upstream anyway.
 *
 * A cache backend failure is a miss (STYLE habit 4): the lookup says "not
 * spent" and the token goes to the verify endpoint, which enforces single use
 * itself (`timeout-or-duplicate`). So an outage costs one upstream call per
 * replay, never an accepted replay; that is why the adapter never derives its
 * idempotency key from the token.
 *
 * Keys are the SHA-256 of the token, so the store never holds a live token.
 */
import { createHash } from 'node:crypto';
import type { Cache } from '../../cache/types.js';

export const REPLAY_TTL_SECONDS = 5 * 60;

const PREFIX = 'challenge:spent:';

export class ReplaySet {
  readonly #cache: Cache;

  constructor(cache: Cache) {
    this.#cache = cache;
  }

  async isSpent(token: string): Promise<boolean> {
    return (await this.#cache.get<1>(keyOf(token))) !== undefined;
  }

  async markSpent(token: string): Promise<void> {
    await this.#cache.set<1>(keyOf(token), 1, REPLAY_TTL_SECONDS);
  }
}

function keyOf(token: string): string {
  return PREFIX + createHash('sha256').update(token).digest('hex');
}
