/**
 * The `network` and `routing` parts of /api/inspect: who originates each
 * resolved address (RIPEstat, falling back to Team Cymru's DNS interface),
 * its reverse DNS, and the BGP routing status of the optional `ip`. Every
 * upstream goes through the provider chain, so answers carry attribution and
 * a failure is recorded, never shown as "nothing there".
 */
import { AppError, isOperational, type ProviderAttempt } from '../../errors.js';
import { reverseName } from '../../net/names.js';
import type { ProviderChain } from '../../providers/chain.js';
import type { DnsAnswer, DnsRecordType } from '../../providers/dns/types.js';
import type {
  OriginAs,
  OriginProvider,
  RoutingStatus,
  RoutingStatusProvider,
} from '../../providers/routing/types.js';

/** Origins change rarely; a quarter of an hour keeps repeat inspections cheap. */
export const ORIGIN_TTL_SECONDS = 900;
/** Visibility moves with every RIS dump (every 8 h), but first/last seen are read as "now". */
export const ROUTING_STATUS_TTL_SECONDS = 300;
/** A name with more addresses than this gets the first ones looked up, and `truncated`. */
export const MAX_NETWORK_ADDRESSES = 16;

export interface DnsLookup {
  resolve(name: string, type: DnsRecordType, opts?: { signal?: AbortSignal }): Promise<{ value: DnsAnswer }>;
}

export interface NetworkDeps {
  chain: Pick<ProviderChain, 'run'>;
  dns: DnsLookup;
  originProviders: readonly OriginProvider[];
  statusProviders: readonly RoutingStatusProvider[];
}

export interface ReverseDns {
  status: 'ok' | 'error';
  error?: string;
  /** PTR names; empty when the address has none (NXDOMAIN or no PTR). */
  names: string[];
}

export interface AddressNetwork {
  address: string;
  family: 4 | 6;
  reverse_dns: ReverseDns;
  /** Of the origin lookup. */
  status: 'ok' | 'error';
  error?: string;
  /** null when the lookup failed. */
  announced: boolean | null;
  prefix: string | null;
  /** The first origin AS (most prefixes have exactly one). */
  asn: number | null;
  holder: string | null;
  origins: OriginAs[];
  source: string | null;
  source_id: string | null;
  providers_tried: ProviderAttempt[];
}

export interface NetworkPart {
  status: 'ok' | 'error';
  error?: string;
  addresses: AddressNetwork[];
  /** More addresses resolved than were looked up. */
  truncated: boolean;
}

export interface RoutingPart extends Partial<RoutingStatus> {
  status: 'ok' | 'error';
  error?: string;
  ip: string;
  source: string | null;
  source_id: string | null;
  providers_tried: ProviderAttempt[];
}

/** A part and whether its failure was ours or an upstream's (then the whole answer is not cached). */
export interface PartResult<T> {
  part: T;
  transient: boolean;
}

export async function networkPart(
  deps: NetworkDeps,
  addresses: readonly { address: string; family: 4 | 6 }[],
): Promise<PartResult<NetworkPart>> {
  const looked = addresses.slice(0, MAX_NETWORK_ADDRESSES);
  const entries = await Promise.all(looked.map((a) => addressNetwork(deps, a)));
  const failed = entries.filter((e) => e.status === 'error' || e.reverse_dns.status === 'error').length;
  const part: NetworkPart = {
    status: failed === 0 ? 'ok' : 'error',
    addresses: entries,
    truncated: addresses.length > looked.length,
  };
  if (failed > 0) part.error = `lookups failed for ${failed} of ${entries.length} addresses`;
  return { part, transient: failed > 0 };
}

async function addressNetwork(
  deps: NetworkDeps,
  a: { address: string; family: 4 | 6 },
): Promise<AddressNetwork> {
  const [reverse, origin] = await Promise.all([reverseDns(deps.dns, a.address), originOf(deps, a.address)]);
  return { address: a.address, family: a.family, reverse_dns: reverse, ...origin };
}

async function reverseDns(dns: DnsLookup, address: string): Promise<ReverseDns> {
  try {
    const { value } = await dns.resolve(reverseName(address), 'PTR');
    // Every PTR in the answer: a classless (RFC 2317) delegation reaches them through a CNAME.
    const names = value.answers.flatMap((rr) => (rr.type === 'PTR' ? [rr.data.host] : []));
    return { status: 'ok', names: [...new Set(names)] };
  } catch (err) {
    if (!isOperational(err)) throw err;
    return { status: 'error', error: err.message, names: [] };
  }
}

type OriginFields = Omit<AddressNetwork, 'address' | 'family' | 'reverse_dns'>;

async function originOf(deps: NetworkDeps, address: string): Promise<OriginFields> {
  try {
    const result = await deps.chain.run({
      capability: 'routing',
      providers: deps.originProviders,
      call: (provider, signal) => provider.origin(address, signal),
      key: `origin:${address}`,
      ttl: () => ORIGIN_TTL_SECONDS,
    });
    const { value } = result;
    const first = value.origins[0];
    return {
      status: 'ok',
      announced: value.announced,
      prefix: value.prefix,
      asn: first?.asn ?? null,
      holder: first?.holder ?? null,
      origins: value.origins,
      source: result.source,
      source_id: result.source_id,
      providers_tried: result.providers_tried,
    };
  } catch (err) {
    if (!isOperational(err)) throw err;
    return {
      status: 'error',
      error: err.message,
      announced: null,
      prefix: null,
      asn: null,
      holder: null,
      origins: [],
      source: null,
      source_id: null,
      providers_tried: providersTried(err),
    };
  }
}

/** RIPEstat routing-status for `ip` (already checked public); looked up, never connected to. */
export async function routingPart(deps: NetworkDeps, ip: string): Promise<PartResult<RoutingPart>> {
  try {
    const result = await deps.chain.run({
      capability: 'routing',
      providers: deps.statusProviders,
      call: (provider, signal) => provider.routingStatus(ip, signal),
      key: `status:${ip}`,
      ttl: () => ROUTING_STATUS_TTL_SECONDS,
    });
    return {
      part: {
        status: 'ok',
        ip,
        ...result.value,
        source: result.source,
        source_id: result.source_id,
        providers_tried: result.providers_tried,
      },
      transient: false,
    };
  } catch (err) {
    if (!isOperational(err)) throw err;
    return {
      part: {
        status: 'error',
        error: err.message,
        ip,
        source: null,
        source_id: null,
        providers_tried: providersTried(err),
      },
      transient: true,
    };
  }
}

function providersTried(err: unknown): ProviderAttempt[] {
  return err instanceof AppError ? (err.providersTried ?? []) : [];
}
