/**
 * Static facts about every upstream, from config: the one place ids, names,
 * docs and access requirements are written. Adapters take their `info` from
 * here; /api/providers lists them all.
 */
import type { Config } from '../config/index.js';
import type { ProviderInfo } from './types.js';

function info(p: Omit<ProviderInfo, 'configured'> & { configured?: boolean }): ProviderInfo {
  return Object.freeze({
    ...p,
    capabilities: Object.freeze([...p.capabilities]),
    configured: p.configured ?? true,
  });
}

export function providerCatalog(config: Config) {
  return {
    rdapAggregator: info({
      id: 'rdap-org',
      name: 'rdap.org',
      capabilities: ['rdap'],
      docs_url: 'https://about.rdap.org/',
      access: 'none',
      endpoint: config.rdapAggregatorUrl,
    }),
    rdapBootstrap: info({
      id: 'iana-rdap-bootstrap',
      name: 'IANA RDAP bootstrap (RFC 9224)',
      capabilities: ['rdap'],
      docs_url: 'https://data.iana.org/rdap/',
      access: 'none',
      endpoint: config.rdapBootstrapUrl,
    }),
    crtsh: info({
      id: 'crtsh',
      name: 'crt.sh',
      capabilities: ['ct'],
      docs_url: 'https://crt.sh/',
      access: 'none',
      endpoint: config.crtshUrl,
    }),
    certspotter: info({
      id: 'certspotter',
      name: 'Cert Spotter (SSLMate)',
      capabilities: ['ct'],
      docs_url: 'https://sslmate.com/help/reference/ct_search_api_v1',
      access: 'api_key',
      configured: config.certspotterApiKey !== undefined,
      endpoint: config.certspotterUrl,
    }),
    globalping: info({
      id: 'globalping',
      name: 'Globalping',
      capabilities: ['global-dns'],
      docs_url: 'https://globalping.io/docs/api.globalping.io',
      access: 'none',
      endpoint: config.globalpingUrl,
    }),
    ripestat: info({
      id: 'ripestat',
      name: 'RIPEstat Data API',
      capabilities: ['routing', 'ip-geo'],
      docs_url: 'https://stat.ripe.net/docs/02.data-api/',
      access: 'none',
      endpoint: config.ripestatUrl,
    }),
    cymru: info({
      id: 'cymru',
      name: 'Team Cymru IP to ASN mapping (DNS)',
      capabilities: ['routing'],
      docs_url: 'https://www.team-cymru.com/ip-asn-mapping',
      access: 'none',
      // Asked through the service's own DNS client (DNS_RESOLVERS), so there is no URL to configure.
      endpoint: 'origin.asn.cymru.com via DNS',
    }),
    relayRanges: info({
      id: 'apple-private-relay',
      name: 'iCloud Private Relay egress ranges',
      capabilities: ['ip-privacy'],
      docs_url: 'https://developer.apple.com/support/prepare-your-network-for-icloud-private-relay/',
      access: 'none',
      endpoint: config.relayRangesFile ?? config.relayRangesUrl,
    }),
    torExits: info({
      id: 'tor-exit-list',
      name: 'Tor Project bulk exit list',
      capabilities: ['ip-privacy'],
      docs_url: 'https://check.torproject.org/torbulkexitlist',
      access: 'none',
      endpoint: config.torExitListUrl,
    }),
    geoip: info({
      id: 'geoip-mmdb',
      name: 'GeoIP database (MMDB)',
      capabilities: ['ip-geo'],
      docs_url: 'https://maxmind.github.io/MaxMind-DB/',
      access: 'none',
      endpoint: config.geoipDb,
    }),
    turnstile: info({
      id: 'turnstile',
      name: 'Cloudflare Turnstile siteverify',
      capabilities: ['challenge'],
      docs_url: 'https://developers.cloudflare.com/turnstile/get-started/server-side-validation/',
      access: 'api_key',
      configured: config.turnstileSiteKey !== undefined && config.turnstileSecretKey !== undefined,
      endpoint: config.turnstileVerifyUrl,
    }),
  } as const;
}

export type ProviderCatalog = ReturnType<typeof providerCatalog>;
