/**
 * The CT providers in chain order: crt.sh primary, Cert Spotter fallback
 * (skipped by the chain unless CERTSPOTTER_API_KEY is set).
 *
 *   const ct = createCtProviders(config, http);
 *   registry.registerChain('ct', ct);
 */
import type { Config } from '../../config/index.js';
import { providerCatalog } from '../catalog.js';
import type { HttpClient } from '../http-client.js';
import { CertspotterProvider } from './certspotter.js';
import { CRTSH_REQUEST_TIMEOUT_MS, type CrtshOptions, CrtshProvider } from './crtsh.js';
import type { CtProvider } from './types.js';

export { CertspotterProvider } from './certspotter.js';
export { CrtshProvider } from './crtsh.js';
export * from './types.js';

/**
 * Per-attempt budget of the CT chain (instead of PROVIDER_TIMEOUT_MS): a
 * crt.sh search may legitimately take up to its 30 s deadline and then be
 * retried with exclude=expired; Cert Spotter may page several times.
 */
export function ctAttemptTimeoutMs(crtsh: CrtshOptions = {}): number {
  return 2 * (crtsh.requestTimeoutMs ?? CRTSH_REQUEST_TIMEOUT_MS);
}

export function createCtProviders(
  config: Config,
  http: Pick<HttpClient, 'send' | 'getJson'>,
  crtshOptions: CrtshOptions = {},
): CtProvider[] {
  const catalog = providerCatalog(config);
  return [
    new CrtshProvider(catalog.crtsh, http, crtshOptions),
    new CertspotterProvider(catalog.certspotter, http, {
      apiKey: config.certspotterApiKey,
      pageTimeoutMs: config.providerTimeoutMs,
    }),
  ];
}
