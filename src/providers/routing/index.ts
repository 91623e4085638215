/**
 * The routing providers in chain order: RIPEstat primary, Team Cymru's DNS
 * interface as the fallback for address origins. Routing status (visibility,
 * first/last seen) only RIPEstat answers, so that chain has one provider.
 */
import type { Config } from '../../config/index.js';
import { providerCatalog } from '../catalog.js';
import type { HttpClient } from '../http-client.js';
import { CymruRouting, type TxtResolver } from './cymru.js';
import { RipestatRouting } from './ripestat.js';
import type { OriginProvider, RoutingStatusProvider } from './types.js';

export { CymruRouting } from './cymru.js';
export { RipestatRouting } from './ripestat.js';
export * from './types.js';

export interface RoutingProviders {
  /** Origin of an address: [RIPEstat, Team Cymru]. */
  origin: readonly OriginProvider[];
  /** Routing status of an address: [RIPEstat]. */
  status: readonly RoutingStatusProvider[];
}

export function createRoutingProviders(config: Config, http: HttpClient, dns: TxtResolver): RoutingProviders {
  const catalog = providerCatalog(config);
  const ripestat = new RipestatRouting(catalog.ripestat, http, config.ripestatUrl);
  const cymru = new CymruRouting(catalog.cymru, dns);
  return { origin: [ripestat, cymru], status: [ripestat] };
}
