/**
 * Load shedding: when the event loop is saturated a request is answered 503 with
 * Retry-After at once, which a client and a load balancer can act on, instead of
 * queueing until it times out (the check in plugins/request-checks.ts). Liveness
 * and readiness keep answering, and metrics have a listener of their own, so
 * operators can see what is going on.
 *
 * The delay is the mean of Node's own event-loop delay histogram
 * (perf_hooks.monitorEventLoopDelay) over each sampling interval, less the
 * histogram's resolution, as @fastify/under-pressure measures it; that plugin is
 * not used because it answers from a request hook of its own, and the service's
 * checks run from one list.
 */
import { type IntervalHistogram, monitorEventLoopDelay } from 'node:perf_hooks';
import { AppError } from '../errors.js';

/** Paths answered however loaded the process is. */
export const ALWAYS_SERVED: ReadonlySet<string> = new Set(['/healthz', '/readyz']);
const RETRY_AFTER_SECONDS = 5;
const RESOLUTION_MS = 10;

export class LoadMonitor {
  readonly #maxDelayMs: number;
  readonly #histogram: IntervalHistogram | undefined;
  readonly #timer: NodeJS.Timeout | undefined;
  #delayMs = 0;

  /** `maxDelayMs` 0: never overloaded, nothing sampled. */
  constructor(maxDelayMs: number, sampleIntervalMs = 1000) {
    this.#maxDelayMs = maxDelayMs;
    if (maxDelayMs <= 0) return;
    const histogram = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
    histogram.enable();
    this.#histogram = histogram;
    this.#timer = setInterval(() => {
      // No sample at all in an interval means the loop never came round to take one.
      const mean = histogram.mean / 1e6 - RESOLUTION_MS;
      this.#delayMs = Number.isNaN(mean) ? Number.POSITIVE_INFINITY : Math.max(0, mean);
      histogram.reset();
    }, sampleIntervalMs);
    this.#timer.unref();
  }

  overloaded(): boolean {
    return this.#maxDelayMs > 0 && this.#delayMs > this.#maxDelayMs;
  }

  close(): void {
    if (this.#timer) clearInterval(this.#timer);
    this.#histogram?.disable();
  }
}

export function overloaded(): AppError {
  return new AppError(503, 'unavailable', 'the service is overloaded; retry shortly', {
    headers: { 'retry-after': String(RETRY_AFTER_SECONDS) },
  });
}
