import { ProviderError } from '../../errors.js';
import { RipestatAdapter } from '../ripestat-data.js';
import { buildTime } from './data-age.js';
import { coordinate, type DataAttribution, type GeoLocation, type GeoProvider } from './geo.js';
import { formatIpNumber, type ParsedIp } from './ip-number.js';

/** The parts of `data` we read (fixture: test/fixtures/ripestat/maxmind-geo-lite.json). */
interface LocatedResource {
  resource?: string;
  locations?: Array<{
    country?: string;
    city?: string;
    resources?: string[];
    latitude?: number;
    longitude?: number;
    covered_percentage?: number;
  }>;
}

export const RIPESTAT_GEO_ATTRIBUTION: DataAttribution = Object.freeze({
  text: 'RIPEstat Data API (maxmind-geo-lite: GeoLite2 data created by MaxMind)',
  url: 'https://stat.ripe.net/docs/02.data-api/maxmind-geo-lite.html',
});

export class RipestatGeo extends RipestatAdapter implements GeoProvider {
  async locate(ip: ParsedIp, signal: AbortSignal): Promise<GeoLocation> {
    const { data } = await this.dataCall('maxmind-geo-lite', formatIpNumber(ip), {
      signal,
      maxBytes: 256 * 1024,
    });
    const resources = data.located_resources as LocatedResource[] | undefined;
    if (!Array.isArray(resources)) {
      throw new ProviderError('bad_response', 'RIPEstat answer without data.located_resources');
    }
    // The location covering most of the resource; for one address there is at most one.
    const locations = resources.flatMap((r) => (Array.isArray(r?.locations) ? r.locations : []));
    const best = locations.reduce<(typeof locations)[number] | undefined>(
      (a, b) => (a === undefined || (b.covered_percentage ?? 0) > (a.covered_percentage ?? 0) ? b : a),
      undefined,
    );
    const country = typeof best?.country === 'string' ? best.country.toUpperCase() : '';
    return {
      country_code: /^[A-Z]{2}$/.test(country) ? country : null,
      region: null,
      city: typeof best?.city === 'string' && best.city !== '' ? best.city : null,
      latitude: coordinate(best?.latitude, 90),
      longitude: coordinate(best?.longitude, 180),
      timezone: null,
      accuracy_radius_km: null,
      network: best?.resources?.[0] ?? null,
      attribution: [RIPESTAT_GEO_ATTRIBUTION],
      // The time of the GeoLite2 snapshot the answer comes from (RIPEstat's result_time; UTC, no offset given).
      data_built_at: buildTime(stringOf(data.result_time) ?? stringOf(data.latest_time)),
    };
  }
}

const stringOf = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
