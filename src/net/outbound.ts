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
 *   const scan = await ctx.outbound.liveProbe(() => scanOne(host), { signal });
 *   const hello = await ctx.outbound.tcpExchange('192.0.2.1', { port: 443, send, done });
 *
 * Live probes are bounded service-wide (docs/architecture.md §3): at most
 * MAX_LIVE_PROBES at once (every observed TLS handshake, every SMTP session,
 * every raw TCP exchange, and whatever a scan runs through liveProbe()), of which at most
 * MAX_SMTP_SESSIONS SMTP sessions. A probe that finds the bound full waits
 * for a slot, in arrival order, at most `waitMs`; then it fails with a 503
 * `unavailable` and Retry-After, which the request answers (an error is never
 * cached). So one endpoint under abuse holds a bounded number of sockets and
 * answers 503 itself, and the others keep their share of the process.
 * fetch() is not counted: it serves upstream-named destinations too (RDAP
 * referrals, MTA-STS policies), bounded by its own deadline, hops and size.
 *
 * Operator-configured upstreams (rdap.org, crt.sh, ...) use providers/http-client.ts instead.
 */
import { AppError } from '../errors.js';
import { ConcurrencyLimit } from './concurrency-limit.js';
import { type AddressResolver, type ResolvedTarget, resolveTarget } from './resolve-target.js';
import { type SafeFetchOptions, type SafeFetchResult, safeFetch } from './safe-http.js';
import { probeSmtpStarttls, type SmtpProbe, type SmtpProbeOptions } from './smtp-starttls.js';
import { type TcpExchange, type TcpExchangeOptions, tcpExchange } from './tcp-exchange.js';
import { type ObservedHandshake, type ObserveOptions, observeTlsHandshake } from './tls-handshake.js';

export interface OutboundOptions {
  resolver: AddressResolver;
  /** UNSAFE_ALLOW_TARGET_CIDRS: non-public addresses inside these are accepted (labs and tests only). */
  allowCidrs: readonly string[];
  /** Trust anchors replacing the system store (the test CA in tests); production: system store + NODE_EXTRA_CA_CERTS. */
  ca?: string | string[];
  /** Deadline of one call when the caller gives none (PROVIDER_TIMEOUT_MS). */
  timeoutMs: number;
  /** The service-wide bounds on live probes (MAX_LIVE_PROBES, MAX_SMTP_SESSIONS). */
  limits: OutboundLimits;
}

export interface OutboundLimits {
  /** Live probes at once: TLS handshakes, SMTP sessions, scans (MAX_LIVE_PROBES). */
  liveProbes: number;
  /** SMTP sessions at once, counted among the live probes too (MAX_SMTP_SESSIONS). */
  smtpSessions: number;
  /** How long a probe waits for a slot before its request is answered 503. */
  waitMs: number;
  /** Counts a probe refused a slot (the netdiag_live_probe_rejections_total metric). */
  onRejected?: (limit: LimitName) => void;
}

export type LimitName = 'live_probes' | 'smtp_sessions';

type Wired = 'resolver' | 'allowCidrs' | 'ca';

export class Outbound {
  readonly #opts: OutboundOptions;
  readonly #live: ConcurrencyLimit;
  readonly #smtp: ConcurrencyLimit;

  constructor(opts: OutboundOptions) {
    this.#opts = opts;
    this.#live = new ConcurrencyLimit(opts.limits.liveProbes);
    this.#smtp = new ConcurrencyLimit(opts.limits.smtpSessions);
  }

