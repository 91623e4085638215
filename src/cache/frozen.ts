/**
 * A cached value is shared by every request that hits its entry, for as long as
 * it lives, so no caller may change it: the cache stores its own copy, frozen
 * all the way down, and hands that out. A caller that tries to change it gets a
 * TypeError (modules are strict), not a silent corruption of every later hit.
 */

export type DeepReadonly<T> = T extends (infer E)[]
  ? readonly DeepReadonly<E>[]
  : T extends object
    ? { readonly [K in keyof T]: DeepReadonly<T[K]> }
    : T;

/** Freezes `value` and everything it holds (JSON-like data: arrays and plain objects); returns it. */
export function deepFreeze<T>(value: T): T {
  if (typeof value !== 'object' || value === null || Object.isFrozen(value)) return value;
  Object.freeze(value);
  for (const key of Object.keys(value)) deepFreeze((value as Record<string, unknown>)[key]);
  return value;
}

/** A frozen copy that shares nothing with `value`: what a cache stores. */
export function frozenCopy<T>(value: T): T {
  return deepFreeze(structuredClone(value));
}
