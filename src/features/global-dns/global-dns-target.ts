/**
 * What POST /api/global-dns accepts as `target`: a domain name, normalized as
 * /api/dns does (IDN → A-labels, lower case, trailing dot dropped), with `_`
 * labels where owner names carry them. Addresses are refused with a reason:
 * reverse (PTR) lookups are not offered by the global measurement.
 */
import { badInput } from '../../errors.js';
import { isIP } from '../../net/address.js';
import { normalizeDomain } from '../../net/names.js';
import type { GlobalDnsType } from '../../providers/global-dns/index.js';

// TXT owner names (`_dmarc`, DKIM `s._domainkey`) and CNAME ones (DKIM selectors) carry `_`.
const UNDERSCORE_TYPES: ReadonlySet<GlobalDnsType> = new Set(['TXT', 'CNAME']);

export function parseGlobalDnsTarget(target: string, type: GlobalDnsType): string {
  const literal = target.startsWith('[') && target.endsWith(']') ? target.slice(1, -1) : target;
  if (isIP(literal) !== 0) {
    throw badInput('target', 'must be a domain name (reverse lookups of addresses are not offered here)');
  }
  return normalizeDomain(target, { param: 'target', allowUnderscore: UNDERSCORE_TYPES.has(type) });
}
