/**
 * What a server answers a hand-made ClientHello with, read from the bytes it
 * sent so far: a ServerHello, a HelloRetryRequest, an alert, an SSLv2
 * SERVER-HELLO or ERROR, or something that is no TLS at all. Pure: the
 * caller keeps every byte received and asks again after each read, so a
 * record split across TCP reads is `incomplete` until it is whole, and
 * handshake messages split across records or sharing one are reassembled
 * (RFC 8446 §5.1).
 *
 * Layouts: RFC 8446 §4.1.3 (ServerHello, HelloRetryRequest), §4.2 (its
 * extensions), §6 (alerts); RFC 5246 §7.4.1.3 and §6.2.1; the SSLv2 draft
 * (draft-hickman-netscape-ssl-00) §2.6 for SERVER-HELLO and ERROR.
 */
import { PROTOCOL_VERSIONS, type ProtocolName } from './client-hello.js';

export type ServerReply =
  | ({ kind: 'server_hello' } & ServerHello)
  | ({ kind: 'hello_retry_request' } & HelloRetryRequest)
  | ({ kind: 'alert' } & Alert)
  | ({ kind: 'sslv2_server_hello' } & Sslv2ServerHello)
  | { kind: 'sslv2_error'; code: number }
  /** Not a whole answer yet: read more (or, at end of stream, the server stopped short). */
  | { kind: 'incomplete'; received: number }
  /** Bytes no TLS server sends first: an HTTP answer to TLS, a banner, noise. */
  | { kind: 'garbage'; reason: string; head: string };

export interface ServerHello {
  /** The negotiated version: supported_versions' when present (RFC 8446 §4.2.1), else legacy_version. */
  version: ProtocolName | null;
  versionCode: number;
  legacyVersion: number;
  random: Buffer;
  sessionId: Buffer;
  cipherSuite: number;
  compressionMethod: number;
  extensions: ServerHelloExtensions;
  /** RFC 8446 §4.1.3: a TLS 1.3 server answering a lower version marks its random; a MitM stripping 1.3 shows. */
  downgradeSentinel: 'TLSv1.2' | 'TLSv1.1' | null;
  /** The complete handshake messages after the ServerHello in the bytes so far (Certificate, ServerKeyExchange, ...). */
  following: HandshakeMessage[];
}

export interface ServerHelloExtensions {
  /** Every extension type, in the order sent. */
  types: number[];
  /** key_share's group (TLS 1.3). */
  keyShareGroup: number | null;
  /** renegotiation_info present (RFC 5746 §3.6): secure renegotiation supported. */
  secureRenegotiation: boolean;
  alpn: string | null;
  extendedMasterSecret: boolean;
  sessionTicket: boolean;
  /** status_request acknowledged (TLS ≤ 1.2: a CertificateStatus message follows). */
  statusRequest: boolean;
  /** heartbeat's mode (RFC 6520 §2: 1 peer_allowed_to_send, 2 peer_not_allowed_to_send). */
  heartbeat: number | null;
  ecPointFormats: number[] | null;
}

export interface HelloRetryRequest {
  version: ProtocolName | null;
  cipherSuite: number;
  /** The group the server asks a share for (RFC 8446 §4.2.8). */
  selectedGroup: number | null;
  extensions: number[];
}

export interface Alert {
  /** 1 warning, 2 fatal (RFC 5246 §7.2). */
  level: number;
  description: number;
  name: string;
}

export interface Sslv2ServerHello {
  sessionIdHit: boolean;
  certificateType: number;
  version: number;
  certificate: Buffer;
  cipherSpecs: number[];
  connectionId: Buffer;
}

export interface HandshakeMessage {
  type: number;
  body: Buffer;
}

/** SHA-256("HelloRetryRequest"): a ServerHello with this random is a HelloRetryRequest (RFC 8446 §4.1.3). */
export const HELLO_RETRY_REQUEST_RANDOM = Buffer.from(
  'cf21ad74e59a6111be1d8c021e65b891c2a211167abb8c5e079e09e2c8a8339c',
  'hex',
);
const DOWNGRADE_PREFIX = Buffer.from('444f574e475244', 'hex'); // "DOWNGRD"

