/**
 * RFC 9224 bootstrap matching, as pure functions: which RDAP base URLs serve
 * a domain name or an IP address, according to IANA's dns.json, ipv4.json
 * and ipv6.json. No I/O here; bootstrap.ts fetches and caches the files.
 */
import ipaddr from 'ipaddr.js';
import { ProviderError } from '../../errors.js';
import { type BootstrapFile, type BootstrapKind, queryPath, type RdapQuery } from './types.js';

export interface BootstrapMatch {
  /** The bootstrap entry that matched: a label sequence ("com", "co.uk") or a CIDR. */
  entry: string;
  /** Base URLs in the order to try them (see preferredBaseUrls). */
  urls: string[];
}

export interface BootstrapIndex {
  readonly kind: BootstrapKind;
  readonly publication: string | undefined;
  match(query: RdapQuery): BootstrapMatch | undefined;
}

/**
 * Checks a parsed bootstrap file's shape (RFC 9224 §4) and indexes it. A file
 * that is not a bootstrap registry is an operational failure of its source
 * (bad_response), never a reason to conclude a TLD has no RDAP service.
 */
export function indexBootstrap(kind: BootstrapKind, data: unknown): BootstrapIndex {
  const services = readServices(kind, data);
  const publication =
    typeof (data as { publication?: unknown }).publication === 'string'
      ? (data as BootstrapFile).publication
      : undefined;
  return kind === 'dns' ? dnsIndex(services, publication) : ipIndex(kind, services, publication);
}

function readServices(kind: BootstrapKind, data: unknown): [string[], string[]][] {
  const services = (data as { services?: unknown } | null)?.services;
  if (typeof data !== 'object' || data === null || !Array.isArray(services)) {
    throw new ProviderError(
      'bad_response',
      `${kind}.json is not an RDAP bootstrap registry (no services array)`,
    );
  }
  const out: [string[], string[]][] = [];
  for (const service of services) {
    if (!Array.isArray(service) || service.length < 2) continue;
    const [entries, urls] = service as unknown[];
    if (!Array.isArray(entries) || !Array.isArray(urls)) continue;
    const e = entries.filter((x): x is string => typeof x === 'string');
    const u = urls.filter((x): x is string => typeof x === 'string' && /^https?:\/\//i.test(x));
    if (e.length > 0 && u.length > 0) out.push([e, u]);
  }
  if (out.length === 0) throw new ProviderError('bad_response', `${kind}.json lists no RDAP services`);
  return out;
}

/**
 * dns.json entries are label sequences ("com", "xn--p1acf", possibly
 * "co.uk"); RFC 9224 §4 asks for the longest match on whole labels, so
 * "a.co.uk" prefers "co.uk" over "uk" and "example.com" never matches "le.com".
 */
function dnsIndex(services: [string[], string[]][], publication: string | undefined): BootstrapIndex {
  const byEntry = new Map<string, string[]>();
  for (const [entries, urls] of services) {
    for (const entry of entries) {
      const key = entry.toLowerCase().replace(/\.$/, '');
      if (key !== '' && !byEntry.has(key)) byEntry.set(key, urls);
    }
  }
  return {
    kind: 'dns',
    publication,
    match(query) {
      if (query.kind !== 'domain') return undefined;
      const labels = query.name.split('.');
      // Longest suffix first: the whole name, then drop one leading label at a time.
      for (let i = 0; i < labels.length; i++) {
        const suffix = labels.slice(i).join('.');
        const urls = byEntry.get(suffix);
        if (urls) return { entry: suffix, urls: preferredBaseUrls(urls) };
      }
      return undefined;
    },
  };
}

/** ipv4.json / ipv6.json entries are CIDR prefixes; the longest prefix containing the address wins (RFC 9224 §5.1, §5.2). */
function ipIndex(
  kind: 'ipv4' | 'ipv6',
  services: [string[], string[]][],
  publication: string | undefined,
): BootstrapIndex {
  const prefixes: { range: ipaddr.IPv4 | ipaddr.IPv6; bits: number; entry: string; urls: string[] }[] = [];
  for (const [entries, urls] of services) {
    for (const entry of entries) {
      if (!ipaddr.isValidCIDR(entry)) continue;
      const [range, bits] = ipaddr.parseCIDR(entry);
      if (range.kind() !== kind) continue;
      prefixes.push({ range, bits, entry, urls });
    }
  }
  return {
    kind,
    publication,
    match(query) {
      if (query.kind !== 'ip' || `ipv${query.version}` !== kind) return undefined;
      const address = ipaddr.parse(query.address);
      let best: (typeof prefixes)[number] | undefined;
      for (const p of prefixes) {
        if ((best === undefined || p.bits > best.bits) && address.match(p.range, p.bits)) best = p;
      }
      return best ? { entry: best.entry, urls: preferredBaseUrls(best.urls) } : undefined;
    },
  };
}

/**
 * RFC 9224 §3: when a service lists both https and http base URLs the client
 * should use https. Plain http is kept only for a service that offers nothing
 * else, so such a registry can still be reached.
 */
export function preferredBaseUrls(urls: readonly string[]): string[] {
  const https = urls.filter((u) => /^https:\/\//i.test(u));
  return https.length > 0 ? https : urls.filter((u) => /^http:\/\//i.test(u));
}

/**
 * `{base}domain/{name}`: RFC 9224 base URLs end in "/", but some entries (and
 * operators' mirrors) omit it, so exactly one slash joins them either way,
 * and a path prefix such as "/rdap/" is kept.
 */
export function objectUrl(base: string, query: RdapQuery): string {
  return `${base.replace(/\/+$/, '')}/${queryPath(query)}`;
}

/** The bootstrap registry that covers a query. */
export function bootstrapKindFor(query: RdapQuery): BootstrapKind {
  if (query.kind === 'domain') return 'dns';
  return query.version === 4 ? 'ipv4' : 'ipv6';
}
