/**
 * The offline geolocation database: MMDB files and the ASN ranges, by
 * default DB-IP IP to City Lite and the ip-location-db ASN ranges, both
 * shipped as npm packages, so a lookup costs microseconds and no upstream
 * quota.
 *
 * Neither is loaded into the process: the MMDB files are read where they lie
 * (mmdb-file.ts) and the ASN ranges from an index file built once per data
 * release (asn-index-build.ts), each through a small bounded block cache, so
 * the OS page cache holds the one copy that every worker process shares.
 *
 * Both open on first use or when warm() is called (the feature calls it once
 * the server listens), single-flight; an open that fails is retried after
 * a minute, not on every request. A miss (no record for a public address) is
 * thrown like a failure, so the ip-geo chain moves on to its fallback.
 * close() closes the files (and stops an ASN index build in flight).
 *
 * The data is as old as its files' build_epoch: every answer carries that
 * date, and dataAge() tells /api/providers and /readyz. Past 60 days
 * (data-age.ts) a warning is logged, once per process, whenever it is
 * first noticed: at load, or later as the process runs on.
 */
import { basename } from 'node:path';
import type { Clock } from '../../cache/types.js';
import { ProviderError } from '../../errors.js';
import type { ProviderInfo } from '../types.js';
import type { AsnIndex } from './asn-index.js';
import { openAsnIndex } from './asn-index-build.js';
import type { AsnHit } from './asn-table.js';
import type { BlockFileOptions } from './block-file.js';
import { buildTime, type DataAge, dataAge, GEO_DATA_MAX_AGE_DAYS } from './data-age.js';
import {
  asnAttribution,
  type DataAttribution,
  type GeoLocation,
  type GeoProvider,
  mmdbAttribution,
  normalizeGeoRecord,
} from './geo.js';
import { type ParsedIp, prefixOf } from './ip-number.js';
import type { ListLogger } from './list-source.js';
import { MmdbFile } from './mmdb-file.js';

interface OpenDatabase {
  path: string;
  reader: MmdbFile;
  ipVersion: 4 | 6;
  attribution: DataAttribution[];
  /** The file's build_epoch (ISO 8601), null when it has none. */
  builtAt: string | null;
}

interface OpenAsn {
  index: AsnIndex;
  attribution: DataAttribution[];
}

export interface AsnAnswer extends AsnHit {
  attribution: DataAttribution[];
}

export interface GeoIpDatabaseOptions {
  info: ProviderInfo;
  /** MMDB files, consulted in order. */
  mmdbPaths: readonly string[];
  /** ASN CSV files (IPv4 and IPv6 ranges go into one table). */
  asnPaths: readonly string[];
  /** Where the ASN index file is kept (LIST_CACHE_DIR); undefined: it is built into memory. */
  cacheDir?: string;
  /** Block size and cache bound of each open file (defaults: BlockFile's). */
  blocks?: BlockFileOptions;
  clock: Clock;
  log: ListLogger;
  /** After a failed load, wait this long before reading the files again. Default 60 s. */
  retryMs?: number;
}

/** Comma-separated paths from config → list. */
export function pathList(value: string): string[] {
  return value
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean);
}

/** Single-flight load with a cool-down after failure. */
class Lazy<T> {
  #promise: Promise<T> | undefined;
  #failedAt: number | undefined;

  constructor(
    private readonly load: () => Promise<T>,
    private readonly clock: Clock,
    private readonly retryMs: number,
  ) {}

  /** The load started so far, if any. */
  get started(): Promise<T> | undefined {
    return this.#promise;
  }

  get(): Promise<T> {
    const retry = this.#failedAt !== undefined && this.clock() - this.#failedAt >= this.retryMs;
    if (!this.#promise || retry) {
      this.#failedAt = undefined;
      this.#promise = this.load().catch((err: unknown) => {
        this.#failedAt = this.clock();
        throw err;
      });
    }
    return this.#promise;
  }
}

