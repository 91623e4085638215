/**
 * The DNS client's shapes. A decoded answer is plain JSON (strings, numbers,
 * booleans, arrays) so the provider chain can cache it in memory or Redis
 * unchanged; binary rdata (keys, digests, signatures) is carried as hex or
 * base64 text in the form the zone-file presentation uses.
 *
 * Every `data` object is already the normalized per-type record the API
 * publishes (A/AAAA `{address}`, MX `{priority, exchange}`, ...); the
 * presentation-format string comes from `presentation(rr)`.
 */
import type { Provider } from '../types.js';

/**
 * Types a caller may ask for, the one list of them: the API's lists are its
 * leading entries (recordTypesThrough): GET /api/dns offers those through PTR,
 * a global measurement those through CAA; the rest are the checks' own.
 */
export const DNS_RECORD_TYPES = [
  'A',
  'AAAA',
  'CNAME',
  'MX',
  'TXT',
  'NS',
  'SOA',
  'CAA',
  'SRV',
  'PTR',
  'DS',
  'DNSKEY',
  'TLSA',
  'SVCB',
  'HTTPS',
] as const;

export type DnsRecordType = (typeof DNS_RECORD_TYPES)[number];

export function isDnsRecordType(value: string): value is DnsRecordType {
  return (DNS_RECORD_TYPES as readonly string[]).includes(value);
}

/** The leading entries of a tuple, through the first that is `Last`. */
type Through<T extends readonly unknown[], Last> = T extends readonly [infer Head, ...infer Rest]
  ? Head extends Last
    ? [Head]
    : [Head, ...Through<Rest, Last>]
  : [];

/** DNS_RECORD_TYPES from the first through `last`, typed as exactly those. */
export function recordTypesThrough<L extends DnsRecordType>(
  last: L,
): Readonly<Through<typeof DNS_RECORD_TYPES, L>> {
  return DNS_RECORD_TYPES.slice(0, DNS_RECORD_TYPES.indexOf(last) + 1) as unknown as Through<
    typeof DNS_RECORD_TYPES,
    L
  >;
}

/** One SvcParam of an SVCB/HTTPS record (RFC 9460 §2.1), value in presentation form. */
export interface SvcParam {
  /** Registered name (`alpn`, `port`, `ipv4hint`, ...) or `keyNNNNN`. */
  key: string;
  /** Presentation value; empty for value-less keys such as `no-default-alpn`. */
  value: string;
}

export interface SvcbData {
  priority: number;
  /** "." means the owner name itself (service mode) or alias to the root. */
  target: string;
  params: SvcParam[];
}

/**
 * Normalized rdata per record type. Names carry no trailing dot and are lower
 * case; the root name is ".". Hex is upper case, as in zone files.
 */
export interface DnsRRDataMap {
  A: { address: string };
  AAAA: { address: string };
  CNAME: { target: string };
  DNAME: { target: string };
  MX: { priority: number; exchange: string };
  /** `text` is the character-strings joined with nothing between them (RFC 7208 §3.3); `strings` as sent. */
  TXT: { text: string; strings: string[] };
  NS: { host: string };
  SOA: {
    mname: string;
    rname: string;
    serial: number;
    refresh: number;
    retry: number;
    expire: number;
    minimum: number;
  };
  /** `critical` is the issuer-critical flag (bit 0, value 128; RFC 8659 §4.1). */
  CAA: { flags: number; tag: string; value: string; critical: boolean };
  SRV: { priority: number; weight: number; port: number; target: string };
  PTR: { host: string };
  DS: { keyTag: number; algorithm: number; digestType: number; digest: string };
  /** `publicKey` base64; `keyTag` computed per RFC 4034 Appendix B. */
  DNSKEY: { flags: number; protocol: number; algorithm: number; publicKey: string; keyTag: number };
  RRSIG: {
    typeCovered: string;
    algorithm: number;
    labels: number;
    originalTtl: number;
    /** Seconds since the epoch. */
    expiration: number;
    inception: number;
    keyTag: number;
    signerName: string;
    /** base64 */
    signature: string;
  };
  NSEC: { nextDomain: string; types: string[] };
  /** `salt` hex ("" for none), `nextHashedOwner` base32hex (RFC 5155 §3.3). */
  NSEC3: {
    algorithm: number;
    flags: number;
    iterations: number;
    salt: string;
    nextHashedOwner: string;
    types: string[];
  };
  TLSA: { usage: number; selector: number; matchingType: number; data: string };
  SVCB: SvcbData;
  HTTPS: SvcbData;
}

export type DnsKnownRRType = keyof DnsRRDataMap;

/**
 * A type this client does not model, named as RFC 3597 §5 does (`TYPE13`),
 * its rdata kept as hex so nothing is lost.
 */
export type DnsGenericRRType = `TYPE${number}`;

export type DnsRRType = DnsKnownRRType | DnsGenericRRType;

interface RRBase<T extends DnsRRType, D> {
  /** Owner name: lower case, no trailing dot ("." for the root). */
  name: string;
  type: T;
  ttl: number;
  data: D;
}

/** A resource record; `type` discriminates `data`. */
export type DnsRR =
  | { [K in DnsKnownRRType]: RRBase<K, DnsRRDataMap[K]> }[DnsKnownRRType]
  | RRBase<DnsGenericRRType, { rdata: string }>;

/** The RR of one known type, for helpers that narrow (`DnsRROf<'MX'>`). */
export type DnsRROf<T extends DnsKnownRRType> = Extract<DnsRR, { type: T }>;

export interface DnsFlags {
  aa: boolean;
  tc: boolean;
  rd: boolean;
  ra: boolean;
  /** Authenticated data: the resolver validated the answer with DNSSEC. */
  ad: boolean;
  cd: boolean;
}

/** An Extended DNS Error (RFC 8914), from EDNS option 15. */
export interface DnsEde {
  code: number;
  text?: string;
}

/**
 * One decoded DNS response. `rcode` is the full response code (header bits
 * merged with the OPT record's extended bits, RFC 6891 §6.1.3) by name:
 * NOERROR, NXDOMAIN, SERVFAIL, REFUSED, BADVERS, ..., or RCODE<n>.
 * Only NOERROR (including NODATA) and NXDOMAIN ever reach a caller: every
 * other rcode is thrown as an operational failure.
 */
export interface DnsAnswer {
  rcode: string;
  flags: DnsFlags;
  answers: DnsRR[];
  authorities: DnsRR[];
  ede: DnsEde[];
}

export type DnsTransport = 'doh' | 'udp' | 'tcp' | 'dot';

/** A resolver reachable over one transport; one per entry of DNS_RESOLVERS. */
export interface DnsTransportProvider extends Provider {
  readonly transport: DnsTransport;
  /**
   * Asks one question. Resolves with NOERROR/NXDOMAIN answers; throws a
   * ProviderError for every operational failure (timeout, network, TLS,
   * HTTP status, malformed reply, SERVFAIL/REFUSED/FORMERR/NOTIMP, ...).
   * `name` must already be normalized (see normalizeDnsName).
   */
  query(name: string, type: DnsRecordType, signal: AbortSignal): Promise<DnsAnswer>;
  /** Closes pooled connections; later queries open new ones. */
  close(): Promise<void>;
}
