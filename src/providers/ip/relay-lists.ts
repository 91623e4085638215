/**
 * The two relay families ip-privacy matches against, each a ListSource kept
 * fresh in the background: iCloud Private Relay's egress geofeed
 * (RELAY_RANGES_URL, or RELAY_RANGES_FILE) and the Tor bulk exit list
 * (TOR_EXIT_LIST_URL). Each list's index is a file in LIST_CACHE_DIR that
 * lookups read through a small cache (relay-index-files.ts), so the page
 * cache holds one copy per machine rather than every process its own.
 *
 * A match in any loaded list is an answer. "No match" is only an answer when
 * every list has loaded: before that the verdict is unknown, never a false
 * "not a relay".
 */
import type { Clock } from '../../cache/types.js';
import type { Config } from '../../config/index.js';
import type { ProviderAttempt } from '../../errors.js';
import type { ProviderCatalog } from '../catalog.js';
import type { HttpClient } from '../http-client.js';
import type { ProviderRegistry } from '../registry.js';
import type { ProviderInfo } from '../types.js';
import type { ParsedIp } from './ip-number.js';
import { type ListLogger, ListSource, type Scheduler } from './list-source.js';
import type { EgressRegion, RelayHit } from './relay-index.js';
import type { RelayIndexFile } from './relay-index-file.js';
import { RelayIndexFiles } from './relay-index-files.js';
import type { RelayListFormat } from './relay-list-worker.js';

export type RelayProvider = 'iCloud Private Relay' | 'Tor';

export interface RelayMatch {
  provider: RelayProvider;
  prefix: string;
  egress_region: EgressRegion | null;
}

export interface RelayListStatus {
  provider: RelayProvider;
  /** Rows in the copy in use; 0 before the first load. */
  entries: number;
  /** ISO time the copy in use was last fetched or confirmed unchanged; null before the first load. */
  updated_at: string | null;
  source_url: string;
  loaded: boolean;
}

/** A match, a definite "no match" (null), or undefined while a list that could match has not loaded. */
export type RelayVerdict = RelayMatch | null | undefined;

interface Family {
  provider: RelayProvider;
  source: ListSource<RelayIndexFile>;
}

/**
 * When the lists start (their local copies load, their downloads begin): when the app is ready
 * (the server: the lists are fresh before the first visitor asks), or on demand (a one-shot
 * `netdiag` command: only one that reads them, by start() or by its first lookup, downloads them).
 */
export type RelayListsStart = 'on-ready' | 'on-demand';

export class RelayLists {
  readonly #families: readonly Family[];
  readonly #when: RelayListsStart;
  /** Per provider: why its index file could not be read the last time it was asked (cleared by a read). */
  readonly #readErrors = new Map<RelayProvider, string>();
  #started: Promise<void> | undefined;

  constructor(families: readonly Family[], when: RelayListsStart = 'on-ready') {
    this.#families = families;
    this.#when = when;
  }

  /** When the app should start the lists (providers/plugins.ts): 'on-ready', or left to start(). */
  get startsWhen(): RelayListsStart {
    return this.#when;
  }

  classify(ip: ParsedIp): RelayVerdict {
    // On demand, the first lookup is the demand: from here on the lists are loading, as the
    // answer ("not loaded yet: the first download is under way") says. start() never rejects.
    if (this.#when === 'on-demand') void this.start();
    let complete = true;
    for (const { provider, source } of this.#families) {
      const snapshot = source.current;
      if (!snapshot) {
        complete = false;
        continue;
      }
      let hit: RelayHit | undefined;
      try {
        hit = snapshot.data.lookup(ip);
        this.#readErrors.delete(provider);
      } catch (err) {
        // The index is a file (a disk error, a file truncated under us): that list cannot say,
        // which is the "not loaded" answer (503 naming it), not a crash of the request.
        this.#readErrors.set(
          provider,
          `upstream_error: the list's index could not be read: ${errorText(err)}`,
        );
        complete = false;
        continue;
      }
      if (hit) return { provider, ...hit };
    }
    return complete ? null : undefined;
  }

