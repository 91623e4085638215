/**
 * The connecting address, and the key the rate limiter counts it under.
 * Fastify's `trustProxy` (set from TRUST_PROXY in app.ts) decides whether
 * X-Forwarded-For is believed; this only normalizes what it yields.
 */
import { isIPv4 } from 'node:net';
import ipaddr from 'ipaddr.js';

/** Dual-stack sockets report IPv4 peers as ::ffff:a.b.c.d; everything downstream wants a.b.c.d. */
export function normalizeClientIp(ip: string): string {
  // The common case on the hot path: a plain dotted quad from the socket needs no parsing.
  if (isIPv4(ip)) return ip;
  if (!ipaddr.isValid(ip)) return ip;
  const addr = ipaddr.parse(ip);
  if (addr.kind() === 'ipv6' && (addr as ipaddr.IPv6).isIPv4MappedAddress()) {
    return (addr as ipaddr.IPv6).toIPv4Address().toString();
  }
  return addr.toString();
}

/**
 * One budget per IPv4 address and per IPv6 /64: a single subscriber usually
 * holds a whole /64, so keying on the full address would hand them 2^64 budgets.
 */
export function rateLimitKey(ip: string): string {
  const normalized = normalizeClientIp(ip);
  if (isIPv4(normalized) || !ipaddr.IPv6.isValid(normalized)) return normalized;
  const parts = ipaddr.IPv6.parse(normalized).parts.slice(0, 4);
  return `${parts.map((p) => p.toString(16)).join(':')}::/64`;
}
