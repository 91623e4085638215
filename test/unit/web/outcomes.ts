/** Answers as the site's `send` returns them, for fakes of the API. */
import type { Outcome } from '../../../src/web/api/client';

export function ok<T>(data: T): Outcome<T> {
  return { ok: true, status: 200, data, cache: null, ms: 1 };
}

export function failed(status: number, error: string, code?: string): Outcome<never> {
  return { ok: false, status, error: code ? { error, code } : { error }, retryAfter: null, ms: 1 };
}

/** A promise with its settle functions outside, so a test decides when (and in which order) answers arrive. */
export function deferred<T>(): {
  promise: Promise<T>;
  resolve: (value: T) => void;
  reject: (err: unknown) => void;
} {
  let resolve!: (value: T) => void;
  let reject!: (err: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** Lets every settled promise's callbacks run. */
export function settle(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
}
