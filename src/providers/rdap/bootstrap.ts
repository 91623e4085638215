/**
 * The fallback RDAP path: the IANA bootstrap registry (RFC 9224) at
 * RDAP_BOOTSTRAP_URL names the authoritative server, which is then asked
 * directly. Used after an operational failure of the aggregator, or after
 * the aggregator's own (ambiguous) 404.
 *
 * The bootstrap files change a few times a month, so each is fetched once
 * and kept 24 hours; when a refresh fails the stale copy keeps serving (a
 * day-old list of registries is far better than none), and the refresh is
 * not retried for a few minutes so a down IANA does not slow every lookup.
 */
import type { Clock } from '../../cache/types.js';
import { ProviderError } from '../../errors.js';
import { type HttpClient, joinUrl } from '../http-client.js';
import type { Provider, ProviderInfo } from '../types.js';
import { type BootstrapIndex, bootstrapKindFor, indexBootstrap, objectUrl } from './bootstrap-match.js';
import type { RdapFetcher } from './rdap-fetch.js';
import { assertObjectClass, type BootstrapKind, type RdapAnswer, type RdapQuery } from './types.js';

/** How long a fetched bootstrap file is used before it is fetched again. */
export const BOOTSTRAP_TTL_MS = 24 * 60 * 60 * 1000;
/** After a failed refresh, the stale copy is used this long before trying again. */
export const BOOTSTRAP_RETRY_MS = 5 * 60 * 1000;
/** dns.json is about 75 KB today. */
const BOOTSTRAP_MAX_BYTES = 2 * 1024 * 1024;

export interface BootstrapStoreOptions {
  /** RDAP_BOOTSTRAP_URL, e.g. https://data.iana.org/rdap (with or without a path prefix or trailing slash). */
  baseUrl: string;
  http: Pick<HttpClient, 'getJson'>;
  clock: Clock;
  /** Bounds one refresh, which callers share (it is not tied to any one request). */
  timeoutMs: number;
  /** Told when a refresh failed and a stale copy is used instead. */
  onStale?: (kind: BootstrapKind, error: ProviderError) => void;
}

interface Held {
  index: BootstrapIndex;
  fetchedAt: number;
  /** When the last refresh failed (the stale copy is kept); undefined after a success. */
  failedAt?: number;
}

/** The bootstrap files in memory: fetched on first use, refreshed after 24 h, stale kept on failure. */
export class BootstrapStore {
  readonly #opts: BootstrapStoreOptions;
  readonly #held = new Map<BootstrapKind, Held>();
  readonly #refreshing = new Map<BootstrapKind, Promise<BootstrapIndex>>();

  constructor(opts: BootstrapStoreOptions) {
    this.#opts = opts;
  }

  get(kind: BootstrapKind): Promise<BootstrapIndex> {
    const held = this.#held.get(kind);
    const now = this.#opts.clock();
    if (held && now - held.fetchedAt < BOOTSTRAP_TTL_MS) return Promise.resolve(held.index);
    if (held?.failedAt !== undefined && now - held.failedAt < BOOTSTRAP_RETRY_MS) {
      return Promise.resolve(held.index);
    }
    // Concurrent lookups share one refresh.
    let pending = this.#refreshing.get(kind);
    if (!pending) {
      pending = this.#refresh(kind).finally(() => this.#refreshing.delete(kind));
      this.#refreshing.set(kind, pending);
    }
    return pending;
  }

  async #refresh(kind: BootstrapKind): Promise<BootstrapIndex> {
    const url = joinUrl(this.#opts.baseUrl, `${kind}.json`);
    try {
      const res = await this.#opts.http.getJson<unknown>(url, {
        signal: AbortSignal.timeout(this.#opts.timeoutMs),
        maxBytes: BOOTSTRAP_MAX_BYTES,
      });
      if (res.status !== 200) {
        throw new ProviderError(
          'http_status',
          `HTTP ${res.status} from ${new URL(url).host} for ${kind}.json`,
        );
      }
      const index = indexBootstrap(kind, res.data);
      this.#held.set(kind, { index, fetchedAt: this.#opts.clock() });
      return index;
    } catch (err) {
      const failure =
        err instanceof ProviderError
          ? err
          : new ProviderError('upstream_error', err instanceof Error ? err.message : String(err), {
              cause: err,
            });
      const held = this.#held.get(kind);
      if (!held) throw failure;
      held.failedAt = this.#opts.clock();
      this.#opts.onStale?.(kind, failure);
      return held.index;
    }
  }
}

export class RdapBootstrap implements Provider {
  readonly info: ProviderInfo;
  readonly #store: BootstrapStore;
  readonly #fetcher: RdapFetcher;

  /** The fetcher's outbound sender reaches the registries: their URLs come from IANA data, not the operator. */
  constructor(info: ProviderInfo, deps: { store: BootstrapStore; fetcher: RdapFetcher }) {
    this.info = info;
    this.#store = deps.store;
    this.#fetcher = deps.fetcher;
  }

  async lookup(query: RdapQuery, signal: AbortSignal): Promise<RdapAnswer> {
    const index = await this.#store.get(bootstrapKindFor(query));
    const match = index.match(query);
    if (!match) {
      const scope = query.kind === 'domain' ? `.${query.name.split('.').at(-1)}` : query.address;
      return { outcome: 'no_service', scope };
    }
    // A service may list several base URLs (RFC 9224 §4); the next is tried only after a failure of one.
    let failure: unknown;
    for (const base of match.urls) {
      const url = objectUrl(base, query);
      try {
        const doc = await this.#fetcher.fetch(url, { signal, allowHttp: true, listed: true });
        if (doc.status === 'not_found') return { outcome: 'not_registered', url: doc.url };
        assertObjectClass(query, doc.object, doc.url);
        return { outcome: 'found', url: doc.url, object: doc.object };
      } catch (err) {
        if (!(err instanceof ProviderError) || signal.aborted) throw err;
        failure = err;
      }
    }
    throw failure;
  }
}
