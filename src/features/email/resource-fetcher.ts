/**
 * The one way the email-security service fetches an HTTPS resource (the
 * MTA-STS policy, the BIMI logo, the VMC): through outbound safety
 * (src/net/safe-http.ts) — the host resolved once by our DNS client, every
 * address checked, the connection pinned, the certificate verified, no
 * redirect followed, size and time capped. The service sees only the
 * ResourceFetcher function, so unit tests hand it a fake.
 */
import { isUpstreamFailed } from '../../errors.js';
import { TargetError, UnsafeTargetError } from '../../net/errors.js';
import type { Outbound } from '../../net/outbound.js';
import type { FetchOutcome } from './types.js';

export interface FetchRequest {
  url: string;
  /** The body is cut at this many bytes (and `truncated` set). */
  maxBytes: number;
}

/** Fetches one HTTPS resource without following redirects; never rejects for a network or target problem. */
export type ResourceFetcher = (request: FetchRequest) => Promise<FetchOutcome>;

export function createSafeFetcher(outbound: Pick<Outbound, 'fetch'>): ResourceFetcher {
  return async ({ url, maxBytes }) => {
    try {
      const result = await outbound.fetch(url, {
        // RFC 8461 §3.3: redirects must not be followed; BIMI assets are fetched the same way.
        maxRedirects: 0,
        maxBodyBytes: maxBytes,
        rejectUnauthorized: true,
        param: 'host',
      });
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(result.final.headers)) {
        headers[name] = Array.isArray(value) ? value.join(', ') : value;
      }
      return {
        ok: true,
        response: { status: result.final.status, headers, body: result.body, truncated: result.truncated },
      };
    } catch (err) {
      if (err instanceof UnsafeTargetError) return { ok: false, reason: err.message, temporary: false };
      if (err instanceof TargetError)
        return { ok: false, reason: `${err.stage}: ${err.message}`, temporary: false };
      // The resolver's upstream_failed: every DNS provider failed resolving the host.
      if (isUpstreamFailed(err)) {
        return { ok: false, reason: `DNS lookup failed: ${err.message}`, temporary: true };
      }
      throw err;
    }
  };
}