/** AlertDescription names (RFC 8446 §6, RFC 5246 §7.2, RFC 6101 §5.4.2, RFC 7507, RFC 7301). */
export const ALERT_NAMES: Readonly<Record<number, string>> = {
  0: 'close_notify',
  10: 'unexpected_message',
  20: 'bad_record_mac',
  21: 'decryption_failed',
  22: 'record_overflow',
  30: 'decompression_failure',
  40: 'handshake_failure',
  41: 'no_certificate',
  42: 'bad_certificate',
  43: 'unsupported_certificate',
  44: 'certificate_revoked',
  45: 'certificate_expired',
  46: 'certificate_unknown',
  47: 'illegal_parameter',
  48: 'unknown_ca',
  49: 'access_denied',
  50: 'decode_error',
  51: 'decrypt_error',
  60: 'export_restriction',
  70: 'protocol_version',
  71: 'insufficient_security',
  80: 'internal_error',
  86: 'inappropriate_fallback',
  90: 'user_canceled',
  100: 'no_renegotiation',
  109: 'missing_extension',
  110: 'unsupported_extension',
  111: 'certificate_unobtainable',
  112: 'unrecognized_name',
  113: 'bad_certificate_status_response',
  114: 'bad_certificate_hash_value',
  115: 'unknown_psk_identity',
  116: 'certificate_required',
  120: 'no_application_protocol',
};

const ALERT = 21;
const HANDSHAKE = 22;
const SERVER_HELLO = 2;
/** RFC 5246 §6.2.3: 2^14 + 2048 at most, for any protocol version a scan meets. */
const MAX_RECORD = 2 ** 14 + 2048;

/** Reads the server's first answer from every byte it has sent so far. */
export function parseServerReply(bytes: Buffer): ServerReply {
  if (bytes.length === 0) return { kind: 'incomplete', received: 0 };
  const first = bytes[0]!;
  if (first & 0x80) return parseSslv2(bytes);
  if (first !== HANDSHAKE && first !== ALERT) return garbage(bytes, `record type ${first}`);
  if (bytes.length < 5) return { kind: 'incomplete', received: bytes.length };

  let handshake = Buffer.alloc(0);
  let offset = 0;
  while (offset + 5 <= bytes.length) {
    const type = bytes[offset]!;
    const major = bytes[offset + 1]!;
    const length = bytes.readUInt16BE(offset + 3);
    if (major !== 3) return garbage(bytes, `record version ${major}.${bytes[offset + 2]}`);
    if (length > MAX_RECORD) return garbage(bytes, `record of ${length} bytes`);
    if (offset + 5 + length > bytes.length) break;
    const fragment = bytes.subarray(offset + 5, offset + 5 + length);
    offset += 5 + length;
    if (type === ALERT) {
      // An alert before the ServerHello is the answer; one after it ends the flight we read.
      if (handshake.length === 0) return parseAlert(fragment, bytes);
      break;
    }
    if (type !== HANDSHAKE) break;
    handshake = Buffer.concat([handshake, fragment]);
  }
  const messages = splitHandshake(handshake);
  const hello = messages[0];
  if (!hello) return { kind: 'incomplete', received: bytes.length };
  if (hello.type !== SERVER_HELLO)
    return garbage(bytes, `handshake message ${hello.type} before ServerHello`);
  try {
    return parseServerHello(hello.body, messages.slice(1));
  } catch (err) {
    return garbage(bytes, err instanceof Error ? err.message : String(err));
  }
}

function parseAlert(fragment: Buffer, bytes: Buffer): ServerReply {
  if (fragment.length < 2) return garbage(bytes, 'alert record shorter than 2 bytes');
  const level = fragment[0]!;
  const description = fragment[1]!;
  return { kind: 'alert', level, description, name: ALERT_NAMES[description] ?? `alert_${description}` };
}

/** The complete handshake messages in a reassembled stream. */
function splitHandshake(stream: Buffer): HandshakeMessage[] {
  const out: HandshakeMessage[] = [];
  let offset = 0;
  while (offset + 4 <= stream.length) {
    const length = stream.readUIntBE(offset + 1, 3);
    if (offset + 4 + length > stream.length) break;
    out.push({ type: stream[offset]!, body: stream.subarray(offset + 4, offset + 4 + length) });
    offset += 4 + length;
  }
  return out;
}

