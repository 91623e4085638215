/**
 * The organizational (registrable) domain of a name, from the Public Suffix
 * List as the `tldts` package ships it (kept current by its releases). One
 * answer for every feature that asks "same organization?": DMARC report
 * destinations, the BIMI record fallback and HSTS preload eligibility.
 *
 * The private section of the list counts (github.io, s3.amazonaws.com, ...):
 * a user's `foo.github.io` is its own organization, as the DMARC PSL rules
 * and hstspreload.org (Go's publicsuffix, which includes it) both treat it.
 */
import { getDomain } from 'tldts';

const OPTIONS = { allowPrivateDomains: true, detectIp: true };

/**
 * The registrable domain of `name` (lower case, no trailing dot), or null when
 * the name is itself a public suffix, an IP literal or has no known suffix.
 */
export function organizationalDomain(name: string): string | null {
  const host = name.toLowerCase().replace(/\.$/, '');
  return getDomain(host, OPTIONS);
}

/** Both names belong to the same organization (same registrable domain), or are the same name. */
export function sameOrganization(a: string, b: string): boolean {
  const x = a.toLowerCase().replace(/\.$/, '');
  const y = b.toLowerCase().replace(/\.$/, '');
  if (x === y) return true;
  const org = organizationalDomain(x);
  return org !== null && org === organizationalDomain(y);
}
