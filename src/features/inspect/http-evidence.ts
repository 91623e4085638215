/**
 * The `http` part of /api/inspect, shaped from what safeFetch saw: the two
 * redirect chains (from http://HOST/ and https://HOST/), the final response
 * with a bounded, allow-listed header set, phase timings, HTTP/2 as
 * negotiated by ALPN and HTTP/3 as advertised by Alt-Svc. Pure functions.
 */
import { AppError } from '../../errors.js';
import { TargetError, UnsafeTargetError } from '../../net/errors.js';
import type { HopEvidence, HopTimings, SafeFetchResult } from '../../net/safe-http.js';
import { type AltService, isHttp3, parseAltSvc } from './alt-svc.js';
import { fieldLines } from './verdict.js';

/**
 * Response headers reported as received: caching, content, server identity
 * and every security header. Anything else is listed by name only, so
 * cookies and site-specific tokens are never copied into our answer (or our
 * cache), and a hostile site cannot fill it.
 */
export const REPORTED_HEADERS: readonly string[] = [
  'access-control-allow-origin',
  'age',
  'alt-svc',
  'cache-control',
  'content-encoding',
  'content-language',
  'content-length',
  'content-security-policy',
  'content-security-policy-report-only',
  'content-type',
  'cross-origin-embedder-policy',
  'cross-origin-opener-policy',
  'cross-origin-resource-policy',
  'date',
  'etag',
  'expires',
  'feature-policy',
  'last-modified',
  'location',
  'nel',
  'permissions-policy',
  'referrer-policy',
  'report-to',
  'reporting-endpoints',
  'server',
  'strict-transport-security',
  'timing-allow-origin',
  'vary',
  'via',
  'x-content-type-options',
  'x-frame-options',
  'x-powered-by',
  'x-robots-tag',
  'x-xss-protection',
];

/** Longest header value reported; long CSPs run to a few KiB, anything past this is cut. */
export const MAX_HEADER_VALUE = 8192;
/** Most header names listed under `other_headers`. */
const MAX_OTHER_HEADERS = 50;

export interface HopTlsOut {
  protocol: string | null;
  alpn: string | null;
  cipher: string | null;
  /** Whether the certificate verified for this host (the chain went on either way, to see the headers). */
  authorized: boolean;
  authorization_error: string | null;
}

export interface HopOut {
  url: string;
  status: number;
  location: string | null;
  http_version: '1.1' | '2';
  remote_address: string;
  timings: HopTimings;
  tls: HopTlsOut | null;
}

export interface ChainOut {
  start_url: string;
  status: 'ok' | 'error';
  error?: string;
  /** Where the failing request stood: dns, connect, tls handshake, response headers, ..., or refused. */
  stage?: string;
  /** Every response received, in order (also those before a failure). */
  hops: HopOut[];
  final_url: string | null;
  /** The last hop is a redirect not followed because the redirect cap was reached. */
  redirect_limit_reached: boolean;
  /** Milliseconds over all hops. */
  total_ms: number;
}

export interface FinalResponseOut {
  url: string;
  status: number;
  http_version: '1.1' | '2';
  remote_address: string;
  headers: Record<string, string>;
  /** Reported headers whose value was cut at MAX_HEADER_VALUE. */
  truncated_headers: string[];
  /** Names of the other headers received, values not reported. */
  other_headers: string[];
  body: { bytes: number; truncated: boolean };
  timings: HopTimings;
  tls: HopTlsOut | null;
}

export interface HttpPart {
  status: 'ok' | 'error';
  error?: string;
  chains: { http: ChainOut; https: ChainOut };
  /** The response the headers are read from: the end of the https chain, else of the http chain. */
  final: FinalResponseOut | null;
  /** Whether http://HOST/ ends up on an https:// URL; null when that chain failed. */
  redirects_to_https: boolean | null;
  /** Phase timings of the final response's hop (ms). */
  timings: HopTimings | null;
  /** HTTP/2 as negotiated by ALPN on the final HTTPS response. */
  http2: { negotiated: boolean };
  /** HTTP/3 as advertised by Alt-Svc on the final HTTPS response; never connected to. */
  http3: { advertised: boolean; alternatives: AltService[]; clear: boolean };
}

/** How one chain ended: the result, or the error plus the hops seen before it. */
export type ChainOutcome =
  | { startUrl: string; ok: true; result: SafeFetchResult }
  | { startUrl: string; ok: false; hops: HopEvidence[]; error: unknown };