function parseServerHello(body: Buffer, following: HandshakeMessage[]): ServerReply {
  const r = new Reader(body, 'ServerHello');
  const legacyVersion = r.uint(2);
  const random = r.take(32);
  const sessionId = r.take(r.uint(1));
  const cipherSuite = r.uint(2);
  const compressionMethod = r.uint(1);
  const raw: { type: number; data: Buffer }[] = [];
  // SSLv3 and some TLS 1.0 servers send no extensions block at all (RFC 5246 §7.4.1.3).
  if (!r.done) {
    const list = new Reader(r.take(r.uint(2)), 'ServerHello extensions');
    while (!list.done) raw.push({ type: list.uint(2), data: list.take(list.uint(2)) });
  }
  const find = (type: number) => raw.find((e) => e.type === type)?.data;
  const supported = find(43);
  const versionCode = supported && supported.length >= 2 ? supported.readUInt16BE(0) : legacyVersion;
  const version = protocolName(versionCode);

  if (random.equals(HELLO_RETRY_REQUEST_RANDOM)) {
    const share = find(51);
    return {
      kind: 'hello_retry_request',
      version,
      cipherSuite,
      selectedGroup: share && share.length >= 2 ? share.readUInt16BE(0) : null,
      extensions: raw.map((e) => e.type),
    };
  }
  const share = find(51);
  const alpn = find(16);
  const heartbeat = find(15);
  const points = find(11);
  const tail = random.subarray(24);
  const downgrade =
    tail.subarray(0, 7).equals(DOWNGRADE_PREFIX) && (tail[7] === 1 || tail[7] === 0)
      ? tail[7] === 1
        ? 'TLSv1.2'
        : 'TLSv1.1'
      : null;
  return {
    kind: 'server_hello',
    version,
    versionCode,
    legacyVersion,
    random,
    sessionId,
    cipherSuite,
    compressionMethod,
    downgradeSentinel: downgrade,
    following,
    extensions: {
      types: raw.map((e) => e.type),
      keyShareGroup: share && share.length >= 2 ? share.readUInt16BE(0) : null,
      secureRenegotiation: find(0xff01) !== undefined,
      // ProtocolNameList of exactly one name (RFC 7301 §3.1).
      alpn: alpn && alpn.length >= 3 ? alpn.subarray(3, 3 + alpn[2]!).toString('latin1') : null,
      extendedMasterSecret: find(23) !== undefined,
      sessionTicket: find(35) !== undefined,
      statusRequest: find(5) !== undefined,
      heartbeat: heartbeat && heartbeat.length >= 1 ? heartbeat[0]! : null,
      ecPointFormats: points && points.length >= 1 ? [...points.subarray(1, 1 + points[0]!)] : null,
    },
  };
}

/**
 * SSLv2 (draft §2.6): a two-byte header with the top bit set (no padding) whose
 * first body byte is MSG-SERVER-HELLO (4) or MSG-ERROR (0).
 */
function parseSslv2(bytes: Buffer): ServerReply {
  if (bytes.length < 3) return { kind: 'incomplete', received: bytes.length };
  const length = bytes.readUInt16BE(0) & 0x7fff;
  if (bytes.length < 2 + length) return { kind: 'incomplete', received: bytes.length };
  const body = bytes.subarray(2, 2 + length);
  try {
    const r = new Reader(body, 'SSLv2 message');
    const type = r.uint(1);
    if (type === 0) return { kind: 'sslv2_error', code: r.uint(2) };
    if (type !== 4) return garbage(bytes, `SSLv2 message ${type}`);
    const sessionIdHit = r.uint(1) !== 0;
    const certificateType = r.uint(1);
    const version = r.uint(2);
    const certLength = r.uint(2);
    const specsLength = r.uint(2);
    const connectionIdLength = r.uint(2);
    const certificate = Buffer.from(r.take(certLength));
    const specs = r.take(specsLength);
    const cipherSpecs: number[] = [];
    for (let i = 0; i + 3 <= specs.length; i += 3) cipherSpecs.push(specs.readUIntBE(i, 3));
    const connectionId = Buffer.from(r.take(connectionIdLength));
    return {
      kind: 'sslv2_server_hello',
      sessionIdHit,
      certificateType,
      version,
      certificate,
      cipherSpecs,
      connectionId,
    };
  } catch (err) {
    return garbage(bytes, err instanceof Error ? err.message : String(err));
  }
}

/** The name of a wire version, or null for one no protocol uses. */
export function protocolName(code: number): ProtocolName | null {
  const entry = Object.entries(PROTOCOL_VERSIONS).find(([, value]) => value === code);
  return entry ? (entry[0] as ProtocolName) : null;
}

function garbage(bytes: Buffer, reason: string): ServerReply {
  // Printable head, so an HTTP or SMTP answer to TLS says what it is.
  const head = bytes
    .subarray(0, 32)
    .toString('latin1')
    .replace(/[^\x20-\x7e]/g, '.');
  return { kind: 'garbage', reason, head };
}

class Reader {
  #offset = 0;
  constructor(
    private readonly buf: Buffer,
    private readonly what: string,
  ) {}

  get done(): boolean {
    return this.#offset >= this.buf.length;
  }

  uint(bytes: 1 | 2 | 3): number {
    const value = this.buf.readUIntBE(this.#check(bytes), bytes);
    this.#offset += bytes;
    return value;
  }

  take(length: number): Buffer {
    const start = this.#check(length);
    this.#offset += length;
    return this.buf.subarray(start, start + length);
  }

  #check(length: number): number {
    if (this.#offset + length > this.buf.length) throw new Error(`truncated ${this.what}`);
    return this.#offset;
  }
}