  /** Slots held and callers waiting, per bound, now. */
  get usage(): Record<LimitName, { active: number; waiting: number }> {
    const of = (l: ConcurrencyLimit) => ({ active: l.active, waiting: l.waiting });
    return { live_probes: of(this.#live), smtp_sessions: of(this.#smtp) };
  }

  /**
   * Runs `probe` as one live probe: a connection of its own to a destination a user or
   * upstream data named (a scan's). Rejects with the 503 when no slot frees in time.
   */
  liveProbe<T>(probe: () => Promise<T>, opts: { signal?: AbortSignal } = {}): Promise<T> {
    return this.#limited(['live_probes'], opts.signal, probe);
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
    return this.#limited(['live_probes'], opts.signal, () =>
      observeTlsHandshake(host, { ...this.#wired(), timeoutMs: this.#opts.timeoutMs, ...opts }),
    );
  }

  /**
   * One raw TCP exchange (a hand-made TLS hello and the server's first answer; see
   * net/tcp-exchange.ts), as one live probe: the TLS scan's handshakes each take a slot (and an
   * SMTP session's when it talks SMTP first).
   */
  tcpExchange(
    host: string,
    opts: Omit<TcpExchangeOptions, 'resolver' | 'allowCidrs' | 'timeoutMs'> & { timeoutMs?: number },
  ): Promise<TcpExchange> {
    const { resolver, allowCidrs } = this.#opts;
    // A prelude is a plaintext conversation before TLS: SMTP's, the only one there is, and an
    // SMTP session counts against MAX_SMTP_SESSIONS like every other.
    const limits: LimitName[] = opts.prelude ? ['smtp_sessions', 'live_probes'] : ['live_probes'];
    return this.#limited(limits, opts.signal, () =>
      tcpExchange(host, { resolver, allowCidrs, timeoutMs: this.#opts.timeoutMs, ...opts }),
    );
  }

  /**
   * One SMTP STARTTLS session with port 25 of an address; see net/smtp-starttls.ts. An
   * address that may not be contacted is refused (UnsafeTargetError) before a slot is taken.
   */
  async probeSmtpStarttls(
    address: string,
    opts: Omit<SmtpProbeOptions, Wired | 'timeoutMs'> & { timeoutMs?: number },
  ): Promise<SmtpProbe> {
    await this.resolve(address, { param: 'mx' });
    return this.#limited(['smtp_sessions', 'live_probes'], opts.signal, () =>
      probeSmtpStarttls(address, { ...this.#wired(), timeoutMs: this.#opts.timeoutMs, ...opts }),
    );
  }

  /** The checked addresses of a host, without connecting (a 400 when none may be used). */
  resolve(host: string, opts: { signal?: AbortSignal; param?: string } = {}): Promise<ResolvedTarget> {
    return resolveTarget(host, { resolver: this.#opts.resolver, allowCidrs: this.#opts.allowCidrs, ...opts });
  }

  /**
   * Takes a slot of each bound, in this order (SMTP before the live-probe bound, always, so two
   * callers can never hold what the other waits for), within one wait of `waitMs` in all.
   */
  async #limited<T>(names: LimitName[], signal: AbortSignal | undefined, run: () => Promise<T>): Promise<T> {
    const wait = AbortSignal.timeout(this.#opts.limits.waitMs);
    const waitOrCaller = signal ? AbortSignal.any([wait, signal]) : wait;
    const releases: (() => void)[] = [];
    try {
      for (const name of names) {
        try {
          releases.push(await this.#limit(name).acquire(waitOrCaller));
        } catch (err) {
          if (!wait.aborted || signal?.aborted) throw err;
          this.#opts.limits.onRejected?.(name);
          throw this.#full(name);
        }
      }
      return await run();
    } finally {
      for (const release of releases) release();
    }
  }

  #limit(name: LimitName): ConcurrencyLimit {
    return name === 'smtp_sessions' ? this.#smtp : this.#live;
  }

  #full(name: LimitName): AppError {
    // A slot frees when a probe ends; one wait from now is as good a guess as any and never 0.
    const retryAfter = Math.max(1, Math.ceil(this.#opts.limits.waitMs / 1000));
    const what =
      name === 'smtp_sessions'
        ? `as many SMTP sessions as it allows (MAX_SMTP_SESSIONS=${this.#smtp.max})`
        : `as many live probes as it allows (MAX_LIVE_PROBES=${this.#live.max})`;
    return new AppError(503, 'unavailable', `this service is running ${what}; retry after ${retryAfter} s`, {
      headers: { 'retry-after': String(retryAfter) },
    });
  }

  #wired(): Pick<SafeFetchOptions, Wired> {
    const { resolver, allowCidrs, ca } = this.#opts;
    return ca ? { resolver, allowCidrs, ca } : { resolver, allowCidrs };
  }
}
