/**
 * Does the certificate name the host we connected to? Pure.
 *
 * The rules browsers apply, which are stricter than Node's checkServerIdentity:
 *  - Only subjectAltName counts. The subject CN is ignored even when there is
 *    no SAN (RFC 6125 §6.4.4 allows the CN only as a fallback clients may
 *    drop; CA/B BRs §7.1.4.3 require every name in the SAN; Chrome since 58
 *    and Firefox since 48 ignore the CN).
 *  - A name matches case-insensitively (RFC 6125 §6.4.1). A wildcard is the
 *    whole left-most label only, matches exactly one label, and never a public
 *    suffix boundary's worth of labels (`*.example.com` matches `a.example.com`,
 *    not `example.com` nor `a.b.example.com`; RFC 6125 §6.4.3, BRs §1.6.1
 *    "Wildcard Certificate").
 *  - An IP address target matches only an iPAddress SAN entry (RFC 6125 §1.7.2,
 *    RFC 5280 §4.2.1.6), never a DNS name or a wildcard.
 */
import { isIP } from '../../net/address.js';

export interface CertificateNames {
  dnsNames: readonly string[];
  ipAddresses: readonly string[];
}

/** `host` is a normalized name (A-labels, lower case, no trailing dot) or a canonical IP literal. */
export function hostnameMatches(host: string, names: CertificateNames): boolean {
  if (isIP(host) !== 0) {
    const wanted = canonicalIp(host);
    return names.ipAddresses.some((ip) => canonicalIp(ip) === wanted);
  }
  const target = host.toLowerCase().replace(/\.$/, '');
  return names.dnsNames.some((pattern) => dnsNameMatches(target, pattern));
}

function dnsNameMatches(host: string, pattern: string): boolean {
  const p = pattern.toLowerCase().replace(/\.$/, '');
  if (!p.startsWith('*.')) return p === host;
  const suffix = p.slice(1); // ".example.com"
  if (suffix.includes('*') || suffix.split('.').length < 3) return false; // "*.com" never matches
  if (!host.endsWith(suffix)) return false;
  const label = host.slice(0, -suffix.length);
  return label.length > 0 && !label.includes('.');
}

/** One spelling per address so "::1" and "0:0:0:0:0:0:0:1" compare equal. */
function canonicalIp(ip: string): string {
  const family = isIP(ip);
  if (family === 4) return ip;
  if (family !== 6) return ip.toLowerCase();
  return new URL(`http://[${ip}]/`).hostname;
}