  /**
   * Each list as an attempt at answering (providers_tried): loaded, or failed with the last
   * refresh's error, for an answer that cannot be given until every list has loaded.
   */
  attempts(): ProviderAttempt[] {
    return this.#families.map(({ provider, source }): ProviderAttempt => {
      const { id, name } = source.info;
      const readError = this.#readErrors.get(provider);
      if (source.current && readError === undefined) return { id, name, status: 'ok' };
      if (readError !== undefined) return { id, name, status: 'failed', error: readError };
      return {
        id,
        name,
        status: 'failed',
        error: source.lastError ?? 'not loaded yet: the first download is under way',
      };
    });
  }

  status(): RelayListStatus[] {
    return this.#families.map(({ provider, source }) => {
      const snapshot = source.current;
      return {
        provider,
        entries: snapshot?.entries ?? 0,
        updated_at: snapshot ? new Date(snapshot.updatedAt).toISOString() : null,
        source_url: snapshot?.source ?? source.sourceUrl,
        loaded: snapshot !== undefined,
      };
    });
  }

  /**
   * True while some list has no copy yet and no failed download to show for it: its first
   * download is under way (a one-shot `netdiag` command waits for this to end).
   */
  loading(): boolean {
    return this.#families.some(
      ({ source }) => source.current === undefined && source.lastError === undefined,
    );
  }

  /**
   * Local copies are loaded before this resolves; downloads continue in the background. Once:
   * a second call (a lookup after the CLI started them) shares the first.
   */
  start(): Promise<void> {
    this.#started ??= Promise.all(this.#families.map(({ source }) => source.start())).then(() => {});
    return this.#started;
  }

  async close(): Promise<void> {
    await Promise.all(this.#families.map(({ source }) => source.close()));
  }
}

export interface RelayListsDeps {
  config: Pick<Config, 'relayRangesUrl' | 'relayRangesFile' | 'torExitListUrl' | 'listCacheDir'>;
  catalog: Pick<ProviderCatalog, 'relayRanges' | 'torExits'>;
  http: HttpClient;
  registry: ProviderRegistry;
  clock: Clock;
  log: ListLogger;
  scheduler?: Scheduler;
  /** Default 'on-ready'. */
  start?: RelayListsStart;
}

export function createRelayLists(deps: RelayListsDeps): RelayLists {
  const { config, catalog, http, registry, clock, log, scheduler, start } = deps;
  const common = { http, registry, clock, log, scheduler, cacheDir: config.listCacheDir };
  // Parsed off the main thread (the ~12 MB list would block the event loop and grow the heap for good)
  // into an index file in the list cache directory, which lookups read through a small cache.
  const indexes = (info: ProviderInfo, format: RelayListFormat) => {
    const files = new RelayIndexFiles({ dir: config.listCacheDir, provider: info.id, format, log });
    return {
      parse: (body: Buffer, signal: AbortSignal) => files.parse(body, signal),
      release: (index: RelayIndexFile) => files.release(index),
    };
  };
  const apple = new ListSource<RelayIndexFile>({
    ...common,
    info: catalog.relayRanges,
    url: config.relayRangesUrl,
    file: config.relayRangesFile,
    ...indexes(catalog.relayRanges, 'geofeed'),
  });
  const tor = new ListSource<RelayIndexFile>({
    ...common,
    info: catalog.torExits,
    url: config.torExitListUrl,
    ...indexes(catalog.torExits, 'tor-exits'),
  });
  // Both lists are consulted for every answer, so each is the primary of its own family.
  registry.registerChain('ip-privacy', [apple]);
  registry.registerChain('ip-privacy', [tor]);
  return new RelayLists(
    [
      { provider: 'iCloud Private Relay', source: apple },
      { provider: 'Tor', source: tor },
    ],
    start,
  );
}

/** A system error by its code (its message names a path); anything else by its message. */
function errorText(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === 'string') return code;
  return err instanceof Error ? err.message : String(err);
}
