/**
 * The error a call ends with, for tests that go on to assert its fields. The test fails
 * where the call succeeded or threw something else, naming what it got.
 *
 *   const err = await rejectionOf(provider.issuances('example.com', signal), ProviderError);
 *   expect(err.kind).toBe('timeout');
 */
import { expect } from 'vitest';

type ErrorClass<E> = abstract new (...args: never[]) => E;

/** What `promise` rejects with, which must be an instance of `type`. */
export async function rejectionOf<E>(promise: Promise<unknown>, type: ErrorClass<E>): Promise<E> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(type);
  return err as E;
}

/** What `fn` throws, which must be an instance of `type`. */
export function thrownBy<E>(fn: () => unknown, type: ErrorClass<E>): E {
  let err: unknown;
  try {
    fn();
  } catch (e) {
    err = e;
  }
  expect(err).toBeInstanceOf(type);
  return err as E;
}
