/**
 * HTTP to user-named destinations (inspect, MTA-STS policies, BIMI assets):
 * every hop resolved once and checked by resolveTarget, the connection pinned
 * to a checked address, and hops, time, header and body size capped
 * (docs/architecture.md §3).
 *
 *   const res = await safeFetch('https://example.com/', { resolver, allowCidrs: config.unsafeAllowTargetCidrs });
 *   res.hops;          // one HopEvidence per response, redirects included
 *   res.body;          // the final body, at most maxBodyBytes (res.truncated says if cut)
 *
 * How the pinning works. Each hop gets its own undici Agent whose `connect`
 * wraps undici's buildConnector: it swaps the hostname for the pinned address
 * (so nothing resolves the name again) and sets `servername` to the name for
 * SNI and certificate checks; the URL, and so the Host header, keep the name.
 * The connector also re-checks the address it dials and refuses any host other
 * than the one it was built for. That matters for IP literals: undici never
 * calls a `connect.lookup` hook for `http://127.0.0.1/` or
 * `http://[::ffff:7f00:1]/`, so a lookup-only guard lets literals through; a
 * guard in the connector does not.
 *
 * One Agent per hop costs a fresh handshake for a same-origin redirect, and
 * buys honest evidence: every hop's connect and TLS times are measured on its
 * own new connection (never a reused one showing 0), its remote address is
 * the one it really used, and no pooled connection outlives the call.
 *
 * Certificates are verified by default (`rejectUnauthorized: true`): MTA-STS
 * (RFC 8461 §3.3) and BIMI require a valid certificate, and a fetch that
 * silently accepted a bad one would be wrong for them. The inspector may pass
 * `rejectUnauthorized: false` to still see a misconfigured site's headers;
 * each HTTPS hop then reports `tls.authorized` and `tls.authorizationError`,
 * and the caller must surface them.
 *
 * Why one file: the redirect loop, the per-hop pinned connector and the
 * evidence each hop records share one hop context and one deadline; every
 * exported piece of it would be a way around the checks.
 */
