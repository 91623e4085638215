/**
 * DNS over TLS (RFC 7858) to `tls://host:port` (port 853 by default). The
 * certificate must be valid for the host in the URL: its name goes out as SNI
 * and is checked against the certificate; an IP literal is checked against the
 * certificate's IP SANs (RFC 8310 §8.1 strict privacy profile, no fallback to
 * cleartext).
 */
import { isIP } from 'node:net';
import { connect, type TLSSocket } from 'node:tls';
import type { ProviderInfo } from '../types.js';
import { type ResolverEndpoint, resolverInfo } from './endpoint.js';
import { DnsStreamSession } from './stream.js';
import type { StreamTransportOptions } from './tcp.js';
import type { DnsAnswer, DnsRecordType, DnsTransportProvider } from './types.js';

export interface TlsTransportOptions extends StreamTransportOptions {
  /** Trust anchors (PEM) replacing the system store, for tests against a private CA. */
  ca?: string | string[];
}

export class TlsDnsProvider implements DnsTransportProvider {
  readonly transport = 'dot' as const;
  readonly info: ProviderInfo;
  readonly #session: DnsStreamSession;

  constructor(endpoint: ResolverEndpoint, opts: TlsTransportOptions = {}) {
    this.info = resolverInfo(endpoint, opts.id);
    this.#session = new DnsStreamSession({
      url: endpoint.url,
      idleTimeoutMs: opts.idleTimeoutMs,
      connect: () => connectTls(endpoint.host, endpoint.port, opts.ca, opts.connectTimeoutMs ?? 10_000),
    });
  }

  query(name: string, type: DnsRecordType, signal: AbortSignal): Promise<DnsAnswer> {
    return this.#session.query({ name, type }, signal);
  }

  close(): Promise<void> {
    return this.#session.close();
  }
}

function connectTls(
  host: string,
  port: number,
  ca: string | string[] | undefined,
  timeoutMs: number,
): Promise<TLSSocket> {
  return new Promise((resolve, reject) => {
    const socket = connect({
      host,
      port,
      // SNI must not carry an IP literal (RFC 6066 §3); verification still checks IP SANs.
      servername: isIP(host) === 0 ? host : undefined,
      ca,
      timeout: timeoutMs,
    });
    const fail = (err: Error) => {
      socket.destroy();
      reject(err);
    };
    socket.once('timeout', () =>
      fail(Object.assign(new Error('TLS connect timed out'), { code: 'ETIMEDOUT' })),
    );
    socket.once('error', fail);
    socket.once('secureConnect', () => {
      socket.removeListener('error', fail);
      socket.removeAllListeners('timeout');
      socket.setTimeout(0);
      resolve(socket);
    });
  });
}
