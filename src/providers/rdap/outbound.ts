/**
 * The RDAP fetcher's sender for destinations no operator configured: the
 * registries rdap.org redirects to, the servers the IANA bootstrap names and
 * the registrars a registry links to. Each request goes through outbound
 * safety (net/safeFetch: resolved once with our DNS client, every address
 * checked, connection pinned), one hop at a time so that rdap-fetch.ts
 * applies the RDAP redirect rules (5 hops, HTTPS only) and sees every 429.
 */

import { ProviderError } from '../../errors.js';
import type { Outbound } from '../../net/outbound.js';
import type { HopSender } from './rdap-fetch.js';

/** Per hop, the app's outbound deadline applies; the chain's per-attempt timeout bounds the whole lookup as well. */
export function safeHopSender(outbound: Pick<Outbound, 'fetch'>): HopSender {
  return async (url, req) => {
    const res = await outbound.fetch(url, {
      signal: req.signal,
      headers: req.headers,
      maxRedirects: 0,
      maxBodyBytes: req.maxBytes,
      ...(req.listedPort === undefined ? {} : { allowPorts: [req.listedPort] }),
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
