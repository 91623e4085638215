/**
 * How old a geolocation data set is, told from when it was built (an MMDB
 * file's build_epoch, RIPEstat's result time) and the app clock, so tests
 * move time instead of waiting for it. Pure, no I/O.
 *
 * DB-IP publishes its Lite databases monthly; ip-location-db repackages each
 * release. Past 60 days a copy has missed at least one release (two, most
 * months), so locations are more often wrong: networks move between
 * operators and places every month.
 */

/** Days after its build at which a data set is reported stale (log, /readyz). */
export const GEO_DATA_MAX_AGE_DAYS = 60;

const DAY_MS = 24 * 60 * 60 * 1000;

/** The date of the data behind an answer or a listing. */
export interface DataAge {
  /** When the data set was built (ISO 8601, UTC). */
  built_at: string;
  /** Whole days since then, by the app clock (0 for a build date in the future). */
  age_days: number;
  /** True past GEO_DATA_MAX_AGE_DAYS: the data has missed at least one monthly release. */
  stale: boolean;
}

export function dataAge(builtAt: string, now: number): DataAge {
  const age_days = Math.max(0, Math.floor((now - Date.parse(builtAt)) / DAY_MS));
  return { built_at: builtAt, age_days, stale: age_days > GEO_DATA_MAX_AGE_DAYS };
}

/**
 * A build time as ISO 8601, or null when there is none to tell: an MMDB
 * build_epoch of 0 (absent) or a time that does not parse. A time without
 * an offset (RIPEstat's `result_time`) is UTC.
 */
export function buildTime(value: Date | string | undefined | null): string | null {
  if (value === undefined || value === null) return null;
  let ms: number;
  if (value instanceof Date) ms = value.getTime();
  else {
    const hasOffset = /(?:Z|[+-]\d\d:?\d\d)$/i.test(value);
    ms = Date.parse(hasOffset ? value : `${value}Z`);
  }
  return Number.isFinite(ms) && ms > 0 ? new Date(ms).toISOString() : null;
}
