/**
 * What GET /api/dns accepts as `target`, as pure functions: a domain name
 * (net/names.ts: IDN → A-labels, trailing dot dropped, lower-cased, LDH with
 * `_` where owner names use it) or, for PTR, a public IP turned into its
 * reverse name.
 */
import ipaddr from 'ipaddr.js';
import { LRUCache } from 'lru-cache';
import { AppError, badInput } from '../../errors.js';
import { classifyAddress, isIP } from '../../net/address.js';
import { InvalidNameError, normalizeDomain, reverseName } from '../../net/names.js';
import { recordTypesThrough } from '../../providers/dns/types.js';

/** The types GET /api/dns accepts: the client's list through PTR (DS, DNSKEY, TLSA, SVCB and HTTPS are the checks' own). */
export const DNS_API_TYPES = recordTypesThrough('PTR');
export type DnsApiType = (typeof DNS_API_TYPES)[number];

// Owner names of SRV (RFC 2782 `_service._proto`), TXT (`_dmarc`, `_mta-sts`,
// DKIM `s._domainkey`) and CNAME (DKIM selectors are often CNAMEs) carry `_`.
const UNDERSCORE_TYPES: ReadonlySet<DnsApiType> = new Set(['SRV', 'TXT', 'CNAME']);

export interface DnsQuestion {
  /** The name sent on the wire. */
  name: string;
  type: DnsApiType;
  /** For PTR: the address as given, normalized. */
  address?: string;
}

/**
 * Parsed questions by (type, target) as given: the same few names are asked again and
 * again, and parsing one (IDNA, label rules, address checks) costs more than the cache
 * hit that answers it. Only accepted input is kept; a refusal is parsed again each time.
 */
const parsed = new LRUCache<string, DnsQuestion>({ max: 10_000 });

export function parseDnsQuestion(target: string, type: DnsApiType): DnsQuestion {
  const key = `${type} ${target}`;
  let question = parsed.get(key);
  if (question === undefined) {
    question = Object.freeze(parseUncached(target, type));
    parsed.set(key, question);
  }
  return question;
}

function parseUncached(target: string, type: DnsApiType): DnsQuestion {
  if (type === 'PTR') {
    const literal = target.startsWith('[') && target.endsWith(']') ? target.slice(1, -1) : target;
    // node:net's isIP() accepts a zone id (fe80::1%eth0), which names an interface of the asking
    // host and has no reverse name: refused here, not left for classifyAddress to throw on (a 500).
    if (literal.includes('%')) throw badInput('target', 'must not carry an IPv6 zone id (%...)');
    if (isIP(literal) === 0) throw badInput('target', 'must be an IPv4 or IPv6 address for type=PTR');
    const address = ipaddr.process(literal).toString();
    const cls = classifyAddress(address);
    if (!cls.public) {
      throw new AppError(400, 'bad_request', `target ${address} is not a public address (${cls.range})`);
    }
    return { name: reverseName(address), type, address };
  }
  if (isIP(target) !== 0) throw badInput('target', 'must be a domain name (for an IP address use type=PTR)');
  try {
    return { name: normalizeDomain(target, { allowUnderscore: UNDERSCORE_TYPES.has(type) }), type };
  } catch (err) {
    // Only here does the hint make sense: the other endpoints take no record type.
    if (err instanceof InvalidNameError && err.reason === 'underscore') {
      throw new InvalidNameError(
        'underscore',
        err.param,
        `${err.detail} (allowed for SRV, TXT and CNAME lookups)`,
      );
    }
    throw err;
  }
}
