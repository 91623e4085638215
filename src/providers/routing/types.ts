/**
 * What the routing adapters return: who originates the prefix covering an
 * address (for /api/inspect's `network` part), and the BGP routing status of
 * an address (its `routing` part). Plain JSON, so the chain can cache it.
 */
import type { Provider } from '../types.js';

/** One origin AS of a prefix. */
export interface OriginAs {
  asn: number;
  /** The AS holder's name as the provider knows it; null when it names none. */
  holder: string | null;
}

/**
 * The origin of the most specific announced prefix covering an address. A
 * valid "not announced" answer has `announced: false`, `prefix: null` and no
 * origins: it is an answer, not a failure.
 */
export interface AddressOrigin {
  announced: boolean;
  /** CIDR of the covering announced prefix. */
  prefix: string | null;
  /** Origin ASes; more than one for a multi-origin (MOAS) prefix. */
  origins: OriginAs[];
}

export interface OriginProvider extends Provider {
  /** `ip` is canonical text (dotted quad or RFC 5952); throws ProviderError on an operational failure. */
  origin(ip: string, signal: AbortSignal): Promise<AddressOrigin>;
}

/** How many RIS peers see a route, per address family of their feed. */
export interface Visibility {
  ris_peers_seeing: number;
  total_ris_peers: number;
}

/** When and how a resource was first or last seen in BGP. */
export interface Sighting {
  /** ISO 8601, UTC. */
  time: string;
  prefix: string | null;
  origin: number | null;
}

export interface PrefixOrigin {
  prefix: string;
  origin: number | null;
}

/** BGP routing status of the prefix covering an address (RIPEstat routing-status). */
export interface RoutingStatus {
  /** The covering prefix, or null when the address is not routed. */
  prefix: string | null;
  /** Origin ASNs of that prefix now. */
  origins: number[];
  visibility: { v4: Visibility | null; v6: Visibility | null };
  /** Absent (null) when the resource was never seen in BGP. */
  first_seen: Sighting | null;
  last_seen: Sighting | null;
  /** Covering (less specific) and covered (more specific) announcements. */
  less_specifics: PrefixOrigin[];
  more_specifics: PrefixOrigin[];
  /** ISO 8601 time of the RIS data the answer is based on. */
  query_time: string | null;
}

export interface RoutingStatusProvider extends Provider {
  routingStatus(ip: string, signal: AbortSignal): Promise<RoutingStatus>;
}
