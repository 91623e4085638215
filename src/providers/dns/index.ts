/**
 * The DNS client: one provider per DNS_RESOLVERS entry, and the resolver
 * facade the rest of the service calls.
 *
 *   const providers = createDnsProviders(config.dnsResolvers, {});
 *   registry.registerChain('dns', providers);
 *   const dns = new DnsResolver(chain, providers);
 *   const { value, source, providers_tried } = await dns.resolve('example.com', 'MX', { signal });
 */
import { DohDnsProvider } from './doh.js';
import { parseResolverUrl, type ResolverEndpoint, resolverInfo } from './endpoint.js';
import { StreamDnsProvider } from './stream.js';
import type { DnsTransportProvider } from './types.js';
import { UdpDnsProvider } from './udp.js';

export { DohDnsProvider } from './doh.js';
export { parseResolverUrl, type ResolverEndpoint, resolverInfo } from './endpoint.js';
export { canonicalName, InvalidDnsNameError, normalizeDnsName } from './names.js';
export { edeName } from './parameters.js';
export { presentation, quoted } from './presentation.js';
export {
  answerTtl,
  DnsResolver,
  MAX_NEGATIVE_TTL,
  MAX_POSITIVE_TTL,
  type ResolveOptions,
} from './resolver.js';
export { StreamDnsProvider, type StreamTransportOptions } from './stream.js';
export * from './types.js';
export { UdpDnsProvider } from './udp.js';

export interface DnsProviderOptions {
  /** Trust anchors (PEM) for DoH and DoT, replacing the system store: tests use the test CA. */
  ca?: string | string[];
  /** UDP: wait this long before the one retry. Default 2000 ms. */
  udpRetryAfterMs?: number;
  /** TCP/DoT/DoH: close a pooled connection after this long idle. Default 10 s (DoH 30 s). */
  idleTimeoutMs?: number;
  /** TCP/DoT/DoH: connect (and TLS handshake) timeout. Default 10 s. */
  connectTimeoutMs?: number;
}

/**
 * One provider per resolver URL, in the given (chain) order. Throws TypeError
 * for a URL that config validation should already have refused.
 */
export function createDnsProviders(
  resolverUrls: readonly string[],
  opts: DnsProviderOptions = {},
): DnsTransportProvider[] {
  const counts = new Map<string, number>();
  return resolverUrls.map((url) => {
    const endpoint = parseResolverUrl(url);
    const base = resolverInfo(endpoint).id;
    const n = (counts.get(base) ?? 0) + 1;
    counts.set(base, n);
    // Ids key the provider registry: the same host listed twice (say, two DoH paths) gets `-2`, `-3`, ...
    return createProvider(endpoint, { ...opts, id: n === 1 ? undefined : `${base}-${n}` });
  });
}

function createProvider(
  endpoint: ResolverEndpoint,
  opts: DnsProviderOptions & { id?: string },
): DnsTransportProvider {
  const stream = { idleTimeoutMs: opts.idleTimeoutMs, connectTimeoutMs: opts.connectTimeoutMs, id: opts.id };
  switch (endpoint.transport) {
    case 'doh':
      return new DohDnsProvider(endpoint, { ...stream, ca: opts.ca });
    case 'udp':
      return new UdpDnsProvider(endpoint, { ...stream, retryAfterMs: opts.udpRetryAfterMs });
    case 'tcp':
    case 'dot':
      return new StreamDnsProvider(endpoint, { ...stream, ca: opts.ca });
  }
}
