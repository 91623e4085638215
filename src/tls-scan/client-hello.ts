/**
 * Hand-made ClientHellos: the scan must offer what Node's OpenSSL will not
 * (SSLv3, export and RC4 suites, groups without a key share, any order), so
 * the bytes are written here, field by field, and the handshake is never
 * completed. Pure apart from the randomness node:crypto gives.
 *
 * Layouts: RFC 8446 §4.1.2 (ClientHello), §4.2 (extensions), RFC 5246
 * §7.4.1.2 and §6.2.1 (record); the extensions' own RFCs are cited where
 * each is written. SSLv2's CLIENT-HELLO has its own format (the SSLv2 draft,
 * draft-hickman-netscape-ssl-00 §2.5; RFC 6101 App. E.2).
 */
import { createECDH, generateKeyPairSync, randomBytes } from 'node:crypto';

/** TLS versions on the wire (RFC 8446 §4.1.2, RFC 6101 §5.2.1 for SSLv3). */
export const PROTOCOL_VERSIONS = {
  SSLv3: 0x0300,
  TLSv1: 0x0301,
  'TLSv1.1': 0x0302,
  'TLSv1.2': 0x0303,
  'TLSv1.3': 0x0304,
} as const;
export type ProtocolName = keyof typeof PROTOCOL_VERSIONS;

/** NamedGroup code points (IANA TLS Supported Groups; RFC 8446 §4.2.7, RFC 7919, draft-ietf-tls-ecdhe-mlkem). */
export const NAMED_GROUPS = {
  secp256r1: 23,
  secp384r1: 24,
  secp521r1: 25,
  x25519: 29,
  x448: 30,
  ffdhe2048: 256,
  ffdhe3072: 257,
  ffdhe4096: 258,
  ffdhe6144: 259,
  ffdhe8192: 260,
  SecP256r1MLKEM768: 0x11eb,
  X25519MLKEM768: 0x11ec,
  SecP384r1MLKEM1024: 0x11ed,
} as const;
export type GroupName = keyof typeof NAMED_GROUPS;

/** The groups a key share can be made for here; the others are offered without one (a HelloRetryRequest tells). */
export type ShareableGroup = 'x25519' | 'x448' | 'secp256r1' | 'secp384r1' | 'secp521r1';

/** Extension types (IANA TLS ExtensionType Values). */
export const EXTENSION = {
  server_name: 0,
  status_request: 5,
  supported_groups: 10,
  ec_point_formats: 11,
  signature_algorithms: 13,
  heartbeat: 15,
  alpn: 16,
  padding: 21,
  extended_master_secret: 23,
  session_ticket: 35,
  supported_versions: 43,
  key_share: 51,
  renegotiation_info: 0xff01,
} as const;

/** Every SignatureScheme a server might need to sign with (RFC 8446 §4.2.3; the SHA-1/SHA-224 and DSA ones of RFC 5246 §7.4.1.4.1). */
export const DEFAULT_SIGNATURE_ALGORITHMS: readonly number[] = [
  0x0403, 0x0503, 0x0603, 0x0807, 0x0808, 0x0804, 0x0805, 0x0806, 0x0809, 0x080a, 0x080b, 0x0401, 0x0501,
  0x0601, 0x0303, 0x0301, 0x0302, 0x0203, 0x0201, 0x0202,
];

export interface ClientHelloOptions {
  /** The highest version offered. TLSv1.3 is offered through supported_versions (RFC 8446 §4.2.1). */
  version: ProtocolName;
  /** The versions listed in supported_versions, highest first; default: `version` alone, with TLS 1.3. */
  supportedVersions?: readonly ProtocolName[];
  /** Code points in preference order; SCSVs (0x00ff, 0x5600) go here too. */
  cipherSuites: readonly number[];
  /** SNI host name (RFC 6066 §3); none for an IP literal. */
  serverName?: string;
  /** supported_groups (RFC 8422 §5.1.1, RFC 8446 §4.2.7); default x25519, secp256r1, secp384r1. */
  groups?: readonly number[];
  /** The groups that get a key share (TLS 1.3); default x25519 when offered. Must be among `groups`. */
  keyShares?: readonly ShareableGroup[];
  signatureAlgorithms?: readonly number[];
  /** ALPN protocol names (RFC 7301). */
  alpn?: readonly string[];
  /** Default [0] (null); 1 is DEFLATE (RFC 3749), offered to see whether a server accepts compression. */
  compressionMethods?: readonly number[];
  /** Offer no extensions at all (an SSLv3 hello, as SSLv3 clients sent it). */
  noExtensions?: boolean;
  /** Each default true, except heartbeat and statusRequest (false). */
  statusRequest?: boolean;
  extendedMasterSecret?: boolean;
  sessionTicket?: boolean;
  renegotiationInfo?: boolean;
  heartbeat?: boolean;
  /** Fixed values for tests; default random. */
  random?: Buffer;
  sessionId?: Buffer;
}

