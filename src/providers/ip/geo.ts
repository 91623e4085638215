/**
 * The shape every geolocation adapter returns, and the normalization of the
 * MMDB record shapes we read. Pure, no I/O.
 */
import type { Provider } from '../types.js';
import type { ParsedIp } from './ip-number.js';

/** A data set's licence notice, shown with every answer that used it. */
export interface DataAttribution {
  text: string;
  url: string;
  license?: string;
  /** The licence itself: CC BY 4.0 §3(a)(1)(C) asks that the notice include its URI or a link to it. */
  license_url?: string;
}

const CC_BY_4 = {
  license: 'CC BY 4.0',
  license_url: 'https://creativecommons.org/licenses/by/4.0/',
} as const;

export interface GeoFields {
  /** ISO 3166-1 alpha-2, upper case. */
  country_code: string | null;
  region: string | null;
  city: string | null;
  latitude: number | null;
  longitude: number | null;
  /** IANA time zone name. */
  timezone: string | null;
  /** The database's own accuracy estimate, where it gives one (MaxMind does, DB-IP Lite does not). */
  accuracy_radius_km: number | null;
}

export interface GeoLocation extends GeoFields {
  /** The network the record is filed under (CIDR), when the source says. */
  network: string | null;
  attribution: DataAttribution[];
  /** When the data set that answered was built (ISO 8601), when the source says (data-age.ts). */
  data_built_at: string | null;
}

/**
 * A geolocation source for the ip-geo chain: null when it holds no record for
 * the address (the chain then asks the next source), a ProviderError for a failure.
 */
export interface GeoProvider extends Provider {
  locate(ip: ParsedIp, signal: AbortSignal): Promise<GeoLocation | null>;
}

export const DBIP_ATTRIBUTION: DataAttribution = Object.freeze({
  // The wording and link the DB-IP Lite licence asks for (CC BY 4.0).
  text: 'IP Geolocation by DB-IP',
  url: 'https://db-ip.com',
  ...CC_BY_4,
});

export const GEOLITE2_ATTRIBUTION: DataAttribution = Object.freeze({
  text: 'This product includes GeoLite2 data created by MaxMind',
  url: 'https://www.maxmind.com',
  license: 'GeoLite2 End User License Agreement',
  license_url: 'https://www.maxmind.com/en/geolite2/eula',
});

/** Both halves of the ip-location-db ASN data name their sources (ROUTEVIEWS-LICENSE, NRO_LICENSE). */
export const ASN_DATA_ATTRIBUTION: readonly DataAttribution[] = Object.freeze([
  Object.freeze({ text: 'AS numbers: RouteViews', url: 'https://www.routeviews.org/', ...CC_BY_4 }),
  Object.freeze({ text: 'AS numbers: NRO statistics', url: 'https://www.nro.net/', ...CC_BY_4 }),
  DBIP_ATTRIBUTION,
]);

/**
 * The notice a geolocation database needs, told by its metadata type or file
 * name: DB-IP Lite (db-ip.com writes "DBIP-City-Lite"; ip-location-db names
 * its files dbip-city-*), MaxMind GeoLite2. Operator data of another kind
 * carries none.
 */
export function mmdbAttribution(path: string, databaseType: string): DataAttribution[] {
  const name = path.split(/[\\/]/).pop() ?? path;
  if (/db-?ip/i.test(databaseType) || /db-?ip/i.test(name)) return [DBIP_ATTRIBUTION];
  if (/geolite2/i.test(databaseType) || /geolite2/i.test(name)) return [GEOLITE2_ATTRIBUTION];
  return [];
}

/** The ASN CSV's notices: the ip-location-db compilation, or none for the operator's own file. */
export function asnAttribution(path: string): DataAttribution[] {
  return /ip-location-db[\\/]asn/.test(path) ? [...ASN_DATA_ATTRIBUTION] : [];
}

const text = (v: unknown): string | null => (typeof v === 'string' && v.trim() !== '' ? v.trim() : null);
/** A latitude (limit 90) or longitude (limit 180), rounded to four decimals: ~11 m, already more than a city-level estimate means. */
export function coordinate(v: unknown, limit: number): number | null {
  return typeof v === 'number' && Number.isFinite(v) && Math.abs(v) <= limit
    ? Math.round(v * 1e4) / 1e4
    : null;
}
const record = (v: unknown): Record<string, unknown> | undefined =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
const englishName = (v: unknown): string | null => text(record(record(v)?.names)?.en);
const upperCode = (v: unknown): string | null => {
  const code = text(v)?.toUpperCase() ?? null;
  return code && /^[A-Z]{2}$/.test(code) ? code : null;
};

/**
 * One MMDB record → our fields. Two shapes are understood:
 *  - ip-location-db / DB-IP Lite: `{country_code, state1, state2, city, postcode, latitude, longitude, timezone}`
 *  - MaxMind GeoIP2 / GeoLite2 City and Country: `{country: {iso_code, names}, subdivisions: [{names}],
 *    city: {names}, location: {latitude, longitude, time_zone, accuracy_radius}, registered_country}`
 * Undefined for a record of neither shape (an ASN or anonymous-IP database).
 */
export function normalizeGeoRecord(raw: unknown): GeoFields | undefined {
  const r = record(raw);
  if (!r) return undefined;
  if ('country_code' in r || 'state1' in r) {
    return {
      country_code: upperCode(r.country_code),
      region: text(r.state1),
      city: text(r.city),
      latitude: coordinate(r.latitude, 90),
      longitude: coordinate(r.longitude, 180),
      timezone: text(r.timezone),
      accuracy_radius_km: null,
    };
  }
  if ('country' in r || 'location' in r || 'city' in r || 'registered_country' in r) {
    const location = record(r.location);
    const subdivisions = Array.isArray(r.subdivisions) ? r.subdivisions : [];
    const radius = location?.accuracy_radius;
    return {
      country_code:
        upperCode(record(r.country)?.iso_code) ?? upperCode(record(r.registered_country)?.iso_code),
      region: englishName(subdivisions[0]),
      city: englishName(r.city),
      latitude: coordinate(location?.latitude, 90),
      longitude: coordinate(location?.longitude, 180),
      timezone: text(location?.time_zone),
      accuracy_radius_km: typeof radius === 'number' && radius > 0 ? radius : null,
    };
  }
  return undefined;
}
