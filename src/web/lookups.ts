/**
 * The lookups the page runs, without the page: one lookup at a time, each one
 * or more API calls whose answers arrive in any order. Starting a lookup aborts
 * the one before it, and an answer that belongs to an older lookup is dropped
 * even when it arrives (its call ignored the abort, or was already answered).
 *
 * Successful answers are kept for five minutes, so back/forward shows a result
 * again without asking the API; every other way of starting a lookup asks anew.
 *
 * Plain TypeScript that never touches the DOM: the page subscribes to it, and
 * tests drive it with a fake call runner.
 */
import { type Call, callKey, type Outcome } from './api/client';

/** What a lookup part must have: the call it makes. The page's parts also carry their renderer. */
export interface LookupPart {
  call: Call;
}

export interface PartRun<P> {
  part: P;
  /** Undefined while the call is under way. */
  outcome?: Outcome<unknown>;
}

export interface Lookup<P, I> {
  /** Increases with every lookup started: the page keys its result cards on it. */
  id: number;
  /** What the page says about the lookup (for the site: its target and tool). */
  info: I;
  /** When it started, on the `clock` the store was given (the page's spinner counts from it). */
  started: number;
  parts: readonly PartRun<P>[];
}

/** Makes one call; rejects only when `signal` aborted it. */
export type CallRunner = (call: Call, signal: AbortSignal) => Promise<Outcome<unknown>>;

const REUSE_MS = 5 * 60_000;

/** Successful answers seen in this page, by call. */
export class AnswerCache {
  private readonly answers = new Map<string, { outcome: Outcome<unknown>; at: number }>();

  constructor(
    private readonly maxAgeMs = REUSE_MS,
    private readonly now: () => number = Date.now,
  ) {}

  /** The answer to `call` if one was seen less than `maxAgeMs` ago. */
  fresh(call: Call): Outcome<unknown> | undefined {
    const seen = this.answers.get(callKey(call));
    return seen !== undefined && this.now() - seen.at < this.maxAgeMs ? seen.outcome : undefined;
  }

  /** Keeps `outcome` if it is a success; an error is never shown again without asking. */
  remember(call: Call, outcome: Outcome<unknown>): void {
    if (outcome.ok) this.answers.set(callKey(call), { outcome, at: this.now() });
  }
}

export interface LookupsOptions {
  run: CallRunner;
  cache?: AnswerCache;
  /** The time `Lookup.started` is read from; the page's spinner uses `performance.now()`. */
  clock?: () => number;
}

export class Lookups<P extends LookupPart, I> {
  private lookup: Lookup<P, I> | null = null;
  private controller: AbortController | null = null;
  private lastId = 0;
  private readonly listeners = new Set<(lookup: Lookup<P, I> | null) => void>();
  private readonly run: CallRunner;
  private readonly cache: AnswerCache;
  private readonly clock: () => number;

  constructor(options: LookupsOptions) {
    this.run = options.run;
    this.cache = options.cache ?? new AnswerCache();
    this.clock = options.clock ?? (() => performance.now());
  }

  /** The lookup on show, or null before the first one and after `clear`. */
  get current(): Lookup<P, I> | null {
    return this.lookup;
  }

  subscribe(listener: (lookup: Lookup<P, I> | null) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Aborts the lookup under way and starts one call per part. With `reuse`
   * (the browser moved back or forward to it), a part answered successfully
   * in the last five minutes shows that answer instead of calling again. `remember: false`
   * keeps no answer at all (a pasted message's: the call's key holds the message).
   */
  start(info: I, parts: readonly P[], options: { reuse: boolean; remember?: boolean }): void {
    this.controller?.abort();
    const controller = new AbortController();
    this.controller = controller;
    const id = ++this.lastId;
    this.show({ id, info, started: this.clock(), parts: parts.map((part) => ({ part })) });
    parts.forEach((part, i) => {
      const seen = options.reuse ? this.cache.fresh(part.call) : undefined;
      const pending = seen ? Promise.resolve(seen) : this.run(part.call, controller.signal);
      pending.then(
        (outcome) => {
          // Kept even when a newer lookup replaced this one: it is still a fresh answer to the call.
          // Not kept when the call carries what the user asked us never to keep (a pasted message).
          if (options.remember !== false) this.cache.remember(part.call, outcome);
          this.answer(id, i, outcome);
        },
        () => {
          // Aborted: a newer lookup replaced this one.
        },
      );
    });
  }

  /** Aborts the lookup under way and shows none. */
  clear(): void {
    this.controller?.abort();
    this.controller = null;
    this.show(null);
  }

  private answer(id: number, index: number, outcome: Outcome<unknown>): void {
    const lookup = this.lookup;
    if (!lookup || lookup.id !== id) return;
    this.show({ ...lookup, parts: lookup.parts.map((p, j) => (j === index ? { ...p, outcome } : p)) });
  }

  private show(lookup: Lookup<P, I> | null): void {
    this.lookup = lookup;
    for (const listener of this.listeners) listener(lookup);
  }
}
