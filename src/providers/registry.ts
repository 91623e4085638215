/**
 * The provider inventory behind GET /api/providers: static facts per provider,
 * its role per capability (from its position in the chain), and runtime
 * status the chain (and background refreshers) report into.
 */
import type { ProviderInfo } from './types.js';

export type ProviderRole = 'primary' | 'fallback';

export interface ProviderStatus {
  last_success_at: string | null;
  last_failure_at: string | null;
  last_error: string | null;
  consecutive_failures: number;
}

export interface ProviderListing extends Omit<ProviderInfo, 'capabilities'> {
  capabilities: string[];
  roles: Record<string, ProviderRole>;
  status: ProviderStatus;
}

export class ProviderRegistry {
  readonly #entries = new Map<
    string,
    { info: ProviderInfo; roles: Record<string, ProviderRole>; status: ProviderStatus }
  >();
  readonly #clock: () => number;

  constructor(clock: () => number = Date.now) {
    this.#clock = clock;
  }

  /**
   * Registers the providers of one capability in chain order: the first
   * configured one is primary, the rest are fallbacks.
   */
  registerChain(capability: string, providers: readonly { info: ProviderInfo }[]): void {
    let primaryTaken = false;
    for (const { info } of providers) {
      const entry = this.#entry(info);
      entry.roles[capability] = !primaryTaken && info.configured ? 'primary' : 'fallback';
      if (info.configured) primaryTaken = true;
    }
  }

  recordSuccess(id: string): void {
    const entry = this.#entries.get(id);
    if (!entry) return;
    entry.status.last_success_at = new Date(this.#clock()).toISOString();
    entry.status.consecutive_failures = 0;
  }

  recordFailure(id: string, error: string): void {
    const entry = this.#entries.get(id);
    if (!entry) return;
    entry.status.last_failure_at = new Date(this.#clock()).toISOString();
    entry.status.last_error = error;
    entry.status.consecutive_failures += 1;
  }

  list(): ProviderListing[] {
    return [...this.#entries.values()].map(({ info, roles, status }) => ({
      ...info,
      capabilities: [...info.capabilities],
      roles: { ...roles },
      status: { ...status },
    }));
  }

  #entry(info: ProviderInfo) {
    let entry = this.#entries.get(info.id);
    if (!entry) {
      entry = {
        info,
        roles: {},
        status: { last_success_at: null, last_failure_at: null, last_error: null, consecutive_failures: 0 },
      };
      this.#entries.set(info.id, entry);
    }
    return entry;
  }
}
