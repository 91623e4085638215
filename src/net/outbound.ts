/**
 * The one outbound client for destinations no operator configured
 * (docs/architecture.md §3): a host a user named (inspect, tls), or one that
 * upstream data named (MTA-STS policy and BIMI hosts, RDAP registries and
 * registrars). Built once per app (ctx.outbound) with the DNS client, the
 * UNSAFE_ALLOW_TARGET_CIDRS allow-list, the trust anchors and the default
 * deadline, so no feature wires those itself; each call adds only what is its
 * own (redirect policy, body cap, the parameter named in a 400).
 *
 *   const res = await ctx.outbound.fetch('https://example.com/', { maxRedirects: 0 });
 *   const hs = await ctx.outbound.observeTlsHandshake('example.com', { port: 443 });
 *   const mx = await ctx.outbound.probeSmtpStarttls('192.0.2.25', { servername: 'mx.example.com', heloName });
 *
 * Operator-configured upstreams (rdap.org, crt.sh, ...) use providers/http-client.ts instead.
 */
import { type AddressResolver, type ResolvedTarget, resolveTarget } from './resolve-target.js';
import { type SafeFetchOptions, type SafeFetchResult, safeFetch } from './safe-http.js';
import { probeSmtpStarttls, type SmtpProbe, type SmtpProbeOptions } from './smtp-starttls.js';
import { type ObservedHandshake, type ObserveOptions, observeTlsHandshake } from './tls-handshake.js';

export interface OutboundOptions {
  resolver: AddressResolver;
  /** UNSAFE_ALLOW_TARGET_CIDRS: non-public addresses inside these are accepted (labs and tests only). */
  allowCidrs: readonly string[];
  /** Trust anchors replacing the system store (the test CA in tests); production: system store + NODE_EXTRA_CA_CERTS. */
  ca?: string | string[];
  /** Deadline of one call when the caller gives none (PROVIDER_TIMEOUT_MS). */
  timeoutMs: number;
}

type Wired = 'resolver' | 'allowCidrs' | 'ca';

export class Outbound {
  readonly #opts: OutboundOptions;

  constructor(opts: OutboundOptions) {
    this.#opts = opts;
  }

  /** safeFetch: every hop resolved, checked and pinned; see net/safe-http.ts. */
  fetch(url: string | URL, opts: Omit<SafeFetchOptions, Wired> = {}): Promise<SafeFetchResult> {
    return safeFetch(url, { ...this.#wired(), timeoutMs: this.#opts.timeoutMs, ...opts });
  }

  /** One TLS handshake offering every protocol version, read into data; see net/tls-handshake.ts. */
  observeTlsHandshake(
    host: string,
    opts: Omit<ObserveOptions, Wired | 'timeoutMs'> & { timeoutMs?: number } = {},
  ): Promise<ObservedHandshake> {
    return observeTlsHandshake(host, { ...this.#wired(), timeoutMs: this.#opts.timeoutMs, ...opts });
  }

  /** One SMTP STARTTLS session with port 25 of an address; see net/smtp-starttls.ts. */
  probeSmtpStarttls(
    address: string,
    opts: Omit<SmtpProbeOptions, Wired | 'timeoutMs'> & { timeoutMs?: number },
  ): Promise<SmtpProbe> {
    return probeSmtpStarttls(address, { ...this.#wired(), timeoutMs: this.#opts.timeoutMs, ...opts });
  }

  /** The checked addresses of a host, without connecting (a 400 when none may be used). */
  resolve(host: string, opts: { signal?: AbortSignal; param?: string } = {}): Promise<ResolvedTarget> {
    return resolveTarget(host, { resolver: this.#opts.resolver, allowCidrs: this.#opts.allowCidrs, ...opts });
  }

  #wired(): Pick<SafeFetchOptions, Wired> {
    const { resolver, allowCidrs, ca } = this.#opts;
    return ca ? { resolver, allowCidrs, ca } : { resolver, allowCidrs };
  }
}