import type { Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import type { Readable } from 'node:stream';
import type { TLSSocket } from 'node:tls';
import { Agent, buildConnector, request } from 'undici';
import { AppError } from '../errors.js';
import { classifyAddress, isAllowedByCidrs, parseHostLiteral } from './address.js';
import { TargetError, type TargetStage, UnsafeTargetError } from './errors.js';
import { redirectRefusal } from './redirect.js';
import {
  type AddressResolver,
  assertAllowedPort,
  type ResolvedTarget,
  resolveTarget,
} from './resolve-target.js';
import { USER_AGENT } from './user-agent.js';

export interface SafeFetchOptions {
  resolver: AddressResolver;
  /** UNSAFE_ALLOW_TARGET_CIDRS. */
  allowCidrs: readonly string[];
  /** The caller's signal (e.g. the client went away); the deadline below applies as well. */
  signal?: AbortSignal;
  /** Default GET. No request bodies: this client looks, it does not submit. */
  method?: 'GET' | 'HEAD';
  /** Extra request headers. `host` cannot be set: it is always the URL's host. */
  headers?: Record<string, string>;
  /** Redirects followed before stopping (the 3xx is then the final response). Default 10; 0 follows none. */
  maxRedirects?: number;
  /** Deadline for the whole call, every hop and body included. Default 10 000 ms. */
  timeoutMs?: number;
  /** Per connection attempt (one address). Default 5 000 ms, never more than timeoutMs. */
  connectTimeoutMs?: number;
  /** Response header block limit (undici maxHeaderSize for HTTP/1.1; checked after the fact for HTTP/2). Default 32 KiB. */
  maxHeaderBytes?: number;
  /** The final body is cut off past this. Default 1 MiB. */
  maxBodyBytes?: number;
  /** Trust anchors replacing the system store (tests pass the test CA). */
  ca?: string | string[];
  /** Default true. See the module comment before turning it off. */
  rejectUnauthorized?: boolean;
  /** Offer h2 in ALPN. Default true. */
  allowH2?: boolean;
  /** Called with each hop as it completes, so a caller keeps the evidence even when a later hop fails. */
  onHop?: (hop: HopEvidence) => void;
  /** The parameter named in 400 messages. Default 'target'. */
  param?: string;
  /**
   * Further ports the FIRST url may use besides 80 and 443, for a destination
   * published in vetted data (an RDAP server listed by IANA on :8443). Redirects
   * are held to 80 and 443 regardless.
   */
  allowPorts?: readonly number[];
}

/** Milliseconds, to 0.1 ms. */
export interface HopTimings {
  /** resolveTarget: DNS for a name, 0-ish for a literal. */
  dns: number;
  /** TCP connect to the pinned address (the successful attempt). */
  connect: number;
  /** TLS handshake; 0 for http. */
  tls: number;
  /** From the connection being ready (request sent) to the response headers. */
  ttfb: number;
  /** The whole hop: DNS, connect, TLS, headers and body (read or discarded). */
  total: number;
}

export interface HopTls {
  protocol: string | null;
  alpn: string | null;
  /** IANA/RFC cipher suite name. */
  cipher: string | null;
  /** Whether the chain verified against the trust anchors and the name matched. */
  authorized: boolean;
  authorizationError?: string;
}

export interface HopEvidence {
  url: string;
  status: number;
  /** Lower-case names as received (pseudo-headers excluded); repeated headers are arrays. */
  headers: Record<string, string | string[]>;
  httpVersion: '1.1' | '2';
  /** The address this hop's connection went to (one of `addresses`). */
  remoteAddress: string;
  /** Every checked address of this hop's host. */
  addresses: string[];
  /** HTTPS hops only. */
  tls?: HopTls;
  timings: HopTimings;
  /** For a 3xx: the Location resolved against the hop's URL (or as sent, when it is not a URL). */
  location?: string;
}

export interface SafeFetchResult {
  /** URL of the final response. */
  url: string;
  /** Every response in order; the last is `final`. */
  hops: HopEvidence[];
  final: HopEvidence;
  /** The final response's body, at most maxBodyBytes (undecoded: no Accept-Encoding is sent). */
  body: Buffer;
  /** True when the body was cut off at maxBodyBytes. */
  truncated: boolean;
  /** True when the final response is a redirect that was not followed because maxRedirects was reached. */
  redirectLimitReached: boolean;
}

const DEFAULTS = {
  maxRedirects: 10,
  timeoutMs: 10_000,
  connectTimeoutMs: 5_000,
  maxHeaderBytes: 32 * 1024,
  maxBodyBytes: 1024 * 1024,
} as const;

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

/**
 * Fetches `url`, following redirects. Throws a 400 UnsafeTargetError before
 * any connection when a hop's destination is refused (not public, port other
 * than 80/443, scheme other than http/https, credentials in the URL); a
 * TargetError (a ProviderError naming the stage) when talking to an accepted
 * destination fails or the deadline passes; the resolver's 502 AppError when
 * DNS failed.
 */
export async function safeFetch(url: string | URL, opts: SafeFetchOptions): Promise<SafeFetchResult> {
  const param = opts.param ?? 'target';
  const timeoutMs = opts.timeoutMs ?? DEFAULTS.timeoutMs;
  const maxRedirects = opts.maxRedirects ?? DEFAULTS.maxRedirects;
  if (opts.headers && Object.keys(opts.headers).some((h) => h.toLowerCase() === 'host')) {
    throw new TypeError('safeFetch: the host header is always the URL host');
  }
  const deadline = AbortSignal.timeout(timeoutMs);
  const signal = opts.signal ? AbortSignal.any([deadline, opts.signal]) : deadline;
  const ctx: HopContext = { opts, signal, deadline, timeoutMs, startedAt: performance.now() };

  let current = checkUrl(url, param, opts.allowPorts);
  const hops: HopEvidence[] = [];
  for (;;) {
    const response = await startHop(current, ctx, hops.length === 0 ? param : `${param} redirect`);
    try {
      const { hop } = response;
      const redirect = REDIRECT_STATUSES.has(hop.status) ? redirectTarget(hop, current) : undefined;
      if (redirect && hops.length < maxRedirects) {
        // Not read: a redirect's body is no evidence, and the hop's connection is closed below.
        discard(response.body);
        response.complete();
        hops.push(hop);
        opts.onHop?.(hop);
        current = checkUrl(redirect, `${param} redirect`);
        continue;
      }
      const { body, truncated } = await readCapped(response, ctx, opts.maxBodyBytes ?? DEFAULTS.maxBodyBytes);
      response.complete();
      hops.push(hop);
      opts.onHop?.(hop);
      return {
        url: hop.url,
        hops,
        final: hop,
        body,
        truncated,
        redirectLimitReached: redirect !== undefined,
      };
    } finally {
      response.close();
    }
  }
}

interface HopContext {
  opts: SafeFetchOptions;
  signal: AbortSignal;
  deadline: AbortSignal;
  timeoutMs: number;
  /** performance.now() when the call started: the deadline counts from here. */
  startedAt: number;
}

/** What the connector saw while opening a hop's connection. */
interface ConnectionProbe {
  https: boolean;
  started?: number;
  connected?: number;
  secured?: number;
  remoteAddress?: string;
  alpn?: string;
  tls?: HopTls;
}

interface StartedHop {
  hop: HopEvidence;
  body: Readable;
  /** Stamps `timings.total` now. */
  complete(): void;
  /** Tears down the hop's Agent (and with it the connection). */
  close(): void;
}

/** Scheme, credentials and port of a hop's URL; throws UnsafeTargetError. */
function checkUrl(input: string | URL, param: string, allowPorts: readonly number[] = []): URL {
  let url: URL;
  try {
    url = new URL(input);
  } catch {
    throw new UnsafeTargetError('invalid_host', `${param} ${String(input)} is not a valid URL`);
  }
  const refusal = redirectRefusal(url);
  if (refusal !== undefined) {
    const reason = url.username || url.password ? 'credentials' : 'scheme';
    throw new UnsafeTargetError(
      reason,
      reason === 'scheme' ? `${param} ${refusal}` : `${param} URL must not carry credentials`,
    );
  }
  const port = url.port === '' ? (url.protocol === 'https:' ? 443 : 80) : Number(url.port);
  if (!allowPorts.includes(port)) assertAllowedPort(port, param);
  url.hash = '';
  return url;
}

/** The absolute URL a redirect points at, or undefined when its Location is missing or unusable. */
function redirectTarget(hop: HopEvidence, base: URL): string | undefined {
  const raw = hop.headers.location;
  const location = Array.isArray(raw) ? raw[0] : raw;
  if (location === undefined) return undefined;
  try {
    const next = new URL(location, base).toString();
    hop.location = next;
    return next;
  } catch {
    hop.location = location;
    return undefined;
  }
}

async function startHop(url: URL, ctx: HopContext, param: string): Promise<StartedHop> {
  const { opts, signal } = ctx;
  const t0 = performance.now();
  let target: ResolvedTarget;
  try {
    target = await resolveTarget(url.hostname, {
      resolver: opts.resolver,
      allowCidrs: opts.allowCidrs,
      signal,
      param,
    });
  } catch (err) {
    throw failure(err, 'dns', ctx, url);
  }
  const dnsDone = performance.now();

  const probe: ConnectionProbe = { https: url.protocol === 'https:' };
  const maxHeaderBytes = opts.maxHeaderBytes ?? DEFAULTS.maxHeaderBytes;
  const remaining = Math.max(1, Math.ceil(ctx.timeoutMs - (dnsDone - ctx.startedAt)));
  const agent = new Agent({
    connect: pinnedConnector(target, probe, {
      allowCidrs: opts.allowCidrs,
      signal,
      allowH2: opts.allowH2 ?? true,
      ca: opts.ca,
      rejectUnauthorized: opts.rejectUnauthorized ?? true,
      timeoutMs: Math.min(opts.connectTimeoutMs ?? DEFAULTS.connectTimeoutMs, remaining),
    }),
    allowH2: opts.allowH2 ?? true,
    maxHeaderSize: maxHeaderBytes,
    connections: 1,
    // The deadline signal governs; these only keep undici's own (longer) defaults out of the way.
    headersTimeout: remaining,
    bodyTimeout: remaining,
  });
  const close = () => {
    agent.destroy().catch(() => {});
  };

  let res: Awaited<ReturnType<typeof request>>;
  try {
    res = await request(url, {
      dispatcher: agent,
      method: opts.method ?? 'GET',
      headers: { 'user-agent': USER_AGENT, accept: '*/*', ...opts.headers },
      signal,
    });
  } catch (err) {
    close();
    throw failure(err, connectionStage(probe), ctx, url);
  }
  const headersAt = performance.now();
  const headers = plainHeaders(res.headers);
  if (headerBytes(headers) > maxHeaderBytes) {
    discard(res.body);
    close();
    throw new TargetError(
      'bad_response',
      'response headers',
      `${url.host}: response headers exceed ${maxHeaderBytes} bytes`,
    );
  }

  const ready = probe.secured ?? probe.connected ?? probe.started ?? dnsDone;
  const hop: HopEvidence = {
    url: url.toString(),
    status: res.statusCode,
    headers,
    httpVersion: probe.alpn === 'h2' ? '2' : '1.1',
    remoteAddress: probe.remoteAddress ?? '',
    addresses: target.addresses.map((a) => a.address),
    ...(probe.tls ? { tls: probe.tls } : {}),
    timings: {
      dns: ms(dnsDone - t0),
      connect: ms(
        probe.connected !== undefined && probe.started !== undefined ? probe.connected - probe.started : 0,
      ),
      tls: ms(
        probe.secured !== undefined && probe.connected !== undefined ? probe.secured - probe.connected : 0,
      ),
      ttfb: ms(headersAt - ready),
      total: 0,
    },
  };
  return {
    hop,
    body: res.body,
    complete: () => {
      hop.timings.total = ms(performance.now() - t0);
    },
    close,
  };
}

/** Reads the final body up to `max` bytes, then stops reading (the hop's connection is discarded). */
async function readCapped(
  started: StartedHop,
  ctx: HopContext,
  max: number,
): Promise<{ body: Buffer; truncated: boolean }> {
  const chunks: Buffer[] = [];
  let size = 0;
  let truncated = false;
  try {
    for await (const chunk of started.body) {
      const buf = chunk as Buffer;
      if (size + buf.length > max) {
        chunks.push(buf.subarray(0, max - size));
        size = max;
        truncated = true;
        break;
      }
      chunks.push(buf);
      size += buf.length;
    }
  } catch (err) {
    throw failure(err, 'response body', ctx, new URL(started.hop.url));
  } finally {
    discard(started.body);
  }
  return { body: Buffer.concat(chunks, size), truncated };
}

interface ConnectorOptions {
  allowCidrs: readonly string[];
  signal: AbortSignal;
  allowH2: boolean;
  ca: string | string[] | undefined;
  rejectUnauthorized: boolean;
  timeoutMs: number;
}

/** buildConnector's connector also returns the socket it created (its typings say void). */
type SocketReturningConnector = (
  options: buildConnector.Options,
  callback: buildConnector.Callback,
) => Socket | undefined;

/**
 * An undici connector that dials only the checked addresses of `target`,
 * trying them in order (all were checked, so falling back is safe), with SNI
 * set to the name (none for a literal). It refuses any other host, and checks
 * each address once more right before dialing.
 */
function pinnedConnector(
  target: ResolvedTarget,
  probe: ConnectionProbe,
  opts: ConnectorOptions,
): buildConnector.connector {
  const base = buildConnector({
    allowH2: opts.allowH2,
    timeout: opts.timeoutMs,
    // Session resumption would hide the handshake the evidence is about, and the Agent lives for one hop anyway.
    maxCachedSessions: 0,
    rejectUnauthorized: opts.rejectUnauthorized,
    ...(opts.ca ? { ca: opts.ca } : {}),
  }) as unknown as SocketReturningConnector;

  return (options, callback) => {
    if (!sameHost(options.hostname, target)) {
      callback(
        new UnsafeTargetError('not_public', `connection to ${options.hostname} refused: it was not checked`),
        null,
      );
      return;
    }
    const attempt = (i: number, lastError?: Error): void => {
      const pin = target.addresses[i];
      if (!pin) {
        callback(lastError ?? new Error('no address to connect to'), null);
        return;
      }
      const cls = classifyAddress(pin.address);
      if (!cls.public && !isAllowedByCidrs(pin.address, opts.allowCidrs)) {
        callback(
          new UnsafeTargetError('not_public', `${pin.address} is not a public address (${cls.range})`, {
            address: pin.address,
            range: cls.range,
          }),
          null,
        );
        return;
      }
      probe.started = performance.now();
      probe.connected = undefined;
      const socket = base(
        {
          ...options,
          hostname: pin.address,
          // undefined for a literal: undici then derives none from an IP host, so no SNI is sent (RFC 6066 §3).
          servername: target.literal ? undefined : target.host,
        },
        (err, sock) => {
          if (err || !sock) {
            // Another address only when this one could not be reached at all; a failed TLS
            // handshake or a deadline ends the attempt.
            if (probe.connected === undefined && !opts.signal.aborted) attempt(i + 1, err ?? undefined);
            else callback(err ?? new Error('connection failed'), null);
            return;
          }
          probe.remoteAddress = sock.remoteAddress ?? pin.address;
          if (probe.https) {
            const tls = sock as TLSSocket;
            probe.secured = performance.now();
            probe.alpn = tls.alpnProtocol || undefined;
            probe.tls = {
              protocol: tls.getProtocol(),
              alpn: tls.alpnProtocol || null,
              cipher: tls.getCipher()?.standardName ?? null,
              authorized: tls.authorized,
              ...(tls.authorizationError ? { authorizationError: String(tls.authorizationError) } : {}),
            };
          }
          probe.connected ??= probe.secured ?? performance.now();
          callback(null, sock);
        },
      );
      // TCP established (for https, before the handshake): splits connect time from TLS time.
      socket?.once('connect', () => {
        probe.connected = performance.now();
      });
    };
    attempt(0);
  };
}

/** Whether undici is asking for the host this connector was built for (brackets stripped, literals compared canonically). */
function sameHost(hostname: string, target: ResolvedTarget): boolean {
  // The URL may carry the root's trailing dot (`http://example.com./`); resolveTarget dropped it.
  if (!target.literal) return hostname.toLowerCase().replace(/\.$/, '') === target.host;
  try {
    return parseHostLiteral(hostname.replace(/^\[(.*)\]$/, '$1')) === target.host;
  } catch {
    return false;
  }
}

/** How far a hop got before its request failed. */
function connectionStage(probe: ConnectionProbe): TargetStage {
  if (probe.secured !== undefined || (!probe.https && probe.connected !== undefined))
    return 'response headers';
  if (probe.connected !== undefined) return 'tls handshake';
  return 'connect';
}

const TLS_ERROR = /^(ERR_TLS_|ERR_SSL_|CERT_|UNABLE_TO_|DEPTH_ZERO|SELF_SIGNED|HOSTNAME_MISMATCH)/;

/** Maps whatever a hop threw to the error the caller gets; refusals and AppErrors pass through. */
function failure(err: unknown, stage: TargetStage, ctx: HopContext, url: URL): Error {
  if (err instanceof UnsafeTargetError) return err;
  if (ctx.deadline.aborted) {
    return new TargetError('timeout', stage, `${url.host}: no answer within ${ctx.timeoutMs} ms (${stage})`, {
      cause: err,
    });
  }
  if (ctx.signal.aborted) return new TargetError('network', stage, `${url.host}: aborted by the caller`);
  if (err instanceof AppError) return err;
  const code = (err as { code?: unknown })?.code;
  const message = err instanceof Error ? err.message : String(err);
  if (code === 'UND_ERR_CONNECT_TIMEOUT') {
    return new TargetError('timeout', 'connect', `${url.host}: connect timed out`, { cause: err });
  }
  if (code === 'UND_ERR_HEADERS_OVERFLOW') {
    return new TargetError('bad_response', 'response headers', `${url.host}: response headers too large`, {
      cause: err,
    });
  }
  if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT') {
    return new TargetError('timeout', stage, `${url.host}: no answer within ${ctx.timeoutMs} ms (${stage})`, {
      cause: err,
    });
  }
  if (
    typeof code === 'string' &&
    (TLS_ERROR.test(code) || (code === 'EPROTO' && stage === 'tls handshake'))
  ) {
    return new TargetError('tls', 'tls handshake', `${url.host}: TLS handshake failed: ${code}`, {
      cause: err,
    });
  }
  const what = typeof code === 'string' ? code : message;
  return new TargetError('network', stage, `${url.host}: ${stage} failed: ${what}`, { cause: err });
}

function plainHeaders(raw: Record<string, string | string[] | undefined>): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(raw)) {
    if (value === undefined || name.startsWith(':')) continue;
    out[name.toLowerCase()] = value;
  }
  return out;
}

/** Approximate size of a header block as sent on the wire ("name: value\r\n" per field). */
function headerBytes(headers: Record<string, string | string[]>): number {
  let n = 0;
  for (const [name, value] of Object.entries(headers)) {
    for (const v of Array.isArray(value) ? value : [value]) n += name.length + v.length + 4;
  }
  return n;
}

/** Stops a body we will not read; undici reports that as an abort error, which nobody needs to hear. */
function discard(body: Readable): void {
  body.on('error', () => {});
  body.destroy();
}

function ms(value: number): number {
  return Math.round(Math.max(0, value) * 10) / 10;
}
