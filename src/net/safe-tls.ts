/**
 * A TLS handshake with a user-named host (GET /api/tls, the inspector's TLS
 * evidence): port and address checked, the name resolved once, the TCP
 * connection made to a checked address, SNI set to the name (docs/architecture.md §3).
 *
 * Certificates are NOT enforced here (`rejectUnauthorized: false`): the point
 * is to report a bad certificate, not to fail on it. The caller reads
 * `socket.authorized` and `socket.authorizationError` (verified against `ca`,
 * else the system store, and against the SNI name, or the address for a
 * literal).
 *
 *   const socket = await safeTlsConnect('example.com', { resolver, allowCidrs, timeoutMs: 5000 });
 *   try { ... socket.getPeerX509Certificate() ... } finally { socket.destroy(); }
 */
import { type Socket, connect as tcpConnect } from 'node:net';
import type { Duplex } from 'node:stream';
import { type ConnectionOptions, type TLSSocket, connect as tlsConnect } from 'node:tls';
import { AppError } from '../errors.js';
import { TargetError, type TargetStage, UnsafeTargetError } from './errors.js';
import {
  type AddressResolver,
  assertAllowedPort,
  type ResolvedTarget,
  resolveTarget,
  type TargetAddress,
} from './resolve-target.js';

export interface SafeTlsOptions {
  /** Default 443; only ALLOWED_PORTS, or `allowedPorts`. */
  port?: number;
  /** The ports this caller may use instead of ALLOWED_PORTS (SMTP: [25]). */
  allowedPorts?: readonly number[];
  /**
   * A plaintext exchange on the connected TCP socket before TLS starts (SMTP
   * STARTTLS). It must leave no unread server bytes behind; a rejection ends
   * the attempt at stage 'starttls'.
   */
  beforeTls?: (tcp: Socket, signal: AbortSignal) => Promise<void>;
  resolver: AddressResolver;
  /** UNSAFE_ALLOW_TARGET_CIDRS. */
  allowCidrs: readonly string[];
  /** Trust anchors replacing the system store for `authorized` (tests pass the test CA). */
  ca?: string | string[];
  signal?: AbortSignal;
  /** Deadline for DNS, connect and handshake together. */
  timeoutMs: number;
  /** A shorter deadline for each TCP connect alone; its expiry is an ETIMEDOUT connect failure. */
  connectTimeoutMs?: number;
  /** A shorter deadline for the TLS handshake alone; its expiry is an ETIMEDOUT handshake failure. */
  handshakeTimeoutMs?: number;
  /** SNI to send instead of the host name (also for an IP literal, which otherwise sends none). */
  servername?: string;
  /** Default ['h2', 'http/1.1']. */
  alpnProtocols?: string[];
  /**
   * Protocol bounds, ciphers and OCSP request, e.g. `{ minVersion: 'TLSv1', ciphers: 'DEFAULT@SECLEVEL=0' }`
   * to see a server that only speaks old TLS. Default: Node's.
   */
  tls?: Pick<ConnectionOptions, 'minVersion' | 'maxVersion' | 'ciphers' | 'ecdhCurve' | 'sigalgs'> & {
    /** Ask for a stapled OCSP response (tls.connect supports it; @types/node lists it on TLSSocket only). */
    requestOCSP?: boolean;
  };
  /**
   * Called with the TLS socket before the handshake starts, to attach listeners that must be
   * there in time ('OCSPResponse', 'keylog').
   */
  onSocket?: (socket: TLSSocket) => void;
  /**
   * Puts a stream of the caller's between the TCP socket and TLS; called after the TCP connect.
   * It must pass bytes through unchanged both ways and destroy `tcp` when it is destroyed. GET
   * /api/tls reads the server's raw records through it (the certificate list exactly as sent).
   */
  wrapSocket?: (tcp: Socket) => Duplex;
  /** The parameter named in 400 messages. Default 'target'. */
  param?: string;
}

/**
 * Resolves `host` (name or IP literal), checks every address, connects to
 * the first reachable one and completes a TLS handshake. Resolves with the
 * connected socket; the caller owns it and must destroy it. A no-op 'error'
 * listener stays attached so a late reset cannot crash the process; attach
 * your own to see errors.
 *
 * Rejects with a 400 UnsafeTargetError (port, non-public address, no
 * address) before any connection; the resolver's 502 AppError when DNS
 * failed; a TargetError whose `stage` is 'dns', 'connect' or 'tls handshake'
 * (kind 'timeout' when the deadline passed, 'network' for a refused or reset
 * connection, 'tls' for a failed handshake).
 */
