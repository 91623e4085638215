/**
 * Records what GET /api/tls needs from one live handshake beyond Node's own
 * view (features/tls/handshake-records.ts reads the Certificate message out of
 * it): the raw bytes the server sends, the key log (TLS 1.3 secrets) and a
 * stapled OCSP response. It plugs into safeTlsConnect through `wrapSocket` and
 * `onSocket`, so the connection itself stays the one safe path of src/net/.
 *
 * The tap is a pass-through Duplex between the TCP socket and TLS: Node
 * reads a native socket from C++, out of JavaScript's sight, so the only
 * way to see the records is to hand TLS a JavaScript stream instead (Node
 * wraps it in its JSStreamSocket). It costs a copy per chunk, which a
 * one-handshake diagnostic can afford.
 */
import type { Socket } from 'node:net';
import { Duplex } from 'node:stream';
import type { TLSSocket } from 'node:tls';

/** More than any real certificate flight (a few KiB to ~20 KiB); past it, recording stops. */
export const MAX_CAPTURED_BYTES = 256 * 1024;

export interface HandshakeCapture {
  /** For safeTlsConnect's `wrapSocket`. */
  readonly wrapSocket: (tcp: Socket) => Duplex;
  /** For safeTlsConnect's `onSocket`: listens for key log lines and the OCSP response. */
  readonly onSocket: (socket: TLSSocket) => void;
  /** Stops recording; call once the handshake is done. */
  stop(): void;
  /** The bytes the server sent, from the first one. */
  serverBytes(): Buffer;
  /** True when more than MAX_CAPTURED_BYTES arrived before stop(): serverBytes() is cut short. */
  readonly overflowed: boolean;
  readonly keylog: readonly string[];
  /** The stapled OCSP response; null when the server stapled none. */
  readonly ocspResponse: Buffer | null;
  /** The address the TCP connection went to. */
  readonly remoteAddress: string | undefined;
}

export function createHandshakeCapture(maxBytes = MAX_CAPTURED_BYTES): HandshakeCapture {
  let chunks: Buffer[] = [];
  let size = 0;
  let recording = true;
  const keylog: string[] = [];
  const state = {
    overflowed: false,
    ocspResponse: null as Buffer | null,
    remoteAddress: undefined as string | undefined,
  };

  const record = (chunk: Buffer) => {
    if (!recording) return;
    if (size + chunk.length > maxBytes) {
      state.overflowed = true;
      recording = false;
      return;
    }
    chunks.push(chunk);
    size += chunk.length;
  };

  return {
    wrapSocket(tcp) {
      // safeTlsConnect wraps once per connected address; only the last connection counts.
      chunks = [];
      size = 0;
      recording = true;
      state.overflowed = false;
      state.remoteAddress = tcp.remoteAddress;
      return tapInbound(tcp, record);
    },
    onSocket(socket) {
      socket.on('keylog', (line: Buffer) => {
        if (recording) keylog.push(line.toString('latin1'));
      });
      socket.on('OCSPResponse', (response: Buffer | null) => {
        state.ocspResponse = response && response.length > 0 ? response : null;
      });
    },
    stop() {
      recording = false;
    },
    serverBytes: () => Buffer.concat(chunks, size),
    get overflowed() {
      return state.overflowed;
    },
    keylog,
    get ocspResponse() {
      return state.ocspResponse;
    },
    get remoteAddress() {
      return state.remoteAddress;
    },
  };
}

/**
 * A Duplex that forwards writes to `tcp` and pushes what `tcp` receives,
 * showing each received chunk to `onData` first. Back-pressure is honoured
 * both ways; destroying either side destroys the other.
 */
export function tapInbound(tcp: Socket, onData: (chunk: Buffer) => void): Duplex {
  const tap = new Duplex({
    read() {
      tcp.resume();
    },
    write(chunk: Buffer, _encoding, callback) {
      tcp.write(chunk, (err) => callback(err ?? null));
    },
    final(callback) {
      tcp.end(() => callback());
    },
    destroy(err, callback) {
      tcp.destroy();
      callback(err);
    },
  });
  tcp.on('data', (chunk: Buffer) => {
    onData(chunk);
    if (!tap.push(chunk)) tcp.pause();
  });
  tcp.once('end', () => tap.push(null));
  // A reset reaches TLS as an error; a clean close as end of stream, after the data before it was read.
  tcp.once('error', (err) => tap.destroy(err));
  return tap;
}
