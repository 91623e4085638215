/**
 * The engine's shapes: what a resolution returns (the records as dns-packet
 * decodes them, RRSIGs included, for the validator), the zone cuts it walked,
 * every query it sent and what it found on the way.
 *
 * Names are lower case without a trailing dot, the root ".", except inside
 * records, which keep the spelling the server sent (the validator canonicalizes
 * them itself, RFC 4034 §6.2).
 */
import type { DnsRecordType } from '../providers/dns/types.js';
import type { MessageRecord } from '../providers/dns/wire.js';

/** A record as dns-packet decodes it (`{ name, type, class, ttl, data }`); binary rdata as Buffers. */
export type EngineRecord = MessageRecord;

/** The types the engine asks for: those of the DNS client (DnsRecordType). */
export type EngineQueryType = DnsRecordType;

export interface NameServer {
  /** The NS target; null for a root hint, which is an address only (DNS_ROOT_HINTS). */
  name: string | null;
  /** Its addresses as known when the cut was taken (glue, cache, or resolved). */
  addresses: string[];
}

/** A zone cut on the way down: the zone and the servers it was asked through. */
export interface ZoneCut {
  zone: string;
  nameservers: NameServer[];
  /** hints: DNS_ROOT_HINTS; referral: a parent's referral in this request; cache: the infrastructure cache. */
  from: 'hints' | 'referral' | 'cache';
}

/** One query sent (or one failed attempt to send one). */
export interface QueryLog {
  /** The server's address; always port 53. */
  server: string;
  /** The zone the server was asked as (the cut it serves). */
  zone: string;
  qname: string;
  qtype: string;
  transport: 'udp' | 'tcp';
  /** The response's rcode (NOERROR, NXDOMAIN, REFUSED, ...); null when none came. */
  rcode: string | null;
  /** Why no usable response came. */
  error?: 'timeout' | 'network' | 'bad_response';
  /** TC=1: the answer did not fit, and is asked again over TCP. */
  truncated?: boolean;
  /** Milliseconds from sending to the response (or to giving up). */
  ms: number;
}

/**
 * What the engine noticed. `error` findings end the resolution (or the name-server lookup they
 * arose in); `warning` findings are servers or data that were passed over.
 */
export type EngineFindingCode =
  /** The request's query budget is spent (queryBudget, default 150). */
  | 'budget_exhausted'
  /** Name-server lookups nested deeper than the depth limit. */
  | 'depth_limit'
  /** A zone's servers can only be found through a lookup already under way (ns.b for a, ns.a for b). */
  | 'delegation_loop'
  | 'cname_loop'
  | 'cname_chain_too_long'
  /** Name-server names that do not exist, past the limit (NXNS, CVE-2020-12662). */
  | 'nxns_referral'
  /** One zone cut named more name servers without addresses than are looked up for it. */
  | 'ns_lookup_limit'
  | 'referral_limit'
  /** No server of a zone gave a usable answer (each one's reason is in the other findings). */
  | 'no_usable_servers'
  /** askZone: the name is not a delegated zone (its parent answered NXDOMAIN, NODATA or a CNAME). */
  | 'not_a_zone'
  /** A server answered as if it did not serve the zone: REFUSED, SERVFAIL, no AA, an upward referral. */
  | 'lame_server'
  /** A server of the zone did not answer in time, or could not be reached. */
  | 'server_unresponsive'
  /** A server answered with a malformed message, or one that does not answer the question. */
  | 'bad_response'
  /** A name server's address is private or special-use: refused, never contacted (outbound safety). */
  | 'address_refused'
  /** Glue for a name outside the referring server's zone: ignored (RFC 2181 §5.4.1; a poisoning attempt). */
  | 'glue_out_of_bailiwick';

export interface EngineFinding {
  code: EngineFindingCode;
  severity: 'error' | 'warning';
  /** The zone concerned, when there is one. */
  zone?: string;
  /** The server's address, when one is concerned. */
  server?: string;
  /** The name concerned: an NS target, a CNAME owner, the refused glue's owner. */
  name?: string;
  detail: string;
}

/** One response that ended a step: the zone's own answer for one name of the chain. */
export interface ZoneResponse {
  zone: string;
  /** The server that answered (from: 'server') or had answered (from: 'cache'). */
  server: string;
  qname: string;
  qtype: string;
  rcode: string;
  aa: boolean;
  /** The sections, without records outside the zone (a server speaks only for its zone). */
  answer: EngineRecord[];
  authority: EngineRecord[];
  additional: EngineRecord[];
  from: 'server' | 'cache';
}

export type ResolveStatus = 'answer' | 'nodata' | 'nxdomain' | 'failed';

export interface ResolveResult {
  qname: string;
  qtype: string;
  status: ResolveStatus;
  /** NOERROR, NXDOMAIN, or SERVFAIL when the resolution failed (the findings say why). */
  rcode: string;
  /** The final response had AA set. */
  aa: boolean;
  /** The CNAME chain (each with its RRSIGs) and the records asked for (with theirs). */
  answer: EngineRecord[];
  /** The final response's authority section (SOA, NSEC/NSEC3 and their RRSIGs for a negative answer). */
  authority: EngineRecord[];
  additional: EngineRecord[];
  /** Each zone's response along the CNAME chain, in order (one when there is no CNAME). */
  responses: ZoneResponse[];
  /**
   * The zone cuts from the root down, for the name asked and then each CNAME target: those
   * known before the first query (the hints, then each cut the cache holds, top down; a cut
   * whose entry expired before a deeper one's is missing) and each referral followed.
   */
  path: ZoneCut[];
  /** Every query this resolution sent, name-server lookups included. */
  queries: QueryLog[];
  findings: EngineFinding[];
}

export interface ZoneAnswer {
  zone: string;
  qname: string;
  qtype: string;
  /**
   * referral: the zone delegates `qname` further down; cname: `qname` is an alias in the zone.
   * The response holds either.
   */
  status: ResolveStatus | 'referral' | 'cname';
  /** The zone's response; undefined when it failed. */
  response: ZoneResponse | undefined;
  queries: QueryLog[];
  findings: EngineFinding[];
}

export interface ResolveOptions {
  signal?: AbortSignal;
}
