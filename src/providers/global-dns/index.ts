/**
 * The global DNS providers, in chain order. Globalping needs no key (a token
 * only raises its limits); a second provider such as RIPE Atlas would be
 * appended here with `configured` tied to its API key, so the chain skips it
 * until the key is set and then uses it only after Globalping fails.
 */
import type { Config } from '../../config/index.js';
import { providerCatalog } from '../catalog.js';
import type { HttpClient } from '../http-client.js';
import { GlobalpingAdapter, type GlobalpingOptions } from './globalping.js';
import type { GlobalDnsProvider } from './types.js';

/**
 * Pacing knobs a test may set (the production floor of 500 ms between polls always holds),
 * and where the app hears that the quota is spent.
 */
export type GlobalDnsTuning = Pick<
  GlobalpingOptions,
  'pollIntervalMs' | 'deadlineMs' | 'clock' | 'sleep' | 'onQuotaSpent'
>;

export function createGlobalDnsProviders(
  config: Config,
  http: Pick<HttpClient, 'send'>,
  tuning: GlobalDnsTuning = {},
): GlobalDnsProvider[] {
  return [
    new GlobalpingAdapter({
      info: providerCatalog(config).globalping,
      baseUrl: config.globalpingUrl,
      token: config.globalpingToken,
      http,
      requestTimeoutMs: config.providerTimeoutMs,
      ...tuning,
    }),
  ];
}

export { DEFAULT_DEADLINE_MS, GlobalpingAdapter, MIN_POLL_INTERVAL_MS } from './globalping.js';
export * from './types.js';
