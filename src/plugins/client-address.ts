/**
 * The client's address, and the key the rate limiter counts it under.
 * Fastify's `trustProxy` (set from TRUST_PROXY in app.ts) decides whether
 * X-Forwarded-For is believed; what it yields is whatever the header said.
 * Everything downstream (rate limits, my-ip, logs, the challenge) reads the
 * address through clientIp(), which allows one spelling per address: a port
 * some proxies append, brackets, an IPv4-mapped IPv6 form all reduce to the
 * address itself, and text that is no address at all falls back to the socket
 * peer. Otherwise `203.0.113.13:40001` and `203.0.113.13:40002` would each be a
 * new client with a fresh budget.
 */
import type { IncomingMessage } from 'node:http';
import proxyAddr from '@fastify/proxy-addr';
import type { FastifyRequest } from 'fastify';
import type { TrustProxy } from '../config/index.js';
import { isAllowedByCidrs, isIPv4 } from '../net/address.js';
import { formatIpNumber as formatIp, parseIpNumber as parseIp } from '../providers/ip/ip-number.js';

const V4_WITH_PORT = /^[\d.]+:(\d{1,5})$/;
const PORT_SUFFIX = /^:(\d{1,5})$/;
const isPort = (digits: string | undefined) => digits !== undefined && Number(digits) <= 65_535;

/**
 * The canonical text of an address as a proxy may write it: `a.b.c.d`,
 * `a.b.c.d:port`, an IPv6 address bare or in brackets (`[v6]`, `[v6]:port`,
 * RFC 7239 §6), IPv4-mapped IPv6 as IPv4, IPv6 in RFC 5952 form. Undefined for
 * anything else, including the ambiguous spellings (`011.110.009.009`,
 * `1.2.3.4.`, zone ids) no proxy writes.
 */
export function canonicalIp(text: string): string | undefined {
  let address = text;
  if (address.startsWith('[')) {
    const close = address.indexOf(']');
    if (close < 0) return undefined;
    const rest = address.slice(close + 1);
    if (rest !== '' && !isPort(PORT_SUFFIX.exec(rest)?.[1])) return undefined;
    address = address.slice(1, close);
  } else {
    const port = V4_WITH_PORT.exec(address)?.[1];
    if (port !== undefined) {
      if (!isPort(port)) return undefined;
      address = address.slice(0, address.indexOf(':'));
    }
  }
  const ip = parseIp(address);
  return ip ? formatIp(ip) : undefined;
}

export type TrustRule = (address: string, hop: number) => boolean;

/**
 * TRUST_PROXY as a predicate over (address, hop), hop 0 being the socket peer (proxy-addr
 * semantics). Fastify's request.ip applies this very predicate (app.ts), so every reader
 * of the client address, inside Fastify or before it, trusts the same proxies.
 */
export function trustRule(trust: TrustProxy): TrustRule {
  if (trust === true) return () => true;
  if (trust === false) return () => false;
  if (typeof trust === 'number') return (_address, hop) => hop < trust;
  return (address) => isAllowedByCidrs(address, trust);
}

/** The address the request came from, canonical (see above). */
export function clientIp(request: FastifyRequest): string {
  return canonicalClient(request.ip, request.socket.remoteAddress);
}

/**
 * clientIp() for a request Fastify has not seen (plugins/response-cache.ts answers some
 * before it routes them): the address Fastify's request.ip would give under the same rule
 * (app.ts hands Fastify this trustRule), made canonical the same way.
 */
export function rawClientIp(raw: IncomingMessage, trust: TrustRule | undefined): string {
  const peer = raw.socket.remoteAddress;
  if (trust === undefined) return canonicalClient(peer, peer);
  const chain = proxyAddr.all(raw, trust);
  return canonicalClient(chain[chain.length - 1], peer);
}

function canonicalClient(ip: string | undefined, peer: string | undefined): string {
  // The common case on the hot path: a plain dotted quad needs no parsing.
  if (ip !== undefined && isIPv4(ip)) return ip;
  return (
    (ip === undefined ? undefined : canonicalIp(ip)) ??
    (peer === undefined ? undefined : canonicalIp(peer)) ??
    peer ??
    ip ??
    ''
  );
}

/**
 * One budget per IPv4 address and per IPv6 /64: a single subscriber usually
 * holds a whole /64, so keying on the full address would hand them 2^64 budgets.
 * Takes a canonical address (clientIp).
 */
export function rateLimitKey(ip: string): string {
  if (isIPv4(ip)) return ip;
  const parsed = parseIp(ip);
  if (parsed === undefined || parsed.version === 4) return ip;
  const [a, b] = parsed.w;
  return `${hex(a! >>> 16)}:${hex(a! & 0xffff)}:${hex(b! >>> 16)}:${hex(b! & 0xffff)}::/64`;
}

const hex = (n: number) => n.toString(16);
