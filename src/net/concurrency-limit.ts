/**
 * A counting semaphore: at most `max` holders at once, the rest waiting in
 * arrival order. The one mechanism behind the service-wide bounds on live
 * probes (MAX_LIVE_PROBES, MAX_SMTP_SESSIONS; net/outbound.ts): a wait ends
 * with a slot or with the caller's signal, never by itself, so the caller
 * decides how long a slot is worth waiting for.
 *
 *   const release = await limit.acquire(AbortSignal.timeout(5_000));
 *   try { ... } finally { release(); }
 */

interface Waiter {
  grant: (release: () => void) => void;
}

export class ConcurrencyLimit {
  readonly #max: number;
  #active = 0;
  /** FIFO: the slot goes to the one who asked first, so a burst is served in the order it came. */
  readonly #queue: Waiter[] = [];

  constructor(max: number) {
    if (!Number.isInteger(max) || max < 1)
      throw new RangeError(`a limit of ${max} is not a positive integer`);
    this.#max = max;
  }

  get max(): number {
    return this.#max;
  }

  /** Slots held now. */
  get active(): number {
    return this.#active;
  }

  /** Callers waiting for a slot now. */
  get waiting(): number {
    return this.#queue.length;
  }

  /**
   * Resolves with this holder's release (idempotent) once a slot is free; rejects with the
   * signal's reason if it aborts first, leaving the queue as if it had never asked.
   */
  acquire(signal?: AbortSignal): Promise<() => void> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (this.#active < this.#max) {
      this.#active++;
      return Promise.resolve(this.#release());
    }
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        grant: (release) => {
          signal?.removeEventListener('abort', onAbort);
          resolve(release);
        },
      };
      const onAbort = () => {
        const at = this.#queue.indexOf(waiter);
        if (at >= 0) this.#queue.splice(at, 1);
        reject(signal?.reason);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#queue.push(waiter);
    });
  }

  /** A release for one slot: hands it to the next waiter, or frees it. */
  #release(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.#queue.shift();
      // The slot passes straight to the next waiter: no one arriving meanwhile can take it.
      if (next) next.grant(this.#release());
      else this.#active--;
    };
  }
}
