/**
 * The one cache interface (STYLE habit 4). Values are JSON-serializable; an
 * entry knows when it expires so a HIT can say how long it stays fresh
 * (`Cache-Control: max-age`). A backend failure is a miss: `get` resolves
 * undefined and `set` resolves, both after logging and counting the fault.
 */
export interface CacheEntry<T = unknown> {
  value: T;
  /** Epoch milliseconds. */
  expiresAt: number;
}

export interface Cache {
  readonly kind: 'memory' | 'redis';
  get<T>(key: string): Promise<CacheEntry<T> | undefined>;
  /** ttlSeconds ≤ 0 stores nothing. */
  set<T>(key: string, value: T, ttlSeconds: number): Promise<void>;
  delete(key: string): Promise<void>;
  /** Readiness: true when the backend answers. */
  ping(): Promise<boolean>;
  close(): Promise<void>;
}

export interface CacheEvents {
  onHit?(): void;
  onMiss?(): void;
  onError?(op: string, err: unknown): void;
}

export type Clock = () => number;
