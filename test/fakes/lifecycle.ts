/**
 * What every fake server needs to shut down at once: the connections (and
 * HTTP/2 sessions) it holds and the timers of replies still pending, so that
 * close() ends promptly even while a 'timeout' or trickle fault is holding a
 * client. One place for it, shared by the fake upstreams and fake targets.
 */
interface Closable {
  destroy(): void;
  once(event: 'close', listener: () => void): unknown;
}

export class FakeLifecycle {
  /** Set by close(): replies in progress stop writing. */
  closing = false;
  readonly #open = new Set<Closable>();
  readonly #timers = new Set<NodeJS.Timeout>();
  #closed: Promise<void> | undefined;

  /** Destroys `c` on close() unless it closed first. */
  track(c: Closable): void {
    this.#open.add(c);
    c.once('close', () => this.#open.delete(c));
  }

  /** setTimeout that close() cancels. */
  later(fn: () => void, ms: number): void {
    const timer = setTimeout(() => {
      this.#timers.delete(timer);
      fn();
    }, ms);
    this.#timers.add(timer);
  }

  delay(ms: number): Promise<void> {
    return new Promise((resolve) => this.later(resolve, ms));
  }

  /** Idempotent: a second call waits for the same shutdown. */
  close(server: { close(callback: () => void): unknown }): Promise<void> {
    this.#closed ??= new Promise<void>((resolve) => {
      this.closing = true;
      for (const timer of this.#timers) clearTimeout(timer);
      this.#timers.clear();
      server.close(() => resolve());
      for (const c of this.#open) c.destroy();
    });
    return this.#closed;
  }
}
