/**
 * The RDAP fetcher's sender for destinations no operator configured: the
 * registries rdap.org redirects to, the servers the IANA bootstrap names and
 * the registrars a registry links to. Each request goes through outbound
 * safety (net/safeFetch: resolved once with our DNS client, every address
 * checked, connection pinned), one hop at a time so that rdap-fetch.ts
 * applies the RDAP redirect rules (5 hops, HTTPS only) and sees every 429.
 */
import { type SafeFetchOptions, safeFetch } from '../../net/safe-http.js';
import { ProviderError } from '../types.js';
import type { HopSender } from './rdap-fetch.js';

export interface OutboundOptions {
  resolver: SafeFetchOptions['resolver'];
  /** UNSAFE_ALLOW_TARGET_CIDRS. */
  allowCidrs: readonly string[];
  /** Per hop; the chain's per-attempt timeout bounds the whole lookup as well. */
  timeoutMs: number;
  /** Test CA for fixture registries; production uses the system store. */
  ca?: string | string[];
}

export function safeHopSender(opts: OutboundOptions): HopSender {
  return async (url, req) => {
    const res = await safeFetch(url, {
      resolver: opts.resolver,
      allowCidrs: opts.allowCidrs,
      signal: req.signal,
      headers: req.headers,
      maxRedirects: 0,
      timeoutMs: opts.timeoutMs,
      maxBodyBytes: req.maxBytes,
      ...(req.listedPort === undefined ? {} : { allowPorts: [req.listedPort] }),
      ...(opts.ca ? { ca: opts.ca } : {}),
    });
    if (res.truncated) {
      throw new ProviderError(
        'bad_response',
        `response from ${new URL(url).host} exceeds ${req.maxBytes} bytes`,
      );
    }
    return { status: res.final.status, headers: res.final.headers, body: res.body };
  };
}
