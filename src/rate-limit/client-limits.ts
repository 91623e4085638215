/**
 * The per-client budgets (docs/architecture.md §5): a general one across /api/* and /mcp,
 * and a smaller one for expensive live measurements on top of it (taken only when a request
 * measures: a cached answer costs a general point alone), both keyed on the
 * client's address (an IPv4 address, an IPv6 /64: rateLimitKey) and counted in one store
 * (store.ts). What a request's passage through them says is written as the RateLimit
 * headers of draft-ietf-httpapi-ratelimit-headers (structured fields, RFC 9651):
 *
 *   RateLimit-Policy: "general";q=30;w=60, "expensive";q=6;w=60
 *   RateLimit: "general";r=29;t=60
 */
import { serializeList } from 'structured-headers';
import type { RateLimitSpec } from '../config/index.js';
import { rateLimitKey } from '../plugins/client-address.js';
import type { Counter, RateLimitStore, WindowState } from './store.js';

export type LimitGroup = 'general' | 'expensive';

/** A per-client counter: named by its group (so its Redis keys are `netdiag:rl:<group>:<client>`). */
export interface GroupCounter extends Counter {
  readonly name: LimitGroup;
}

/** The budgets a request counts against, in order, and the RateLimit-Policy that describes them. */
export interface Budget {
  readonly counters: readonly GroupCounter[];
  readonly policy: string;
}

/** One request's passage through its budgets. */
export interface Verdict {
  /** The RateLimit header: one member per budget consulted. */
  items: string;
  /** The budget that refused and the seconds until a retry can succeed; absent when all granted. */
  refused?: { group: LimitGroup; retryAfter: number };
}

/** One caller's budget in one tier. */
export interface LimitState {
  limit: number;
  remaining: number;
  /** Whole seconds until the window resets; 0 when no window is open. */
  reset_seconds: number;
}

export interface LimitTier {
  name: LimitGroup;
  limit: number;
  window_seconds: number;
  /** Route paths counted against this tier on top of the general one (expensive tier only). */
  endpoints?: string[];
}

/**
 * One member of the RateLimit list: the policy's name as a string, remaining quota (r) and
 * seconds to reset (t), both non-negative integers. Written directly: serializing it through
 * structured-headers costs far more per request for a string whose only variable parts are
 * two integers (docs/performance.md; a property test checks the two agree).
 */
export function rateLimitItem(group: LimitGroup, remaining: number, resetSeconds: number): string {
  return `"${group}";r=${remaining};t=${resetSeconds}`;
}

/** RateLimit-Policy for these budgets, serialized by structured-headers (once per budget). */
export function policyOf(counters: readonly GroupCounter[]): string {
  return serializeList(
    counters.map((c) => [
      c.name,
      new Map([
        ['q', c.points],
        ['w', c.seconds],
      ]),
    ]),
  );
}

export interface ClientLimitsOptions {
  general: RateLimitSpec;
  expensive: RateLimitSpec;
  store: RateLimitStore;
}

export class ClientLimits {
  readonly general: GroupCounter;
  readonly expensive: GroupCounter;
  /** What every /api request takes: a point of the general budget. */
  readonly cheap: Budget;
  /**
   * The same for an expensive route, whose policy names both budgets: the expensive one is
   * taken only when the request measures (`measurement`), never for a cached answer.
   */
  readonly expensiveRoute: Budget;
  /** What a request takes when its lookup finds nothing cached and measures live. */
  readonly measurement: Budget;
  readonly #store: RateLimitStore;

  constructor(opts: ClientLimitsOptions) {
    this.general = { name: 'general', ...opts.general };
    this.expensive = { name: 'expensive', ...opts.expensive };
    this.cheap = { counters: [this.general], policy: policyOf([this.general]) };
    const both = policyOf([this.general, this.expensive]);
    this.expensiveRoute = { counters: [this.general], policy: both };
    this.measurement = { counters: [this.expensive], policy: both };
    this.#store = opts.store;
  }

  /**
   * Takes one point from this (canonical) address in each budget in order, stopping at the
   * first that refuses (its point is counted, the next budget's is not). In process this
   * answers synchronously (the hot path awaits nothing); with Redis, with a promise.
   */
  admit(budget: Budget, ip: string): Verdict | Promise<Verdict> {
    const states = this.#store.take(budget.counters, rateLimitKey(ip));
    return states instanceof Promise ? states.then((s) => verdictOf(budget, s)) : verdictOf(budget, states);
  }

  /** The caller's state in every tier, read without taking a point. */
  async peek(ip: string): Promise<Record<LimitGroup, LimitState>> {
    const [general, expensive] = await this.#store.peek([this.general, this.expensive], rateLimitKey(ip));
    return { general: stateOf(this.general, general), expensive: stateOf(this.expensive, expensive) };
  }

  /** The tiers as /api/challenge/status and the tool catalog describe them. */
  tiers(expensiveEndpoints: readonly string[]): LimitTier[] {
    return [
      { name: 'general', limit: this.general.points, window_seconds: this.general.seconds },
      {
        name: 'expensive',
        limit: this.expensive.points,
        window_seconds: this.expensive.seconds,
        endpoints: [...expensiveEndpoints].sort(),
      },
    ];
  }
}

function verdictOf(budget: Budget, states: readonly WindowState[]): Verdict {
  let items = '';
  for (let i = 0; i < states.length; i++) {
    const counter = budget.counters[i]!;
    const { consumed, msBeforeNext } = states[i]!;
    const seconds = Math.ceil(msBeforeNext / 1000);
    const member = rateLimitItem(counter.name, Math.max(0, counter.points - consumed), Math.max(0, seconds));
    items = items === '' ? member : `${items}, ${member}`;
    if (consumed > counter.points) {
      return { items, refused: { group: counter.name, retryAfter: Math.max(1, seconds) } };
    }
  }
  return { items };
}

function stateOf(counter: GroupCounter, window: WindowState | undefined): LimitState {
  // No window open (or one that has closed but is not yet swept): the full budget is there.
  if (window === undefined || window.msBeforeNext <= 0)
    return { limit: counter.points, remaining: counter.points, reset_seconds: 0 };
  return {
    limit: counter.points,
    remaining: Math.max(0, counter.points - window.consumed),
    reset_seconds: Math.ceil(window.msBeforeNext / 1000),
  };
}
