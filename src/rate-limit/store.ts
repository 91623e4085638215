/**
 * How a budget is counted (docs/architecture.md §5): a fixed window per counter and key.
 * The first point for a key opens a window of the counter's `seconds`; every point taken in
 * it counts, refused ones included; it closes `seconds` after it opened, and the next point
 * opens a fresh one. A point is granted while the window holds at most `points` of them.
 *
 * Two stores count this way and one conformance suite holds them to it
 * (test/conformance/rate-limit.test.ts): in process (memory-store.ts), answering in the
 * same tick, and in Redis (redis-store.ts), shared by every instance, one command per take,
 * with an in-process store of its own answering while Redis cannot.
 */
import type { Redis } from 'ioredis';
import type { Clock } from '../cache/types.js';
import { MemoryStore } from './memory-store.js';
import { RedisStore } from './redis-store.js';

/** A budget's shape: what one window of it grants. */
export interface Counter {
  /** Names the budget; with Redis, a key's counter is `netdiag:rl:<name>:<key>`. */
  readonly name: string;
  /** Points a window grants; every later point in it is refused (and still counted). */
  readonly points: number;
  /** How long a window lasts from its first point (fractions kept to the millisecond). */
  readonly seconds: number;
}

/** A key's window in one counter. */
export interface WindowState {
  /** Points taken in it, refused ones included (after a take, that point too). */
  consumed: number;
  /** Milliseconds until it closes and the budget is whole again. */
  msBeforeNext: number;
}

export interface RateLimitStore {
  /**
   * One point for `key` from each counter in order, stopping after the first that refuses:
   * the counters after it are not asked and take no point. The state of each counter asked,
   * in order. Synchronous in process (the hot path awaits nothing); with Redis, one command.
   */
  take(counters: readonly Counter[], key: string): WindowState[] | Promise<WindowState[]>;
  /** Each counter's open window for `key`, undefined where none is open; takes no point. */
  peek(counters: readonly Counter[], key: string): Promise<(WindowState | undefined)[]>;
}

/** Whether the point that left a window in this state was granted. */
export function granted(counter: Counter, state: WindowState): boolean {
  return state.consumed <= counter.points;
}

export interface StoreOptions {
  /** Set: counted in Redis, shared by every instance; unset: in this process. */
  redis?: Redis | undefined;
  /** In-process windows are read from it (the app's clock); Redis keeps its own time. */
  clock?: Clock;
  /** A Redis failure: the point was counted in process instead. */
  onError?: (err: unknown) => void;
}

export function createRateLimitStore({ redis, clock = Date.now, onError }: StoreOptions): RateLimitStore {
  const memory = new MemoryStore(clock);
  return redis === undefined ? memory : new RedisStore(redis, { insurance: memory, onError });
}
