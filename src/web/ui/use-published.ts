import { useEffect, useState } from 'preact/hooks';

/** A plain-TypeScript store that tells its listeners each new value (lookups.ts, challenge.ts). */
interface Published<T> {
  subscribe(listener: (value: T) => void): () => void;
}

/** The latest value `store` published, starting from `current`; the component re-renders on each. */
export function usePublished<T>(store: Published<T>, current: T): T {
  const [value, setValue] = useState(current);
  useEffect(() => store.subscribe(setValue), [store]);
  return value;
}
