/**
 * The offline geolocation database: MMDB files read with mmdb-lib (the
 * MaxMind DB reader the `maxmind` package wraps; we need only its Reader, not
 * the file watcher and LRU around it), plus the ASN range table. By default
 * DB-IP IP to City Lite and the ip-location-db ASN ranges, both shipped as
 * npm packages, so a lookup costs microseconds and no upstream quota.
 *
 * Both load on first use or when warm() is called (the feature calls it once
 * the server listens), single-flight; a load that fails is retried after
 * a minute, not on every request. A miss (no record for a public address) is
 * thrown like a failure, so the ip-geo chain moves on to its fallback.
 */
import { readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import { Reader, type Response } from 'mmdb-lib';
import type { Clock } from '../../cache/types.js';
import { ProviderError, type ProviderInfo } from '../types.js';
import { type AsnHit, type AsnTable, AsnTableBuilder } from './asn-table.js';
import {
  asnAttribution,
  type DataAttribution,
  type GeoLocation,
  type GeoProvider,
  mmdbAttribution,
  normalizeGeoRecord,
} from './geo.js';
import { formatIp, type ParsedIp, prefixOf } from './ip-number.js';
import type { ListLogger } from './list-source.js';

interface OpenDatabase {
  path: string;
  reader: Reader<Response>;
  ipVersion: 4 | 6;
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
  readonly #asn: Lazy<{ table: AsnTable; attribution: DataAttribution[] }>;

  constructor(opts: GeoIpDatabaseOptions) {
    this.info = opts.info;
    this.#opts = opts;
    const retryMs = opts.retryMs ?? 60_000;
    this.#geo = new Lazy(() => this.#openDatabases(), opts.clock, retryMs);
    this.#asn = new Lazy(() => this.#loadAsn(), opts.clock, retryMs);
  }

  /** Starts both loads without waiting; failures are logged (and retried on use). */
  warm(): void {
    this.#geo.get().catch(() => {});
    this.#asn.get().catch(() => {});
  }

  /** Resolves once both loads have settled, whatever their outcome. */
  async settled(): Promise<void> {
    await Promise.allSettled([this.#geo.get(), this.#asn.get()]);
  }

  async locate(ip: ParsedIp, _signal?: AbortSignal): Promise<GeoLocation> {
    let databases: OpenDatabase[];
    try {
      databases = await this.#geo.get();
    } catch (err) {
      throw new ProviderError('upstream_error', `GeoIP database unavailable: ${messageOf(err)}`, {
        cause: err,
      });
    }
    const text = formatIp(ip);
    for (const db of databases) {
      // An IPv6 address has no place in an IPv4 tree (mmdb-lib would walk it on the first 32 bits).
      if (ip.version === 6 && db.ipVersion === 4) continue;
      const [raw, prefixLength] = db.reader.getWithPrefixLength(text);
      const fields = raw === null ? undefined : normalizeGeoRecord(raw);
      if (!fields || (fields.country_code === null && fields.latitude === null)) continue;
      return { ...fields, network: prefixOf(ip, prefixLength), attribution: db.attribution };
    }
    throw new ProviderError('upstream_error', `no record for ${text} in the GeoIP database`);
  }

  /** The AS holding `ip`, or null when the table has none or could not load. */
  async lookupAsn(ip: ParsedIp): Promise<AsnAnswer | null> {
    try {
      const { table, attribution } = await this.#asn.get();
      const hit = table.lookup(ip);
      return hit ? { ...hit, attribution } : null;
    } catch {
      return null;
    }
  }

  async #openDatabases(): Promise<OpenDatabase[]> {
    const paths = this.#opts.mmdbPaths;
    if (paths.length === 0) throw new Error('GEOIP_DB names no file');
    try {
      const databases = await Promise.all(
        paths.map(async (path): Promise<OpenDatabase> => {
          let reader: Reader<Response>;
          try {
            reader = new Reader<Response>(await readFile(path));
          } catch (err) {
            throw new Error(`${basename(path)}: ${messageOf(err)}`, { cause: err });
          }
          const { ipVersion, databaseType } = reader.metadata;
          return {
            path,
            reader,
            ipVersion: ipVersion === 4 ? 4 : 6,
            attribution: mmdbAttribution(path, databaseType),
          };
        }),
      );
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
      return databases;
    } catch (err) {
      this.#opts.log.warn({ provider: this.info.id, err: messageOf(err) }, 'GeoIP database failed to load');
      throw err;
    }
  }

  async #loadAsn(): Promise<{ table: AsnTable; attribution: DataAttribution[] }> {
    const started = performance.now();
    try {
      const builder = new AsnTableBuilder();
      const attribution: DataAttribution[] = [];
      for (const path of this.#opts.asnPaths) {
        builder.add(await readFile(path, 'utf8'), basename(path));
        for (const a of asnAttribution(path)) if (!attribution.includes(a)) attribution.push(a);
      }
      const table = builder.build();
      const { report } = table;
      const log = report.overlaps + report.outOfOrder + report.skipped > 0 ? 'warn' : 'info';
      // Overlapping or unsorted rows are resolved (the later-starting range wins) and counted here.
      this.#opts.log[log](
        { provider: this.info.id, ...report, ms: Math.round(performance.now() - started) },
        'ASN table loaded',
      );
      return { table, attribution };
    } catch (err) {
      this.#opts.log.warn({ provider: this.info.id, err: messageOf(err) }, 'ASN table failed to load');
      throw err;
    }
  }
}

function messageOf(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && err instanceof Error) return `${code}: ${err.message}`;
  return err instanceof Error ? err.message : String(err);
}
