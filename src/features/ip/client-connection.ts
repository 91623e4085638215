/**
 * Facts about the connection behind GET /api/my-ip: which address reached
 * us, whether the peer is a proxy TRUST_PROXY trusts, the CDN headers such a
 * proxy adds, and the protocol of the hop into the service.
 *
 * Fastify's `request.ip` already applies TRUST_PROXY to X-Forwarded-For
 * (proxy-addr semantics). RFC 7239 `Forwarded` is not read by Fastify, so
 * when a trusted proxy sends only that header the same walk is applied here:
 * from the nearest hop outwards, each address is believed only while the hop
 * before it is trusted.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { FastifyRequest } from 'fastify';
import type { TrustProxy } from '../../config/index.js';
import { canonicalIp, clientIp, type TrustRule, trustRule } from '../../plugins/client-address.js';

/**
 * The `for=` nodes of a Forwarded header (RFC 7239 §4, §6), nearest proxy
 * last. A node that is not an address (`unknown`, an obfuscated `_name`,
 * garbage) is undefined: the walk cannot go past it.
 */
export function forwardedFor(header: string): (string | undefined)[] {
  return header.split(',').map((element) => {
    for (const pair of element.split(';')) {
      const eq = pair.indexOf('=');
      if (eq === -1 || pair.slice(0, eq).trim().toLowerCase() !== 'for') continue;
      let node = pair.slice(eq + 1).trim();
      if (node.startsWith('"') && node.endsWith('"') && node.length >= 2) node = node.slice(1, -1);
      // "192.0.2.43:47011", "[2001:db8:cafe::17]:4711" (RFC 7239 §6: IPv6 in brackets, port optional).
      return canonicalIp(node);
    }
    return undefined;
  });
}

/** The client address a Forwarded header yields under `trust`, starting from the socket peer. */
export function clientFromForwarded(peer: string, header: string, trust: TrustRule): string {
  const nodes = forwardedFor(header);
  let client = peer;
  for (let hop = 0; hop < nodes.length; hop++) {
    if (!trust(client, hop)) return client;
    const next = nodes[nodes.length - 1 - hop];
    if (next === undefined) return client;
    client = next;
  }
  return client;
}

/**
 * CDN metadata headers my-ip passes through, and only from a trusted proxy
 * (anyone else could send them).
 *  - Cloudflare: https://developers.cloudflare.com/fundamentals/reference/http-headers/ and the
 *    "Add visitor location headers" managed transform
 *    (https://developers.cloudflare.com/rules/transform/managed-transforms/reference/)
 *  - Amazon CloudFront viewer headers:
 *    https://docs.aws.amazon.com/AmazonCloudFront/latest/DeveloperGuide/adding-cloudfront-headers.html
 */
export const EDGE_HEADERS: readonly string[] = [
  'cf-connecting-ip',
  'cf-connecting-ipv6',
  'cf-ipcountry',
  'cf-ray',
  'cf-visitor',
  'cf-ipcontinent',
  'cf-ipcity',
  'cf-region',
  'cf-region-code',
  'cf-iplatitude',
  'cf-iplongitude',
  'cf-postal-code',
  'cf-metro-code',
  'cf-timezone',
  'cloudfront-viewer-country',
  'cloudfront-viewer-country-region',
  'cloudfront-viewer-city',
  'cloudfront-viewer-time-zone',
  'cloudfront-viewer-asn',
  'cloudfront-viewer-http-version',
  'cloudfront-viewer-tls',
];

/** Printable ASCII, at most 256 characters: anything else is not what a CDN sends and is dropped. */
const EDGE_VALUE = /^[\x20-\x7e]{1,256}$/;

export function edgeHeaders(headers: IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of EDGE_HEADERS) {
    const value = headers[name];
    if (typeof value === 'string' && EDGE_VALUE.test(value)) out[name] = value;
  }
  return out;
}

export interface ConnectionFacts {
  /** Normalized client address (IPv4-mapped → IPv4). */
  ip: string;
  viaTrustedProxy: boolean;
  edge: Record<string, string>;
  protocol: string;
  tlsVersion: string | undefined;
  userAgent: string | null;
}

const PROTOCOLS: Record<string, string> = { '1.0': 'http/1.0', '1.1': 'http/1.1', '2.0': 'h2' };

export function connectionFacts(request: FastifyRequest, trust: TrustProxy): ConnectionFacts {
  // A TLSSocket when the service itself terminates TLS; only what this reads of one.
  const socket = request.raw.socket as
    | (typeof request.raw.socket & { encrypted?: boolean; getProtocol?: () => string | null })
    | undefined;
  const remote = socket?.remoteAddress;
  const peer = (remote === undefined ? undefined : canonicalIp(remote)) ?? clientIp(request);
  const rule = trustRule(trust);
  const trusted = rule(peer, 0);
  let ip = clientIp(request);
  const forwarded = request.headers.forwarded;
  if (trusted && request.headers['x-forwarded-for'] === undefined && typeof forwarded === 'string') {
    ip = clientFromForwarded(peer, forwarded, rule);
  }
  const encrypted = socket?.encrypted === true;
  const httpVersion = request.raw.httpVersion;
  const userAgent = request.headers['user-agent'];
  return {
    ip,
    viaTrustedProxy: trusted,
    edge: trusted ? edgeHeaders(request.headers) : {},
    protocol: (httpVersion === '2.0' && !encrypted ? 'h2c' : PROTOCOLS[httpVersion]) ?? `http/${httpVersion}`,
    tlsVersion: encrypted ? (socket?.getProtocol?.() ?? undefined) : undefined,
    userAgent: typeof userAgent === 'string' && userAgent !== '' ? userAgent.slice(0, 512) : null,
  };
}
