/**
 * The fixed window (store.ts) counted in this process, answered synchronously: awaiting even
 * a resolved promise costs the request hook a microtask round trip (bench/hot-path.ts).
 *
 * Each counter keeps its windows in a Map in closing order: a window that is opened again
 * moves to the end, and every window of a counter lasts as long. So closed windows are
 * dropped as points arrive, oldest first, and no timer is needed.
 */
import type { Clock } from '../cache/types.js';
import type { Counter, RateLimitStore, WindowState } from './store.js';

interface Window {
  consumed: number;
  /** On the store's clock (ms). */
  closesAt: number;
}

export class MemoryStore implements RateLimitStore {
  readonly #clock: Clock;
  /** Per counter name: its open windows by key. */
  readonly #counters = new Map<string, Map<string, Window>>();

  constructor(clock: Clock = Date.now) {
    this.#clock = clock;
  }

  take(counters: readonly Counter[], key: string): WindowState[] {
    const now = this.#clock();
    if (counters.length === 0) return [];
    const first = this.#takeOne(counters[0]!, key, now);
    // An array literal: a general budget alone (most requests) costs one small allocation.
    const states = [first];
    if (first.consumed > counters[0]!.points) return states;
    for (let i = 1; i < counters.length; i++) {
      const counter = counters[i]!;
      const state = this.#takeOne(counter, key, now);
      states.push(state);
      if (state.consumed > counter.points) break;
    }
    return states;
  }

  async peek(counters: readonly Counter[], key: string): Promise<(WindowState | undefined)[]> {
    const now = this.#clock();
    return counters.map((counter) => {
      const window = this.#counters.get(counter.name)?.get(key);
      if (window === undefined || window.closesAt <= now) return undefined;
      return { consumed: window.consumed, msBeforeNext: window.closesAt - now };
    });
  }

  /** Open windows of a counter (tests, benchmarks). */
  size(counter: Counter): number {
    return this.#counters.get(counter.name)?.size ?? 0;
  }

  #takeOne(counter: Counter, key: string, now: number): WindowState {
    let windows = this.#counters.get(counter.name);
    if (windows === undefined) {
      windows = new Map();
      this.#counters.set(counter.name, windows);
    }
    for (const [open, window] of windows) {
      if (window.closesAt > now) break;
      windows.delete(open);
    }
    const window = windows.get(key);
    // Closed but not swept only if the clock went back (a test's): it is reopened all the same.
    if (window !== undefined && window.closesAt > now) {
      window.consumed += 1;
      return { consumed: window.consumed, msBeforeNext: window.closesAt - now };
    }
    const ms = windowMs(counter);
    windows.delete(key);
    windows.set(key, { consumed: 1, closesAt: now + ms });
    return { consumed: 1, msBeforeNext: ms };
  }
}

/** A counter's window in whole milliseconds, as both stores count it. */
export function windowMs(counter: Counter): number {
  return Math.round(counter.seconds * 1000);
}
