/**
 * One probe of a TLS scan: send one hand-made hello to one address and read
 * the server's first answer (ServerHello, HelloRetryRequest, alert, SSLv2
 * SERVER-HELLO), never completing the handshake. The connection is the
 * outbound client's (ctx.outbound.tcpExchange: the target checked, one
 * live-probe slot held for the exchange; docs/architecture.md §3).
 *
 *   const hello = buildClientHello({ version: 'TLSv1.2', cipherSuites, serverName });
 *   const result = await probeHello(ctx.outbound, { host: '192.0.2.1', port: 443 }, hello.bytes, { timeoutMs: 5000 });
 */
import type { TcpExchange, TcpExchangeOptions } from '../net/tcp-exchange.js';
import { parseServerReply, type ServerReply } from './server-hello.js';

/** The part of the outbound client a probe needs (ctx.outbound). */
export interface ProbeConnector {
  tcpExchange(
    host: string,
    opts: Omit<TcpExchangeOptions, 'resolver' | 'allowCidrs' | 'timeoutMs'> & { timeoutMs?: number },
  ): Promise<TcpExchange>;
}

export interface ProbeTarget {
  /** An address the scan resolved and checked once, or a name (resolved and checked again). */
  host: string;
  port: number;
  /** The ports this caller may use (SMTP: [25]). */
  allowedPorts?: readonly number[];
}

export interface ProbeResult {
  /**
   * What the server answered. `incomplete` means it stopped short: see `end` (a close without
   * a word is how many servers refuse a protocol they do not speak).
   */
  reply: ServerReply;
  end: TcpExchange['end'];
  address: string;
  bytesReceived: number;
  /** Milliseconds from the start of the probe. */
  timings: { connectMs: number; firstByteMs: number | null; totalMs: number };
}

/** A server's first flight ends the read once its first answer is whole. */
const answered = (received: Buffer) => parseServerReply(received).kind !== 'incomplete';

const SERVER_HELLO_DONE = 14;
/**
 * Or, to see the Certificate, CertificateStatus and ServerKeyExchange of TLS ≤ 1.2 (plaintext
 * there, RFC 5246 §7.3), once the ServerHelloDone is in; a TLS 1.3 flight past the ServerHello is
 * encrypted, so its ServerHello ends the read.
 */
const flightDone = (received: Buffer) => {
  const reply = parseServerReply(received);
  if (reply.kind === 'incomplete') return false;
  if (reply.kind !== 'server_hello' || reply.version === 'TLSv1.3') return true;
  return reply.following.some((m) => m.type === SERVER_HELLO_DONE);
};

/**
 * Sends `hello` and reads until the first answer is whole, the server closes,
 * or `timeoutMs` passes. Rejects only when the target may not be contacted
 * (400) or could not be connected to (TargetError); anything the server does
 * once connected is a result.
 */
export async function probeHello(
  connector: ProbeConnector,
  target: ProbeTarget,
  hello: Buffer,
  opts: {
    timeoutMs: number;
    signal?: AbortSignal;
    /** `answer` (default): the first answer; `flight`: a TLS ≤ 1.2 server's whole first flight. */
    until?: 'answer' | 'flight';
    /** SMTP's banner, EHLO and STARTTLS before the hello (net/smtp-starttls.ts). */
    prelude?: TcpExchangeOptions['prelude'];
  },
): Promise<ProbeResult> {
  const exchange = await connector.tcpExchange(target.host, {
    port: target.port,
    ...(target.allowedPorts ? { allowedPorts: target.allowedPorts } : {}),
    send: hello,
    done: opts.until === 'flight' ? flightDone : answered,
    ...(opts.prelude ? { prelude: opts.prelude } : {}),
    timeoutMs: opts.timeoutMs,
    ...(opts.signal ? { signal: opts.signal } : {}),
  });
  return {
    reply: parseServerReply(exchange.received),
    end: exchange.end,
    address: exchange.address,
    bytesReceived: exchange.received.length,
    timings: { connectMs: exchange.connectMs, firstByteMs: exchange.firstByteMs, totalMs: exchange.totalMs },
  };
}