export interface BuiltClientHello {
  /** The whole TLS record (or records), ready to write. */
  bytes: Buffer;
  random: Buffer;
  /** The groups a share was sent for. */
  keyShareGroups: number[];
}

const HANDSHAKE_RECORD = 22;
const CLIENT_HELLO = 1;
const MAX_FRAGMENT = 2 ** 14;

/** A ClientHello in TLS records (RFC 8446 §4.1.2). */
export function buildClientHello(opts: ClientHelloOptions): BuiltClientHello {
  const random = opts.random ?? randomBytes(32);
  if (random.length !== 32) throw new RangeError('random must be 32 bytes');
  const tls13 = opts.version === 'TLSv1.3';
  // A TLS 1.3 client sends a 32-byte legacy session id (RFC 8446 §D.4, middlebox compatibility).
  const sessionId = opts.sessionId ?? (tls13 ? randomBytes(32) : Buffer.alloc(0));
  // legacy_version: at most TLS 1.2; 1.3 is offered in supported_versions (RFC 8446 §4.1.2).
  const legacyVersion = Math.min(PROTOCOL_VERSIONS[opts.version], PROTOCOL_VERSIONS['TLSv1.2']);

  const suites = u16s(opts.cipherSuites);
  const keyShareGroups: number[] = [];
  const extensions = opts.noExtensions ? undefined : buildExtensions(opts, tls13, keyShareGroups);

  const parts = [
    u16(legacyVersion),
    random,
    vec(1, sessionId),
    vec(2, suites),
    vec(1, Buffer.from(opts.compressionMethods ?? [0])),
  ];
  let body = Buffer.concat(parts);
  if (extensions) {
    let ext = Buffer.concat(extensions);
    // Some servers (F5 BIG-IP) hang on a ClientHello of 256-511 bytes; RFC 7685 §4 pads past it.
    const helloLength = 4 + body.length + 2 + ext.length;
    if (helloLength >= 256 && helloLength < 512) {
      const pad = Math.max(512 - helloLength - 4, 1);
      ext = Buffer.concat([ext, extension(EXTENSION.padding, Buffer.alloc(pad))]);
    }
    body = Buffer.concat([body, vec(2, ext)]);
  }
  const handshake = Buffer.concat([Buffer.from([CLIENT_HELLO]), u24(body.length), body]);
  // Record version: TLS 1.0 for any hello past SSLv3, as servers expect (RFC 8446 §5.1, RFC 5246 App. E.1).
  const recordVersion = opts.version === 'SSLv3' ? PROTOCOL_VERSIONS.SSLv3 : PROTOCOL_VERSIONS.TLSv1;
  return { bytes: records(HANDSHAKE_RECORD, recordVersion, handshake), random, keyShareGroups };
}

function buildExtensions(opts: ClientHelloOptions, tls13: boolean, keyShareGroups: number[]): Buffer[] {
  const out: Buffer[] = [];
  if (opts.serverName) {
    // ServerNameList of one host_name(0) (RFC 6066 §3).
    const name = Buffer.from(opts.serverName, 'ascii');
    out.push(extension(EXTENSION.server_name, vec(2, Buffer.concat([Buffer.from([0]), vec(2, name)]))));
  }
  if (opts.renegotiationInfo ?? true) {
    // An initial handshake's renegotiated_connection is empty (RFC 5746 §3.4).
    out.push(extension(EXTENSION.renegotiation_info, Buffer.from([0])));
  }
  const groups = opts.groups ?? [NAMED_GROUPS.x25519, NAMED_GROUPS.secp256r1, NAMED_GROUPS.secp384r1];
  out.push(extension(EXTENSION.supported_groups, vec(2, u16s(groups))));
  // uncompressed(0) only (RFC 8422 §5.1.2).
  out.push(extension(EXTENSION.ec_point_formats, vec(1, Buffer.from([0]))));
  if (opts.version !== 'SSLv3' && opts.version !== 'TLSv1' && opts.version !== 'TLSv1.1') {
    const algorithms = opts.signatureAlgorithms ?? DEFAULT_SIGNATURE_ALGORITHMS;
    out.push(extension(EXTENSION.signature_algorithms, vec(2, u16s(algorithms))));
  }
  if (opts.statusRequest) {
    // CertificateStatusRequest: ocsp(1), no responder ids, no extensions (RFC 6066 §8).
    out.push(extension(EXTENSION.status_request, Buffer.from([1, 0, 0, 0, 0])));
  }
  if (opts.alpn && opts.alpn.length > 0) {
    const names = Buffer.concat(opts.alpn.map((p) => vec(1, Buffer.from(p, 'ascii'))));
    out.push(extension(EXTENSION.alpn, vec(2, names)));
  }
  if (opts.extendedMasterSecret ?? true)
    out.push(extension(EXTENSION.extended_master_secret, Buffer.alloc(0)));
  if (opts.sessionTicket ?? true) out.push(extension(EXTENSION.session_ticket, Buffer.alloc(0)));
  // peer_allowed_to_send(1) (RFC 6520 §2).
  if (opts.heartbeat) out.push(extension(EXTENSION.heartbeat, Buffer.from([1])));
  if (tls13 || opts.supportedVersions) {
    const versions = opts.supportedVersions ?? [opts.version];
    const codes = u16s(versions.map((v) => PROTOCOL_VERSIONS[v]));
    out.push(extension(EXTENSION.supported_versions, vec(1, codes)));
  }
  if (tls13) {
    const wanted = opts.keyShares ?? (groups.includes(NAMED_GROUPS.x25519) ? ['x25519' as const] : []);
    const entries = wanted.map((name) => {
      const group = NAMED_GROUPS[name];
      keyShareGroups.push(group);
      return Buffer.concat([u16(group), vec(2, publicShare(name))]);
    });
    // client_shares may be empty: the server then asks for one in a HelloRetryRequest (RFC 8446 §4.2.8).
    out.push(extension(EXTENSION.key_share, vec(2, Buffer.concat(entries))));
  }
  return out;
}

