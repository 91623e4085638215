/**
 * What this service may ask of the RDAP aggregator. rdap.org publishes its
 * limit ("Cloudflare limits clients to a maximum of 10 requests in 10
 * seconds", about.rdap.org, "Rate Limits"; RDAP_AGGREGATOR_RATE_LIMIT): past
 * it Cloudflare answers 429 and blocks the client for the rest of its
 * mitigation period. The budget keeps the service under that limit, so a
 * lookup beyond it goes to the IANA bootstrap path at once instead of paying
 * a 429 first (the bootstrap files are what rdap.org itself tells heavy users
 * to consume).
 *
 * Counted in the service's rate-limit store (rate-limit/store.ts), as the
 * per-client limits are: in process, or in Redis when REDIS_URL is set, so
 * every instance behind one egress address spends one budget, with the same
 * in-process insurance when Redis fails. Its counter is `upstream:<id>`, a
 * window's key `<series>:<index>` (in Redis `netdiag:rl:upstream:<id>:0:…`).
 *
 * The windows are read from the app's clock (keys name them), not from the
 * store's own: the store only counts. Each request is counted in two
 * series of windows two periods long, the second offset by one period. Any
 * span of one period lies wholly inside a window of one series, so no such
 * span ever carries more than the limit, however requests fall around a
 * window's edge; a single fixed window would let twice the limit through
 * across its edge, which a sliding count refuses. The price: bursts up to the
 * limit, but about half of it under sustained load.
 *
 * The older of the two windows is asked first, and a refusal stops there. The
 * newer one opened later and has counted only the requests the older granted
 * since, so it never holds more than the older: it grants whenever the older
 * does, and a refused request spends nothing in a window that had room.
 */
import type { Clock } from '../../cache/types.js';
import type { RateLimitSpec } from '../../config/index.js';
import { MemoryStore } from '../../rate-limit/memory-store.js';
import { type Counter, granted, type RateLimitStore, type WindowState } from '../../rate-limit/store.js';

export interface AggregatorBudgetOptions {
  spec: RateLimitSpec;
  clock: Clock;
  /** Where it is counted (shared across instances with Redis); this process alone when absent. */
  store?: RateLimitStore | undefined;
  /** Names the budget in its keys (the provider id). */
  id: string;
}

interface Window {
  key: string;
  /** When it closes, on the app's clock (ms). */
  end: number;
}

export class AggregatorBudget {
  readonly spec: RateLimitSpec;
  readonly #counter: Counter;
  readonly #store: RateLimitStore;
  readonly #clock: Clock;
  readonly #periodMs: number;

  constructor(opts: AggregatorBudgetOptions) {
    this.spec = opts.spec;
    this.#clock = opts.clock;
    this.#periodMs = opts.spec.seconds * 1000;
    // A window's count outlives the window (it is opened inside it and kept two periods).
    this.#counter = { name: `upstream:${opts.id}`, points: opts.spec.points, seconds: 2 * opts.spec.seconds };
    this.#store = opts.store ?? new MemoryStore(opts.clock);
  }

  /**
   * Takes one request. Resolves undefined when it is granted; otherwise with
   * the time (app clock, ms) when the full windows close and one may be
   * granted again.
   */
  async take(): Promise<number | undefined> {
    const windows = this.#windowsAt(this.#clock());
    const states: WindowState[] = [];
    for (const window of windows) {
      const [state] = await this.#store.take([this.#counter], window.key);
      if (state === undefined) throw new Error('rate-limit store answered no window');
      states.push(state);
      if (!granted(this.#counter, state)) return this.#reopensAt(windows, states);
    }
    return undefined;
  }

  /** When a request may be granted again: once every window full now has closed. */
  async #reopensAt(windows: readonly Window[], taken: readonly WindowState[]): Promise<number> {
    let at = 0;
    for (const [i, window] of windows.entries()) {
      const state = taken[i] ?? (await this.#store.peek([this.#counter], window.key))[0];
      if (state !== undefined && state.consumed >= this.#counter.points) at = Math.max(at, window.end);
    }
    return at;
  }

  /** The window of each series that holds `now`, the older (closing first) first. */
  #windowsAt(now: number): Window[] {
    const length = 2 * this.#periodMs;
    const windows = [0, this.#periodMs].map((offset, series) => {
      const index = Math.floor((now - offset) / length);
      return { key: `${series}:${index}`, end: index * length + offset + length };
    });
    return windows.sort((a, b) => a.end - b.end);
  }
}
