/**
 * DNS over TCP (RFC 1035 §4.2.2, RFC 7766) to `tcp://host:port`: also the
 * retry path the UDP transport takes when an answer comes back truncated.
 */
import { connect, type Socket } from 'node:net';
import type { ProviderInfo } from '../types.js';
import { type ResolverEndpoint, resolverInfo, type TransportIdentity } from './endpoint.js';
import { DnsStreamSession } from './stream.js';
import type { DnsAnswer, DnsRecordType, DnsTransportProvider } from './types.js';

export interface StreamTransportOptions extends TransportIdentity {
  /** Give up on connecting after this long even if the caller's signal allows more. Default 10 s. */
  connectTimeoutMs?: number;
  /** Close a pooled connection after this long without queries. Default 10 s. */
  idleTimeoutMs?: number;
}

export class TcpDnsProvider implements DnsTransportProvider {
  readonly transport = 'tcp' as const;
  readonly info: ProviderInfo;
  readonly #session: DnsStreamSession;

  constructor(endpoint: ResolverEndpoint, opts: StreamTransportOptions = {}) {
    this.info = resolverInfo(endpoint, opts.id);
    this.#session = new DnsStreamSession({
      url: endpoint.url,
      idleTimeoutMs: opts.idleTimeoutMs,
      connect: () => connectTcp(endpoint.host, endpoint.port, opts.connectTimeoutMs ?? 10_000),
    });
  }

  query(name: string, type: DnsRecordType, signal: AbortSignal): Promise<DnsAnswer> {
    return this.#session.query({ name, type }, signal);
  }

  close(): Promise<void> {
    return this.#session.close();
  }
}

function connectTcp(host: string, port: number, timeoutMs: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host, port, timeout: timeoutMs });
    const fail = (err: Error) => {
      socket.destroy();
      reject(err);
    };
    socket.once('timeout', () => fail(Object.assign(new Error('connect timed out'), { code: 'ETIMEDOUT' })));
    socket.once('error', fail);
    socket.once('connect', () => {
      socket.removeListener('error', fail);
      socket.removeAllListeners('timeout');
      // The connect timeout doubles as an inactivity timeout; the session manages idleness itself.
      socket.setTimeout(0);
      resolve(socket);
    });
  });
}
