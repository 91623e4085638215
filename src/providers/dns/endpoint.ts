/**
 * One DNS_RESOLVERS entry → where to connect and how the resolver is listed
 * in /api/providers (id, name, docs). Well-known public resolvers get their
 * vendor's name and documentation; any other gets a name built from its
 * transport and address.
 */
import type { ProviderInfo } from '../types.js';
import type { DnsTransport } from './types.js';

/** Options every transport takes. */
export interface TransportIdentity {
  /** Registry id to use instead of the derived one (when one resolver is listed twice). */
  id?: string;
}

export interface ResolverEndpoint {
  transport: DnsTransport;
  /** Host name or IP literal, without IPv6 brackets. */
  host: string;
  port: number;
  /** The configured URL, unchanged. */
  url: string;
}

const SCHEMES: Readonly<Record<string, { transport: DnsTransport; port: number }>> = {
  'https:': { transport: 'doh', port: 443 },
  'udp:': { transport: 'udp', port: 53 },
  'tcp:': { transport: 'tcp', port: 53 },
  // RFC 7858 §3.1: DNS over TLS listens on port 853.
  'tls:': { transport: 'dot', port: 853 },
};

export function parseResolverUrl(url: string): ResolverEndpoint {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new TypeError(`DNS resolver "${url}" is not a URL`);
  }
  const scheme = SCHEMES[parsed.protocol];
  if (!scheme) throw new TypeError(`DNS resolver "${url}" has unsupported scheme ${parsed.protocol}`);
  const host = parsed.hostname.replace(/^\[(.*)\]$/, '$1');
  if (host === '') throw new TypeError(`DNS resolver "${url}" has no host`);
  const port = parsed.port === '' ? scheme.port : Number(parsed.port);
  return { transport: scheme.transport, host, port, url };
}

const WELL_KNOWN_DOH: Readonly<Record<string, { id: string; name: string; docs_url: string }>> = {
  'cloudflare-dns.com': {
    id: 'cloudflare-doh',
    name: 'Cloudflare DoH',
    docs_url: 'https://developers.cloudflare.com/1.1.1.1/encryption/dns-over-https/',
  },
  'dns.google': {
    id: 'google-doh',
    name: 'Google DoH',
    docs_url: 'https://developers.google.com/speed/public-dns/docs/doh',
  },
};

const TRANSPORT_FACTS: Readonly<Record<DnsTransport, { label: string; prefix: string; docs_url: string }>> = {
  doh: { label: 'DNS over HTTPS', prefix: 'doh', docs_url: 'https://www.rfc-editor.org/rfc/rfc8484' },
  udp: { label: 'DNS over UDP', prefix: 'udp', docs_url: 'https://www.rfc-editor.org/rfc/rfc1035' },
  tcp: { label: 'DNS over TCP', prefix: 'tcp', docs_url: 'https://www.rfc-editor.org/rfc/rfc7766' },
  dot: { label: 'DNS over TLS', prefix: 'dot', docs_url: 'https://www.rfc-editor.org/rfc/rfc7858' },
};

/** Static facts for the provider registry; `id` is unique per transport+host+port unless overridden. */
export function resolverInfo(ep: ResolverEndpoint, idOverride?: string): ProviderInfo {
  const known = ep.transport === 'doh' ? WELL_KNOWN_DOH[ep.host.toLowerCase()] : undefined;
  const facts = TRANSPORT_FACTS[ep.transport];
  const address = ep.host.includes(':') ? `[${ep.host}]:${ep.port}` : `${ep.host}:${ep.port}`;
  return {
    id: idOverride ?? known?.id ?? `${facts.prefix}-${ep.host.toLowerCase()}-${ep.port}`,
    name: known?.name ?? `${facts.label} (${address})`,
    capabilities: ['dns'],
    docs_url: known?.docs_url ?? facts.docs_url,
    access: 'none',
    configured: true,
    endpoint: ep.url,
  };
}