/** A fresh public key for a group, as key_share carries it (RFC 8446 §4.2.8.2). */
function publicShare(group: ShareableGroup): Buffer {
  if (group === 'x25519' || group === 'x448') {
    const { publicKey } = group === 'x25519' ? generateKeyPairSync('x25519') : generateKeyPairSync('x448');
    // The raw key is the last bytes of the SPKI DER (32 for X25519, 56 for X448; RFC 8410 §3).
    const der = publicKey.export({ type: 'spki', format: 'der' });
    return der.subarray(der.length - (group === 'x25519' ? 32 : 56));
  }
  const curve = { secp256r1: 'prime256v1', secp384r1: 'secp384r1', secp521r1: 'secp521r1' }[group];
  const ecdh = createECDH(curve);
  // UncompressedPointRepresentation: 0x04 || X || Y.
  return ecdh.generateKeys();
}

/**
 * An SSLv2 CLIENT-HELLO (the SSLv2 draft §2.5; RFC 6101 App. E.2): a two-byte
 * header with the top bit set, then MSG-CLIENT-HELLO, version 0x0002, the
 * lengths, three-byte CIPHER-SPECs, no session id and a 16-byte challenge.
 */
export function buildSslv2ClientHello(cipherSpecs: readonly number[], challenge = randomBytes(16)): Buffer {
  const specs = Buffer.alloc(cipherSpecs.length * 3);
  for (const [i, code] of cipherSpecs.entries()) specs.writeUIntBE(code, i * 3, 3);
  const body = Buffer.concat([
    Buffer.from([CLIENT_HELLO]),
    u16(0x0002),
    u16(specs.length),
    u16(0),
    u16(challenge.length),
    specs,
    challenge,
  ]);
  if (body.length > 0x7fff) throw new RangeError('SSLv2 CLIENT-HELLO too long');
  return Buffer.concat([u16(0x8000 | body.length), body]);
}

/** `payload` cut into TLS records of at most 2^14 bytes (RFC 5246 §6.2.1). */
function records(type: number, version: number, payload: Buffer): Buffer {
  const out: Buffer[] = [];
  for (let offset = 0; offset < payload.length; offset += MAX_FRAGMENT) {
    const fragment = payload.subarray(offset, offset + MAX_FRAGMENT);
    out.push(Buffer.from([type]), u16(version), u16(fragment.length), fragment);
  }
  return Buffer.concat(out);
}

function extension(type: number, data: Buffer): Buffer {
  return Buffer.concat([u16(type), vec(2, data)]);
}

/** A length-prefixed vector: `<0..2^(8·lengthBytes)-1>` (RFC 8446 §3.4). */
function vec(lengthBytes: 1 | 2 | 3, data: Buffer): Buffer {
  if (data.length >= 2 ** (8 * lengthBytes)) throw new RangeError('vector too long');
  const length = Buffer.alloc(lengthBytes);
  length.writeUIntBE(data.length, 0, lengthBytes);
  return Buffer.concat([length, data]);
}

function u16(value: number): Buffer {
  const out = Buffer.alloc(2);
  out.writeUInt16BE(value);
  return out;
}

function u24(value: number): Buffer {
  const out = Buffer.alloc(3);
  out.writeUIntBE(value, 0, 3);
  return out;
}

function u16s(values: readonly number[]): Buffer {
  const out = Buffer.alloc(values.length * 2);
  for (const [i, v] of values.entries()) out.writeUInt16BE(v, i * 2);
  return out;
}
