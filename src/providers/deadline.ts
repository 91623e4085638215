/**
 * A per-request deadline combined with the caller's signal.
 *
 * `AbortSignal.any([signal, AbortSignal.timeout(ms)])` is the obvious way to
 * write this, and on Node 20 it is broken: nothing holds the inner timeout
 * signal strongly (the composite keeps its sources through weak references,
 * and the timer itself only holds a WeakRef), so a garbage collection before
 * the deadline removes it and the composite never aborts
 * (nodejs/node#57736, fixed upstream by nodejs/node#57867). A hung upstream
 * then outlives its deadline: crt.sh searches ran to the CT chain's 70 s
 * instead of 35 s, and a stalled relay-list download never ended at all.
 *
 * Here the timer's callback holds its AbortController strongly until it
 * fires; the timer is unref'd so it never keeps the process alive. The
 * abort reason is a DOMException named "TimeoutError", exactly what
 * AbortSignal.timeout() produces, so error classification is unchanged.
 */
export function deadlineSignal(ms: number, signal?: AbortSignal): AbortSignal {
  const controller = new AbortController();
  const timer = setTimeout(
    () => controller.abort(new DOMException('The operation was aborted due to timeout', 'TimeoutError')),
    ms,
  );
  timer.unref();
  return signal ? AbortSignal.any([signal, controller.signal]) : controller.signal;
}