export async function safeTlsConnect(host: string, opts: SafeTlsOptions): Promise<TLSSocket> {
  const port = opts.port ?? 443;
  const param = opts.param ?? 'target';
  assertAllowedPort(port, param, opts.allowedPorts);
  const deadline = AbortSignal.timeout(opts.timeoutMs);
  const signal = opts.signal ? AbortSignal.any([deadline, opts.signal]) : deadline;
  const fail = (stage: TargetStage, err: unknown): Error => {
    if (err instanceof UnsafeTargetError) return err;
    if (deadline.aborted) {
      const message = `${host}: timeout during ${stage} after ${opts.timeoutMs} ms`;
      return new TargetError('timeout', stage, message, { cause: err });
    }
    if (signal.aborted) return new TargetError('network', stage, `${host}: aborted by the caller`);
    if (err instanceof AppError) return err;
    const code = (err as { code?: unknown })?.code;
    const what = typeof code === 'string' ? code : err instanceof Error ? err.message : String(err);
    const kind = stage === 'tls handshake' ? 'tls' : 'network';
    return new TargetError(kind, stage, `${host}: ${stage} failed: ${what}`, { cause: err });
  };

  let target: ResolvedTarget;
  try {
    target = await resolveTarget(host, {
      resolver: opts.resolver,
      allowCidrs: opts.allowCidrs,
      signal,
      param,
    });
  } catch (err) {
    throw fail('dns', err);
  }
  const servername = opts.servername ?? (target.literal ? undefined : target.host);

  let unreachable: HandshakeFailure | undefined;
  for (const address of target.addresses) {
    try {
      return await handshake(address, port, servername, opts, signal);
    } catch (err) {
      const failed = err as HandshakeFailure;
      // Another address only when this one could not be reached; a failed handshake is the answer.
      if (failed.stage !== 'connect' || signal.aborted) throw fail(failed.stage, failed.cause);
      unreachable = failed;
    }
  }
  throw fail('connect', unreachable?.cause);
}

/** Why one address failed, and how far it got. */
class HandshakeFailure extends Error {
  constructor(
    readonly stage: TargetStage,
    override readonly cause: unknown,
  ) {
    super(`${stage} failed`);
  }
}

/** One TCP connect and TLS handshake; rejects with a HandshakeFailure. */
function handshake(
  pin: TargetAddress,
  port: number,
  servername: string | undefined,
  opts: SafeTlsOptions,
  signal: AbortSignal,
): Promise<TLSSocket> {
  return new Promise((resolve, reject) => {
    let stage: TargetStage = 'connect';
    let settled = false;
    const tcp = tcpConnect({ host: pin.address, port, family: pin.family });
    let tls: TLSSocket | undefined;
    /** The deadline of the stage in progress, connect or handshake, when the caller set one. */
    let stageTimer: NodeJS.Timeout | undefined;
    const expireAfter = (ms: number | undefined, what: string) => {
      clearTimeout(stageTimer);
      stageTimer =
        ms === undefined
          ? undefined
          : setTimeout(
              () => finish(Object.assign(new Error(`${what} timed out`), { code: 'ETIMEDOUT' })),
              ms,
            );
    };
    const finish = (err: unknown, socket?: TLSSocket) => {
      if (settled) return;
      settled = true;
      clearTimeout(stageTimer);
      signal.removeEventListener('abort', onAbort);
      if (socket) {
        // `onError` stays on both sockets as a no-op (settled): a late reset must not crash the process.
        resolve(socket);
        return;
      }
      tls?.destroy();
      tcp.destroy();
      reject(new HandshakeFailure(stage, err));
    };
    const onError = (err: unknown) => finish(err);
    const onAbort = () => finish(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    if (signal.aborted) return onAbort();

    tcp.on('error', onError);
    expireAfter(opts.connectTimeoutMs, 'connect');
    const startTls = () => {
      stage = 'tls handshake';
      expireAfter(opts.handshakeTimeoutMs, 'handshake');
      tls = tlsConnect({
        ...opts.tls,
        socket: opts.wrapSocket ? opts.wrapSocket(tcp) : tcp,
        // With a socket given, Node checks the certificate against servername, else `host`, else
        // "localhost"; `host` must be the address so a literal is verified against itself.
        host: pin.address,
        // No servername, no SNI (an address is never sent as SNI, RFC 6066 §3).
        ...(servername ? { servername } : {}),
        ALPNProtocols: opts.alpnProtocols ?? ['h2', 'http/1.1'],
        rejectUnauthorized: false,
        ...(opts.ca ? { ca: opts.ca } : {}),
      });
      tls.on('error', onError);
      tls.once('secureConnect', () => finish(undefined, tls));
      opts.onSocket?.(tls);
    };
    tcp.once('connect', () => {
      clearTimeout(stageTimer);
      if (!opts.beforeTls) return startTls();
      stage = 'starttls';
      opts.beforeTls(tcp, signal).then(() => {
        if (!settled) startTls();
      }, onError);
    });
  });
}