export class GeoIpDatabase implements GeoProvider {
  readonly info: ProviderInfo;
  readonly #opts: GeoIpDatabaseOptions;
  readonly #geo: Lazy<OpenDatabase[]>;
  readonly #asn: Lazy<OpenAsn>;
  readonly #closing = new AbortController();
  /** The oldest build time among the open files: what an operator has to refresh. */
  #builtAt: string | null = null;
  #warnedStale = false;

  constructor(opts: GeoIpDatabaseOptions) {
    this.info = opts.info;
    this.#opts = opts;
    const retryMs = opts.retryMs ?? 60_000;
    this.#geo = new Lazy(() => this.#openDatabases(), opts.clock, retryMs);
    this.#asn = new Lazy(() => this.#loadAsn(), opts.clock, retryMs);
  }

  /** Starts both loads without waiting; failures are logged (and retried on use). */
  warm(): void {
    if (this.#closing.signal.aborted) return;
    this.#geo.get().catch(() => {});
    this.#asn.get().catch(() => {});
  }

  /** Resolves once both loads have settled, whatever their outcome. */
  async settled(): Promise<void> {
    await Promise.allSettled([this.#geo.get(), this.#asn.get()]);
  }

  /** Closes the files once loads in flight have settled; later lookups fail (locate) or find nothing (lookupAsn). */
  async close(): Promise<void> {
    this.#closing.abort();
    const [geo, asn] = await Promise.allSettled([this.#geo.started, this.#asn.started]);
    if (geo.status === 'fulfilled') for (const db of geo.value ?? []) db.reader.close();
    if (asn.status === 'fulfilled') asn.value?.index.close();
  }

  /**
   * How old the data is, by the app clock: undefined until the files are open
   * (right after the server listens) or when none has a build time. Logs the
   * stale warning the first time it finds the data past GEO_DATA_MAX_AGE_DAYS.
   */
  dataAge(): DataAge | undefined {
    if (this.#builtAt === null) return undefined;
    const age = dataAge(this.#builtAt, this.#opts.clock());
    if (age.stale && !this.#warnedStale) {
      this.#warnedStale = true;
      this.#opts.log.warn(
        {
          provider: this.info.id,
          built_at: age.built_at,
          age_days: age.age_days,
          max_age_days: GEO_DATA_MAX_AGE_DAYS,
        },
        'GeoIP data is stale: DB-IP Lite is released monthly; point GEOIP_DB at a fresh copy (docs/operations.md, "GeoIP data")',
      );
    }
    return age;
  }

  /** dataAge() once the files are open (opening them if nothing has yet); undefined when they cannot open. */
  async loadedDataAge(): Promise<DataAge | undefined> {
    if (this.#closing.signal.aborted) return undefined;
    await this.#geo.get().catch(() => undefined);
    return this.dataAge();
  }

  async locate(ip: ParsedIp, _signal?: AbortSignal): Promise<GeoLocation | null> {
    if (this.#closing.signal.aborted) throw new ProviderError('upstream_error', 'GeoIP database closed');
    let databases: OpenDatabase[];
    try {
      databases = await this.#geo.get();
    } catch (err) {
      throw new ProviderError('upstream_error', `GeoIP database unavailable: ${messageOf(err)}`, {
        cause: err,
      });
    }
    for (const db of databases) {
      // An IPv6 address has no place in an IPv4 tree (its first 32 bits would be walked as an IPv4 address).
      if (ip.version === 6 && db.ipVersion === 4) continue;
      const [raw, prefixLength] = read(db, ip);
      const fields = raw === null ? undefined : normalizeGeoRecord(raw);
      if (!fields || (fields.country_code === null && fields.latitude === null)) continue;
      return {
        ...fields,
        network: prefixOf(ip, prefixLength),
        attribution: db.attribution,
        data_built_at: db.builtAt,
      };
    }
    // Not a failure: the database answered, and this address is not in it.
    return null;
  }

  /** The AS holding `ip`, or null when the table has none or could not load. */
  async lookupAsn(ip: ParsedIp): Promise<AsnAnswer | null> {
    if (this.#closing.signal.aborted) return null;
    try {
      const { index, attribution } = await this.#asn.get();
      const hit = index.lookup(ip);
      return hit ? { ...hit, attribution } : null;
    } catch {
      return null;
    }
  }

  async #openDatabases(): Promise<OpenDatabase[]> {
    const paths = this.#opts.mmdbPaths;
    // After close() nothing opens a file that nobody would close.
    if (this.#closing.signal.aborted) throw new Error('closed');
    if (paths.length === 0) throw new Error('GEOIP_DB names no file');
    const databases: OpenDatabase[] = [];
    try {
      for (const path of paths) {
        let reader: MmdbFile;
        try {
          reader = MmdbFile.open(path, this.#opts.blocks);
        } catch (err) {
          throw new Error(`${basename(path)}: ${messageOf(err)}`, { cause: err });
        }
        const { ipVersion, databaseType, buildEpoch } = reader.metadata;
        databases.push({
          path,
          reader,
          ipVersion,
          attribution: mmdbAttribution(path, databaseType),
          builtAt: buildTime(buildEpoch),
        });
      }
      this.#opts.log.info(
        {
          provider: this.info.id,
          databases: databases.map((d) => ({
            file: basename(d.path),
            type: d.reader.metadata.databaseType,
            ip_version: d.ipVersion,
            built: d.reader.metadata.buildEpoch.toISOString(),
          })),
        },
        'GeoIP database loaded',
      );
      const built = databases.flatMap((d) => (d.builtAt === null ? [] : [d.builtAt])).sort();
      this.#builtAt = built[0] ?? null;
      this.dataAge();
      return databases;
    } catch (err) {
      for (const d of databases) d.reader.close();
      this.#opts.log.warn({ provider: this.info.id, err: messageOf(err) }, 'GeoIP database failed to load');
      throw err;
    }
  }

  async #loadAsn(): Promise<OpenAsn> {
    const started = performance.now();
    const { asnPaths, cacheDir, log } = this.#opts;
    try {
      this.#closing.signal.throwIfAborted();
      const attribution: DataAttribution[] = [];
      for (const path of asnPaths) {
        for (const a of asnAttribution(path)) if (!attribution.includes(a)) attribution.push(a);
      }
      const opened = await openAsnIndex({
        sources: asnPaths,
        cacheDir,
        blocks: this.#opts.blocks,
        signal: this.#closing.signal,
      });
      if (opened.writeError !== undefined) {
        // Once per process: the load that got here is kept.
        log.warn(
          { provider: this.info.id, dir: cacheDir, err: opened.writeError },
          'ASN index could not be written: serving it from memory in this process',
        );
      }
      const { report } = opened.index;
      const level = report.overlaps + report.outOfOrder + report.skipped > 0 ? 'warn' : 'info';
      // Overlapping or unsorted rows are resolved (the later-starting range wins) and counted here.
      log[level](
        {
          provider: this.info.id,
          ...report,
          index: opened.origin,
          ms: Math.round(performance.now() - started),
        },
        'ASN table loaded',
      );
      return { index: opened.index, attribution };
    } catch (err) {
      if (!this.#closing.signal.aborted) {
        log.warn({ provider: this.info.id, err: messageOf(err) }, 'ASN table failed to load');
      }
      throw err;
    }
  }
}

/** A lookup; a file that cannot be read (gone, corrupt) is a provider failure, so the chain falls back. */
function read(db: OpenDatabase, ip: ParsedIp): ReturnType<MmdbFile['getWithPrefixLength']> {
  try {
    return db.reader.getWithPrefixLength(ip);
  } catch (err) {
    throw new ProviderError(
      'upstream_error',
      `GeoIP database unreadable: ${basename(db.path)}: ${messageOf(err)}`,
      {
        cause: err,
      },
    );
  }
}

/**
 * A system error (ENOENT, EACCES, ...) by its code alone: its message names the file's full
 * path, which reaches providers_tried and /api/providers (the callers name the file's base name).
 */
function messageOf(err: unknown): string {
  const { code, syscall } = (err ?? {}) as { code?: unknown; syscall?: unknown };
  if (typeof code === 'string' && typeof syscall === 'string') return `${code} (${syscall})`;
  if (typeof code === 'string' && err instanceof Error) return `${code}: ${err.message}`;
  return err instanceof Error ? err.message : String(err);
}
