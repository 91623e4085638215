/**
 * One observed TLS handshake: safeTlsConnect with a ClientHello that offers
 * everything (TLS 1.0 to 1.3, Node's cipher list at OpenSSL security level 0,
 * an OCSP status request), the server's bytes captured on the way, and the
 * socket read into plain data and closed before this returns. Features judge
 * the data (features/tls); only this module touches the socket.
 */
import { DEFAULT_CIPHERS, type TLSSocket } from 'node:tls';
import { createHandshakeCapture } from './handshake-capture.js';
import { type SafeTlsOptions, safeTlsConnect } from './safe-tls.js';

/**
 * `@SECLEVEL=0` lets OpenSSL 3 negotiate TLS 1.0/1.1 (their PRF and signatures use SHA-1/MD5) and accept
 * small keys, so they can be reported. TLS 1.3 suites are not governed by this list and stay Node's default.
 */
const OFFERED_CIPHERS = `${DEFAULT_CIPHERS}:@SECLEVEL=0`;

export interface ObservedHandshake {
  /** The address the connection went to. */
  address: string;
  /** Negotiated protocol as Node names it ("TLSv1.3"), "unknown" when Node cannot say. */
  protocol: string;
  cipher: { standardName: string; name: string };
  alpn: string | null;
  /** Node's getEphemeralKeyInfo(): `{type, name?, size?}`, or null/empty when not ephemeral. */
  ephemeralKey: { type?: string; name?: string; size?: number } | null;
  /** The stapled OCSP response; null when the server stapled none. */
  ocspResponse: Buffer | null;
  /** OpenSSL's verdict against the trust anchors (the connection itself does not enforce it). */
  authorized: boolean;
  authorizationError: string | null;
  /** Node's getPeerCertificate(true) issuer links as DER, leaf first. */
  peerChain: Buffer[];
  /** Every byte the server sent during the handshake; undefined when there was more than the capture holds. */
  serverBytes: Buffer | undefined;
  /** TLS 1.3 traffic secrets (NSS key log lines), to decrypt the server's encrypted flight. */
  keylog: readonly string[];
}

export type ObserveOptions = Omit<SafeTlsOptions, 'tls' | 'onSocket' | 'wrapSocket' | 'alpnProtocols'> & {
  /** ALPN to offer; default ['h2', 'http/1.1']. SMTP offers none. */
  alpnProtocols?: string[];
  /**
   * Runs on the established TLS socket before it is read and closed (SMTP:
   * EHLO again, QUIT). Its failure is its own to report: it never fails the
   * observation.
   */
  afterHandshake?: (socket: TLSSocket) => Promise<void>;
  /**
   * Narrows the offer (the TLS scan asks for one certificate type at a time): OpenSSL's
   * signature-algorithm list, and a cipher list that replaces the default one.
   */
  offer?: { sigalgs?: string; ciphers?: string };
};

/**
 * Connects to `host` (resolved and checked like every destination of src/net/), completes one
 * handshake and returns what was seen. Rejects as safeTlsConnect does (a 400 UnsafeTargetError,
 * the resolver's 502, a TargetError naming the stage).
 */
export async function observeTlsHandshake(host: string, opts: ObserveOptions): Promise<ObservedHandshake> {
  const capture = createHandshakeCapture();
  const { afterHandshake, offer, ...connect } = opts;
  const socket = await safeTlsConnect(host, {
    ...connect,
    tls: {
      minVersion: 'TLSv1',
      ciphers: offer?.ciphers ?? OFFERED_CIPHERS,
      ...(offer?.sigalgs ? { sigalgs: offer.sigalgs } : {}),
      requestOCSP: true,
    },
    onSocket: capture.onSocket,
    wrapSocket: capture.wrapSocket,
  });
  try {
    capture.stop();
    await afterHandshake?.(socket).catch(() => undefined);
    const cipher = socket.getCipher();
    return {
      address: capture.remoteAddress ?? socket.remoteAddress ?? '',
      protocol: socket.getProtocol() ?? 'unknown',
      cipher: { standardName: cipher.standardName, name: cipher.name },
      alpn: socket.alpnProtocol || null,
      ephemeralKey: socket.getEphemeralKeyInfo(),
      ocspResponse: capture.ocspResponse,
      authorized: socket.authorized,
      authorizationError: socket.authorizationError ? String(socket.authorizationError) : null,
      peerChain: peerCertificateChain(socket),
      serverBytes: capture.overflowed ? undefined : capture.serverBytes(),
      keylog: capture.keylog,
    };
  } finally {
    socket.destroy();
  }
}

/**
 * DER of Node's issuer links, leaf first. Node ends the list at a self-issued
 * certificate by pointing it at itself; the `seen` set also stops any other loop.
 */
function peerCertificateChain(socket: TLSSocket): Buffer[] {
  const out: Buffer[] = [];
  const seen = new Set<object>();
  let cert: { raw?: Buffer; issuerCertificate?: unknown } | undefined = socket.getPeerCertificate(true);
  while (cert?.raw && !seen.has(cert)) {
    seen.add(cert);
    out.push(cert.raw);
    cert = cert.issuerCertificate as typeof cert;
  }
  return out;
}
