/**
 * RDAP wire shapes (RFC 9083 JSON responses, RFC 9224 bootstrap files) as
 * the registries send them, and what an RDAP adapter answers with.
 *
 * Every field is optional and loosely typed on purpose: registries differ
 * (Verisign, ARIN, RIPE and the ccTLDs all take liberties with RFC 9083), so
 * the normalizer in features/rdap checks each value before using it.
 */
import { ProviderError } from '../../errors.js';

/** RFC 9083 §4.2 links. `href` is the target; `value` is the context URI. */
export interface RdapLink {
  value?: string;
  rel?: string;
  href?: string;
  type?: string;
  hreflang?: string | string[];
  title?: string;
  media?: string;
}

/** RFC 9083 §4.3 notices and remarks. */
export interface RdapNotice {
  title?: string;
  type?: string;
  description?: unknown;
  links?: RdapLink[];
}

/** RFC 9083 §4.5 events. */
export interface RdapEvent {
  eventAction?: string;
  eventActor?: string;
  eventDate?: string;
  links?: RdapLink[];
}

/** RFC 9083 §4.8 public identifiers ("IANA Registrar ID", ...). */
export interface RdapPublicId {
  type?: string;
  identifier?: string;
}

/** RFC 9083 §5.1 entity: a contact in jCard (RFC 7095) with roles; entities nest. */
export interface RdapEntity {
  objectClassName?: string;
  handle?: string;
  vcardArray?: unknown;
  roles?: string[];
  publicIds?: RdapPublicId[];
  entities?: RdapEntity[];
  remarks?: RdapNotice[];
  links?: RdapLink[];
  events?: RdapEvent[];
  status?: string[];
}

/** RFC 9083 §5.2 nameserver. */
export interface RdapNameserver {
  objectClassName?: string;
  handle?: string;
  ldhName?: string;
  unicodeName?: string;
  ipAddresses?: { v4?: string[]; v6?: string[] };
}

/** RFC 9083 §5.3 secureDNS. */
export interface RdapSecureDns {
  zoneSigned?: boolean;
  delegationSigned?: boolean;
  maxSigLife?: number;
  dsData?: { keyTag?: number; algorithm?: number; digest?: string; digestType?: number }[];
  keyData?: { flags?: number; protocol?: number; publicKey?: string; algorithm?: number }[];
}

/**
 * Any RFC 9083 object class ("domain", "ip network", ...), with the members
 * of the two this service answers for, plus the cidr0 extension
 * (https://bitbucket.org/arin-specs/cidr0) most RIRs add to IP networks.
 */
export interface RdapObject {
  objectClassName?: string;
  handle?: string;
  ldhName?: string;
  unicodeName?: string;
  links?: RdapLink[];
  status?: string[];
  entities?: RdapEntity[];
  events?: RdapEvent[];
  notices?: RdapNotice[];
  remarks?: RdapNotice[];
  nameservers?: RdapNameserver[];
  secureDNS?: RdapSecureDns;
  port43?: string;
  // ip network (RFC 9083 §5.4)
  startAddress?: string;
  endAddress?: string;
  ipVersion?: string;
  name?: string;
  type?: string;
  country?: string;
  parentHandle?: string;
  cidr0_cidrs?: { v4prefix?: string; v6prefix?: string; length?: number }[];
  [member: string]: unknown;
}

/** RFC 9224 §4: `services` is an array of [entries, base URLs] pairs. */
export interface BootstrapFile {
  version?: string;
  publication?: string;
  description?: string;
  services: [string[], string[]][];
}

/** The three bootstrap registries this service uses (RFC 9224 §4, §5.1, §5.2). */
export type BootstrapKind = 'dns' | 'ipv4' | 'ipv6';

/** What is being looked up, normalized: an A-label domain name or a canonical IP address. */
export type RdapQuery = { kind: 'domain'; name: string } | { kind: 'ip'; address: string; version: 4 | 6 };

/** The RDAP path segment for a query (RFC 9082 §3.1.1, §3.1.3). */
export function queryPath(query: RdapQuery): string {
  return query.kind === 'domain' ? `domain/${query.name}` : `ip/${query.address}`;
}

/**
 * An adapter's answer. "not_registered" is a definitive RDAP 404 from the
 * authoritative server; "no_service" means the bootstrap registry lists no
 * RDAP server for the name's TLD (or the address's block). Both are valid
 * negative answers: values, not failures, so the chain stops at them.
 */
export type RdapAnswer =
  | { outcome: 'found'; url: string; object: RdapObject }
  | { outcome: 'not_registered'; url: string }
  | { outcome: 'no_service'; scope: string };

/**
 * Checks that an answer is the object class the query asks for (RFC 9083
 * §5.3 "domain", §5.4 "ip network"). Anything else (an entity, an error
 * object sent with 200) is a broken answer from that source.
 */
export function assertObjectClass(query: RdapQuery, object: RdapObject, url: string): void {
  const expected = query.kind === 'domain' ? 'domain' : 'ip network';
  const got = object.objectClassName;
  if (typeof got === 'string' && got.toLowerCase() === expected) return;
  throw new ProviderError(
    'bad_response',
    `${new URL(url).host} answered objectClassName ${JSON.stringify(got ?? null)}, expected "${expected}"`,
  );
}
