/**
 * GET /readyz's answer: ready while the cache backend answers (503 when it
 * does not, so an orchestrator takes the instance out), with warnings an
 * operator should act on that do not make the instance unready: stale
 * geolocation data still answers, only less often right.
 */
import type { Cache } from '../../cache/types.js';
import { AppError } from '../../errors.js';
import type { DataAge } from '../../providers/ip/data-age.js';
import { GEO_DATA_MAX_AGE_DAYS } from '../../providers/ip/data-age.js';

export interface ReadinessDeps {
  cache: Pick<Cache, 'ping' | 'kind'>;
  /** The GeoIP data's age once its files are open; undefined when it cannot tell. */
  geoData: () => Promise<DataAge | undefined>;
}

export interface ReadinessWarning {
  code: 'geoip_data_stale';
  message: string;
  built_at: string;
  age_days: number;
}

export interface Readiness {
  status: 'ready';
  cache: string;
  warnings?: ReadinessWarning[];
}

export async function checkReadiness(deps: ReadinessDeps): Promise<Readiness> {
  const { cache } = deps;
  if (!(await cache.ping())) {
    throw new AppError(503, 'unavailable', `cache backend (${cache.kind}) unreachable`);
  }
  const geo = await deps.geoData();
  if (!geo?.stale) return { status: 'ready', cache: cache.kind };
  return {
    status: 'ready',
    cache: cache.kind,
    warnings: [
      {
        code: 'geoip_data_stale',
        message:
          `the GeoIP data was built ${geo.built_at.slice(0, 10)}, ${geo.age_days} days ago (more than ` +
          `${GEO_DATA_MAX_AGE_DAYS}); DB-IP Lite is released monthly: refresh GEOIP_DB (docs/operations.md)`,
        built_at: geo.built_at,
        age_days: geo.age_days,
      },
    ],
  };
}
