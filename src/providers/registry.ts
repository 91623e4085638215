/**
 * The provider inventory behind GET /api/providers: static facts per provider,
 * its role per capability (from its position in the chain), and runtime
 * status the chain (and background refreshers) report into.
 */
import { basename } from 'node:path';
import type { ProviderError, ProviderFailureKind } from '../errors.js';
import type { ProviderInfo } from './types.js';

const URL_SCHEME = /^[a-z][a-z0-9+.-]*:\/\//i;

/**
 * What an operator's endpoint setting may show the public: scheme://host[:port] of a
 * URL (never its user, password, path or query, where keys and tokens travel) and the
 * base name of a file (never the directory layout of the machine). Comma-separated
 * lists (GEOIP_DB) are shown item by item; anything else (a description) as written.
 * `keepPath` keeps a URL's path, for a public document cited as a source (a relay list).
 */
export function publicEndpoint(endpoint: string, opts: { keepPath?: boolean } = {}): string {
  return endpoint
    .split(',')
    .map((part) => {
      const item = part.trim();
      if (URL_SCHEME.test(item)) {
        try {
          const url = new URL(item);
          return `${url.protocol}//${url.host}${opts.keepPath ? url.pathname : ''}`;
        } catch {
          return '(unparsable URL)';
        }
      }
      return item.includes('/') || item.includes('\\') ? basename(item.replaceAll('\\', '/')) : item;
    })
    .join(', ');
}

export type ProviderRole = 'primary' | 'fallback';

export interface ProviderStatus {
  last_success_at: string | null;
  last_failure_at: string | null;
  last_error: string | null;
  consecutive_failures: number;
}

/**
 * An upstream's own account of what this service may still ask of it (Globalping's
 * hourly test quota), as its last answer reported it.
 */
export interface ProviderQuota {
  limit: number;
  remaining: number;
  /** When the window resets; null once it has (nothing spent in the next one yet). */
  reset_at: string | null;
  /** When the upstream last reported it (by this process). */
  observed_at: string;
}

/** The data set a provider answers from, for one that holds its own (the GeoIP database): how old it is. */
export interface ProviderData {
  built_at: string;
  age_days: number;
  stale: boolean;
}

export interface ProviderListing extends Omit<ProviderInfo, 'capabilities'> {
  capabilities: string[];
  roles: Record<string, ProviderRole>;
  status: ProviderStatus;
  quota?: ProviderQuota;
  data?: ProviderData;
}

/**
 * A provider as registered: its facts, its quota where the upstream reports one,
 * and the age of its data where it answers from a data set of its own.
 */
export interface RegisteredProvider {
  info: ProviderInfo;
  quota?: () => ProviderQuota | undefined;
  dataAge?: () => ProviderData | undefined;
}

/** Told of every attempt, whoever made it (the chain, a background list refresh). */
export interface AttemptObserver {
  onAttempt(providerId: string, outcome: 'ok' | 'no_data' | 'failed', kind?: ProviderFailureKind): void;
}

export class ProviderRegistry {
  readonly #entries = new Map<
    string,
    {
      info: ProviderInfo;
      roles: Record<string, ProviderRole>;
      status: ProviderStatus;
      quota?: () => ProviderQuota | undefined;
      dataAge?: () => ProviderData | undefined;
    }
  >();
  readonly #clock: () => number;
  readonly #observer: AttemptObserver | undefined;

  constructor(clock: () => number = Date.now, observer?: AttemptObserver) {
    this.#clock = clock;
    this.#observer = observer;
  }

  /**
   * Registers the providers of one capability in chain order: the first
   * configured one is primary, the rest are fallbacks.
   */
  registerChain(capability: string, providers: readonly RegisteredProvider[]): void {
    let primaryTaken = false;
    for (const provider of providers) {
      const { info } = provider;
      const entry = this.#entry(info);
      if (provider.quota) entry.quota = provider.quota.bind(provider);
      if (provider.dataAge) entry.dataAge = provider.dataAge.bind(provider);
      entry.roles[capability] = !primaryTaken && info.configured ? 'primary' : 'fallback';
      if (info.configured) primaryTaken = true;
    }
  }

  /**
   * It answered: with a value (`ok`) or with nothing for the question (`no_data`, e.g. an
   * address a database does not list). Either way a working provider: its failure streak ends.
   */
  recordSuccess(id: string, outcome: 'ok' | 'no_data' = 'ok'): void {
    this.#observer?.onAttempt(id, outcome);
    const entry = this.#entries.get(id);
    if (!entry) return;
    entry.status.last_success_at = new Date(this.#clock()).toISOString();
    entry.status.consecutive_failures = 0;
  }

  /** Records a failed attempt; returns the text shown for it (`kind: message`), here and in providers_tried. */
  recordFailure(id: string, failure: ProviderError): string {
    const error = `${failure.kind}: ${failure.message}`;
    this.#observer?.onAttempt(id, 'failed', failure.kind);
    const entry = this.#entries.get(id);
    if (!entry) return error;
    entry.status.last_failure_at = new Date(this.#clock()).toISOString();
    entry.status.last_error = error;
    entry.status.consecutive_failures += 1;
    return error;
  }

  list(): ProviderListing[] {
    return [...this.#entries.values()].map(({ info, roles, status, quota, dataAge }) => {
      const reported = quota?.();
      const data = dataAge?.();
      return {
        ...info,
        capabilities: [...info.capabilities],
        roles: { ...roles },
        status: { ...status },
        ...(reported ? { quota: reported } : {}),
        ...(data ? { data } : {}),
      };
    });
  }

  #entry(info: ProviderInfo) {
    let entry = this.#entries.get(info.id);
    if (!entry) {
      entry = {
        info: { ...info, endpoint: publicEndpoint(info.endpoint) },
        roles: {},
        status: { last_success_at: null, last_failure_at: null, last_error: null, consecutive_failures: 0 },
      };
      this.#entries.set(info.id, entry);
    }
    return entry;
  }
}