export function hopOut(hop: HopEvidence): HopOut {
  return {
    url: hop.url,
    status: hop.status,
    location: hop.location ?? null,
    http_version: hop.httpVersion,
    remote_address: hop.remoteAddress,
    timings: hop.timings,
    tls: hop.tls
      ? {
          protocol: hop.tls.protocol,
          alpn: hop.tls.alpn,
          cipher: hop.tls.cipher,
          authorized: hop.tls.authorized,
          authorization_error: hop.tls.authorizationError ?? null,
        }
      : null,
  };
}

/** The message and stage of a chain's failure, without internals. */
export function describeFailure(err: unknown): { error: string; stage: string } {
  if (err instanceof UnsafeTargetError) return { error: err.message, stage: 'refused' };
  if (err instanceof TargetError) return { error: err.message, stage: err.stage };
  if (err instanceof AppError) return { error: err.message, stage: 'dns' };
  return { error: err instanceof Error ? err.message : String(err), stage: 'request' };
}

export function chainOut(outcome: ChainOutcome): ChainOut {
  const hops = (outcome.ok ? outcome.result.hops : outcome.hops).map(hopOut);
  const total = Math.round(hops.reduce((sum, h) => sum + h.timings.total, 0) * 10) / 10;
  if (outcome.ok) {
    return {
      start_url: outcome.startUrl,
      status: 'ok',
      hops,
      final_url: outcome.result.url,
      redirect_limit_reached: outcome.result.redirectLimitReached,
      total_ms: total,
    };
  }
  return {
    start_url: outcome.startUrl,
    status: 'error',
    ...describeFailure(outcome.error),
    hops,
    final_url: null,
    redirect_limit_reached: false,
    total_ms: total,
  };
}

/** The reported subset of a response's headers, each value bounded. */
export function reportedHeaders(headers: HopEvidence['headers']): {
  headers: Record<string, string>;
  truncated: string[];
  other: string[];
} {
  const out: Record<string, string> = {};
  const truncated: string[] = [];
  const other: string[] = [];
  for (const [name, value] of Object.entries(headers)) {
    if (!REPORTED_HEADERS.includes(name)) {
      if (other.length < MAX_OTHER_HEADERS) other.push(name);
      continue;
    }
    const joined = fieldLines(value).join(', ');
    if (joined.length > MAX_HEADER_VALUE) {
      out[name] = joined.slice(0, MAX_HEADER_VALUE);
      truncated.push(name);
    } else {
      out[name] = joined;
    }
  }
  return { headers: out, truncated, other: other.sort() };
}

function finalOut(result: SafeFetchResult): FinalResponseOut {
  const hop = result.final;
  const { headers, truncated, other } = reportedHeaders(hop.headers);
  const h = hopOut(hop);
  return {
    url: hop.url,
    status: hop.status,
    http_version: hop.httpVersion,
    remote_address: hop.remoteAddress,
    headers,
    truncated_headers: truncated,
    other_headers: other,
    body: { bytes: result.body.length, truncated: result.truncated },
    timings: hop.timings,
    tls: h.tls,
  };
}

/** The final response whose headers are judged: HTTPS when it answered, else plain HTTP. */
export function finalResult(http: ChainOutcome, https: ChainOutcome): SafeFetchResult | undefined {
  if (https.ok) return https.result;
  if (http.ok) return http.result;
  return undefined;
}

export function httpPart(http: ChainOutcome, https: ChainOutcome): HttpPart {
  const chains = { http: chainOut(http), https: chainOut(https) };
  const final = finalResult(http, https);
  const finalHttps = final?.url.startsWith('https:') === true;
  const altSvc = finalHttps && final ? parseAltSvc(fieldLines(final.final.headers['alt-svc'])) : undefined;
  const part: HttpPart = {
    status: final ? 'ok' : 'error',
    chains,
    final: final ? finalOut(final) : null,
    redirects_to_https: http.ok ? http.result.url.startsWith('https:') : null,
    timings: final ? final.final.timings : null,
    http2: { negotiated: finalHttps && final?.final.httpVersion === '2' },
    http3: {
      advertised: altSvc?.alternatives.some((a) => isHttp3(a.protocol)) === true && !altSvc.clear,
      alternatives: altSvc?.alternatives ?? [],
      clear: altSvc?.clear ?? false,
    },
  };
  if (!final) {
    part.error = `neither http:// nor https:// answered: ${chains.https.error ?? 'unknown error'}`;
  }
  return part;
}
