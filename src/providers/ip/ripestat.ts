/**
 * RIPEstat `maxmind-geo-lite` data call: the ip-geo fallback, used after the
 * offline database fails or has no record for a public address.
 *
 *   GET {RIPESTAT_URL}/data/maxmind-geo-lite/data.json?resource=<ip>&sourceapp=netdiag
 *
 * RIPEstat asks callers to identify themselves with `sourceapp`
 * (https://stat.ripe.net/docs/02.data-api/#data-api-usage). An answer with
 * no locations is a valid "nothing known", not a failure.
 */
import { type HttpClient, joinUrl } from '../http-client.js';
import { ProviderError, type ProviderInfo } from '../types.js';
import { coordinate, type DataAttribution, type GeoLocation, type GeoProvider } from './geo.js';
import { formatIp, type ParsedIp } from './ip-number.js';

/** The parts of the vendor's envelope we read (fixture: test/fixtures/ripestat/maxmind-geo-lite.json). */
interface MaxmindGeoLiteEnvelope {
  status?: string;
  data?: {
    located_resources?: Array<{
      resource?: string;
      locations?: Array<{
        country?: string;
        city?: string;
        resources?: string[];
        latitude?: number;
        longitude?: number;
        covered_percentage?: number;
      }>;
    }>;
  };
}

export const RIPESTAT_GEO_ATTRIBUTION: DataAttribution = Object.freeze({
  text: 'RIPEstat Data API (maxmind-geo-lite: GeoLite2 data created by MaxMind)',
  url: 'https://stat.ripe.net/docs/02.data-api/maxmind-geo-lite.html',
});

export const SOURCE_APP = 'netdiag';

export class RipestatGeo implements GeoProvider {
  readonly info: ProviderInfo;
  readonly #http: HttpClient;
  readonly #baseUrl: string;

  constructor(info: ProviderInfo, http: HttpClient, baseUrl: string) {
    this.info = info;
    this.#http = http;
    this.#baseUrl = baseUrl;
  }

  async locate(ip: ParsedIp, signal: AbortSignal): Promise<GeoLocation> {
    const query = new URLSearchParams({ resource: formatIp(ip), sourceapp: SOURCE_APP });
    const url = `${joinUrl(this.#baseUrl, '/data/maxmind-geo-lite/data.json')}?${query}`;
    const { status, data } = await this.#http.getJson<MaxmindGeoLiteEnvelope>(url, {
      signal,
      maxBytes: 256 * 1024,
    });
    if (status !== 200) throw new ProviderError('http_status', `HTTP ${status} from RIPEstat`);
    const resources = data?.data?.located_resources;
    if (data?.status !== 'ok' || !Array.isArray(resources)) {
      throw new ProviderError('bad_response', 'RIPEstat answer without data.located_resources');
    }
    // The location covering most of the resource; for one address there is at most one.
    const locations = resources.flatMap((r) => (Array.isArray(r.locations) ? r.locations : []));
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
    };
  }
}
