/**
 * One raw TCP exchange with a user-named host: resolve and check it
 * (docs/architecture.md §3), connect to a checked address, write the
 * caller's bytes, read until the caller has what it needs, the server
 * closes, or the deadline passes, then close. The TLS scan sends its
 * hand-made ClientHellos through it (src/tls-scan/probe.ts): Node's TLS
 * cannot offer what the scan must, and the handshake is never completed.
 *
 *   const x = await tcpExchange('192.0.2.1', { port: 443, send, done: (got) => parsed(got) !== 'incomplete', ... });
 */
import { connect as tcpConnect } from 'node:net';
import type { Duplex } from 'node:stream';
import { AppError } from '../errors.js';
import { TargetError, UnsafeTargetError } from './errors.js';
import { type AddressResolver, assertAllowedPort, resolveTarget } from './resolve-target.js';

export interface TcpExchangeOptions {
  port: number;
  /** The ports this caller may use instead of ALLOWED_PORTS. */
  allowedPorts?: readonly number[];
  resolver: AddressResolver;
  allowCidrs: readonly string[];
  /**
   * A plaintext conversation before `send` (SMTP's banner, EHLO and STARTTLS), run on the
   * connected socket within the deadline; it must leave the socket paused at the first byte
   * that belongs to the exchange. Its failure rejects the exchange as a TargetError at the
   * 'starttls' stage.
   */
  prelude?: (socket: Duplex, signal: AbortSignal) => Promise<void>;
  /** What to write once connected (and after the prelude). */
  send: Buffer;
  /** Told every byte received so far after each read; true ends the exchange. */
  done: (received: Buffer) => boolean;
  /** Deadline for DNS, connect and reading together. */
  timeoutMs: number;
  signal?: AbortSignal;
  /** Stop reading past this many bytes (the exchange ends as if done). Default 64 KiB. */
  maxBytes?: number;
  param?: string;
}

export interface TcpExchange {
  received: Buffer;
  /** Why reading stopped: the caller was done, the server closed or reset, the deadline passed, the cap was hit. */
  end: 'done' | 'eof' | 'reset' | 'timeout' | 'cap';
  address: string;
  /** Milliseconds from the start: connected, first byte, end. */
  connectMs: number;
  firstByteMs: number | null;
  totalMs: number;
}

/**
 * Rejects with a 400 UnsafeTargetError before any connection for a refused
 * port or address, the resolver's 502 when DNS failed, a TargetError (stage
 * 'dns' or 'connect') when no address could be reached in time. Once
 * connected it resolves, whatever the server does.
 */
export async function tcpExchange(host: string, opts: TcpExchangeOptions): Promise<TcpExchange> {
  const param = opts.param ?? 'target';
  assertAllowedPort(opts.port, param, opts.allowedPorts);
  const started = performance.now();
  const deadline = AbortSignal.timeout(opts.timeoutMs);
  const signal = opts.signal ? AbortSignal.any([deadline, opts.signal]) : deadline;
  let target: Awaited<ReturnType<typeof resolveTarget>>;
  try {
    target = await resolveTarget(host, {
      resolver: opts.resolver,
      allowCidrs: opts.allowCidrs,
      signal,
      param,
    });
  } catch (err) {
    if (err instanceof UnsafeTargetError || err instanceof AppError) throw err;
    const kind = deadline.aborted ? 'timeout' : 'network';
    throw new TargetError(kind, 'dns', `${host}: DNS failed`, { cause: err });
  }
  let lastError: unknown;
  for (const pin of target.addresses) {
    if (signal.aborted) break;
    try {
      return await exchangeWith(pin.address, pin.family, opts, signal, started);
    } catch (err) {
      // The server answered, and refused the conversation: another address would not be asked.
      if (err instanceof TargetError) throw err;
      lastError = err;
    }
  }
  const kind = deadline.aborted ? 'timeout' : 'network';
  const code = (lastError as { code?: unknown } | undefined)?.code;
  const why = deadline.aborted
    ? `timeout after ${opts.timeoutMs} ms`
    : typeof code === 'string'
      ? code
      : 'failed';
  throw new TargetError(kind, 'connect', `${host}: connect ${why}`, { cause: lastError });
}

/** One address: rejects only when the TCP connection could not be made. */
function exchangeWith(
  address: string,
  family: 4 | 6,
  opts: TcpExchangeOptions,
  signal: AbortSignal,
  started: number,
): Promise<TcpExchange> {
  const maxBytes = opts.maxBytes ?? 64 * 1024;
  return new Promise((resolve, reject) => {
    const socket = tcpConnect({ host: address, port: opts.port, family });
    const chunks: Buffer[] = [];
    let size = 0;
    let connectMs: number | null = null;
    let firstByteMs: number | null = null;
    let settled = false;
    /** While the prelude talks, its own reader answers for a close or the deadline. */
    let inPrelude = false;
    const since = () => Math.round(performance.now() - started);
    const finish = (end: TcpExchange['end'] | Error) => {
      if (settled) return;
      settled = true;
      signal.removeEventListener('abort', onAbort);
      // Reset rather than FIN: the handshake is abandoned on purpose, and no TIME_WAIT is left here.
      socket.resetAndDestroy();
      if (end instanceof Error) return reject(end);
      const received = Buffer.concat(chunks, size);
      resolve({ received, end, address, connectMs: connectMs ?? since(), firstByteMs, totalMs: since() });
    };
    const onAbort = () => {
      if (inPrelude) return;
      finish(connectMs === null ? new Error('aborted before connect') : 'timeout');
    };
    signal.addEventListener('abort', onAbort, { once: true });
    if (signal.aborted) return onAbort();
    socket.on('error', (err) => {
      if (!inPrelude) finish(connectMs === null ? err : 'reset');
    });
    const onData = (chunk: Buffer) => {
      firstByteMs ??= since();
      chunks.push(chunk);
      size += chunk.length;
      const received = Buffer.concat(chunks, size);
      if (opts.done(received)) finish('done');
      else if (size >= maxBytes) finish('cap');
    };
    const exchange = () => {
      inPrelude = false;
      if (settled) return;
      socket.on('data', onData);
      socket.resume();
      socket.write(opts.send);
    };
    socket.once('connect', () => {
      connectMs = since();
      if (!opts.prelude) return exchange();
      inPrelude = true;
      opts.prelude(socket, signal).then(exchange, (err: unknown) => {
        inPrelude = false;
        const kind = signal.aborted ? 'timeout' : 'bad_response';
        finish(new TargetError(kind, 'starttls', `${address}: ${(err as Error).message}`, { cause: err }));
      });
    });
    socket.once('end', () => inPrelude || finish('eof'));
    socket.once('close', () => {
      if (!inPrelude) finish(connectMs === null ? new Error('closed before connect') : 'eof');
    });
  });
}
