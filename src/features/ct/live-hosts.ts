/**
 * What live DNS says about CT-discovered names, and whether it can be
 * believed: a domain with a DNS wildcard (`*.D`, RFC 4592) answers for every
 * name below it, so an answer alone does not prove a host exists. Pure.
 */
import type { DnsAnswer } from '../../providers/dns/types.js';

/**
 * - active: an A/AAAA or CNAME answer of its own;
 * - wildcard: answers, but only what D's DNS wildcard gives any name;
 * - historical: seen in CT, no A/AAAA/CNAME now (NXDOMAIN or no data);
 * - lookup_failed: resolved, but a lookup failed at every resolver and none answered;
 * - unchecked: beyond the names resolved per request.
 */
export type HostStatus = 'active' | 'wildcard' | 'historical' | 'lookup_failed' | 'unchecked';

/** What the A, AAAA and CNAME lookups of one name said. */
export interface HostDns {
  /** A and AAAA addresses (after any CNAME chain), sorted, distinct. */
  addresses: string[];
  /** The name's own CNAME target, if it has one. */
  cname: string | null;
  /** At least one lookup failed at every resolver. */
  failed: boolean;
}

/** D's DNS wildcard as seen through random names below D. */
export interface DnsWildcard {
  /** true: random names answered; false: they did not; null: the probes failed, so unknown. */
  detected: boolean | null;
  addresses: string[];
  cnames: string[];
}

/** Facts from one name's answers; `undefined` stands for a lookup that failed. */
export function hostDnsFrom(name: string, answers: readonly (DnsAnswer | undefined)[]): HostDns {
  const addresses = new Set<string>();
  let cname: string | null = null;
  let failed = false;
  for (const answer of answers) {
    if (answer === undefined) {
      failed = true;
      continue;
    }
    for (const rr of answer.answers) {
      if (rr.type === 'A' || rr.type === 'AAAA') addresses.add(rr.data.address);
      else if (rr.type === 'CNAME' && rr.name === name && cname === null) cname = rr.data.target;
    }
  }
  return { addresses: [...addresses].sort(), cname, failed };
}

/** The wildcard's fingerprint: everything any random name answered with. */
export function wildcardFrom(probes: readonly HostDns[]): DnsWildcard {
  const addresses = new Set<string>();
  const cnames = new Set<string>();
  for (const probe of probes) {
    for (const address of probe.addresses) addresses.add(address);
    if (probe.cname !== null) cnames.add(probe.cname);
  }
  const answered = addresses.size > 0 || cnames.size > 0;
  // A failed probe cannot tell "no wildcard" from "could not ask".
  const detected = answered ? true : probes.some((p) => p.failed) ? null : false;
  return { detected, addresses: [...addresses].sort(), cnames: [...cnames].sort() };
}

/**
 * A checked host's status. A name with its own CNAME is the wildcard's only
 * if the wildcard gives that same CNAME; a name without one, only if every
 * address is one the wildcard gives. The domain itself is never wildcard
 * synthesized (`*.D` matches only names below D, RFC 4592 §2.2).
 */
export function classifyHost(name: string, domain: string, dns: HostDns, wildcard: DnsWildcard): HostStatus {
  const answered = dns.addresses.length > 0 || dns.cname !== null;
  if (!answered) return dns.failed ? 'lookup_failed' : 'historical';
  if (wildcard.detected === true && name !== domain) {
    const synthesized =
      dns.cname !== null
        ? wildcard.cnames.includes(dns.cname)
        : dns.addresses.every((a) => wildcard.addresses.includes(a));
    if (synthesized) return 'wildcard';
  }
  return 'active';
}
