/**
 * AbortSignal plumbing shared by the transports: every wait a query makes
 * (connect, handshake, answer) ends when the caller's signal aborts, and the
 * failure is a ProviderError the chain understands.
 */
import { ProviderError } from '../../errors.js';

/** Waits for `promise` unless `signal` aborts first (the promise keeps running for other waiters). */
export function abortable<T>(promise: Promise<T>, signal: AbortSignal, url: string): Promise<T> {
  if (signal.aborted) return Promise.reject(abortError(signal, url));
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(abortError(signal, url));
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(e);
      },
    );
  });
}

export function abortError(signal: AbortSignal, url: string): ProviderError {
  const reason: unknown = signal.reason;
  if (reason instanceof ProviderError) return reason;
  return new ProviderError('timeout', `no answer from ${hostPort(url)} before the deadline`, {
    cause: reason,
  });
}

function hostPort(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
}
