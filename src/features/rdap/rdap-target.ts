/**
 * What GET /api/rdap accepts, as a pure function: `type=domain` takes a
 * domain name (IDN → A-labels, trailing dot dropped, lower-cased: the DNS
 * endpoint's rules), `type=ip` a public IPv4 or IPv6 address. Private and
 * special-use addresses are refused with 400: registries hold nothing about
 * them, and the answer would only ever be IANA's "reserved" block.
 */
import ipaddr from 'ipaddr.js';
import { AppError, badInput } from '../../errors.js';
import { classifyAddress, isIP, parseHostLiteral } from '../../net/address.js';
import { normalizeDomain } from '../../net/names.js';
import type { RdapQuery } from '../../providers/rdap/types.js';

export function parseRdapTarget(target: string, type: 'domain' | 'ip'): RdapQuery {
  if (type === 'domain') {
    if (isIP(target.trim().replace(/^\[(.*)\]$/, '$1')) !== 0) {
      throw badInput('target', 'must be a domain name for type=domain (for an IP address use type=ip)');
    }
    return { kind: 'domain', name: normalizeDomain(target.trim(), { param: 'target' }) };
  }

  // Spellings a resolver library accepts (brackets, 2130706433, 0x7f.1) are read the same way everywhere in the service.
  const literal = parseHostLiteral(target, 'target');
  if (literal === undefined) throw badInput('target', 'must be an IPv4 or IPv6 address for type=ip');
  // An IPv4-mapped IPv6 address (::ffff:a.b.c.d) is that IPv4 address: RIRs register it under IPv4.
  const address = ipaddr.process(literal).toString();
  const cls = classifyAddress(address);
  if (!cls.public) {
    throw new AppError(400, 'bad_request', `target ${address} is not a public address (${cls.range})`);
  }
  return { kind: 'ip', address, version: address.includes(':') ? 6 : 4 };
}
