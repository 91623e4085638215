/**
 * A scripted TLS server for what Debian's OpenSSL no longer speaks (SSLv2,
 * SSLv3, RC4, export, 3DES, compression, heartbeat): it reads a client's
 * first hello and answers as an old server configured by the script would,
 * and never completes a handshake (a scan never needs it to).
 *
 * - A TLS ClientHello (RFC 5246 §7.4.1.2; SSLv3: RFC 6101 §5.6.1.2) gets a
 *   ServerHello with the chosen version and suite (RFC 5246 §7.4.1.3), the
 *   Certificate message (§7.4.2) and ServerHelloDone (§7.4.5) in one flight; no
 *   ServerKeyExchange, so a client going on with an (EC)DHE suite would fail.
 *   Nothing in common: a fatal handshake_failure alert; a version the server
 *   does not speak: protocol_version (§7.2.2, RFC 8446 §4.2.1); the fallback
 *   signal below its best: inappropriate_fallback (RFC 7507 §3).
 * - An SSLv2 CLIENT-HELLO (draft-hickman-netscape-ssl-00 §2.5) gets a
 *   SERVER-HELLO with the cipher specs both sides have (§2.6), or ERROR
 *   NO-CIPHER-ERROR; a server without SSLv2 closes without a word. An
 *   SSLv2-format hello asking for SSLv3 or TLS (RFC 5246 App. E.2) is a TLS hello.
 *
 *   const fake = await startLegacyTlsServer({ address: '127.0.0.40', port: 443 },
 *     { versions: ['SSLv3', 'TLSv1'], suites: [0x0005, 0x0003], serverPreference: true });
 *   fake.hellos;   // what each client offered, to count a scan's handshakes
 */
import { randomBytes } from 'node:crypto';
import { createServer, type Socket } from 'node:net';
import { PROTOCOL_VERSIONS } from '../../src/tls-scan/client-hello.js';
import { FakeLifecycle } from './lifecycle.js';
import { getTestPki, rsaServerLeaf } from './test-ca.js';
import type { PeerAddress } from './tls-scan-peers.js';

export type LegacyVersion = 'SSLv3' | 'TLSv1' | 'TLSv1.1' | 'TLSv1.2';

export interface LegacyScript {
  /** The versions spoken (no TLS 1.3: a hello offering only that gets protocol_version). */
  versions: LegacyVersion[];
  /** Code points in the server's order, used for every version spoken. */
  suites: number[];
  /** Pick by the server's order (true) or the client's (false). */
  serverPreference: boolean;
  /** Speak SSLv2 with these three-byte CIPHER-SPECs (e.g. 0x010080 RC4_128_WITH_MD5). */
  sslv2?: { cipherSpecs: number[] };
  /** Accept DEFLATE (1) when offered (RFC 3749). */
  compression?: boolean;
  /** Answer renegotiation_info (RFC 5746 §3.6) when the client signals it. */
  secureRenegotiation?: boolean;
  /** Answer the heartbeat extension (RFC 6520 §2) when the client sends it. */
  heartbeat?: boolean;
  /** Honour TLS_FALLBACK_SCSV (RFC 7507 §3). */
  fallbackScsv?: boolean;
  /** The leaf's key; default RSA (RC4-SHA, 3DES and export suites are RSA key exchange). */
  keyType?: 'RSA' | 'ECDSA';
  /**
   * Speak TLS 1.3 too, as far as its ServerHello: suites and groups in the server's order.
   * A group the client lists without a key share for it is asked for in a HelloRetryRequest
   * (RFC 8446 §4.1.4) — how a server with the hybrid ML-KEM groups that Debian's OpenSSL 3.0
   * lacks answers a scan.
   */
  tls13?: { suites: number[]; groups: number[] };
}

/** What one client offered, as the fake parsed it. */
export interface SeenHello {
  format: 'tls' | 'sslv2';
  /** legacy_version, or the SSLv2 hello's version (2 for SSLv2 itself). */
  clientVersion: number;
  /** supported_versions when sent (RFC 8446 §4.2.1). */
  supportedVersions: number[] | null;
  suites: number[];
  compressionMethods: number[];
  extensions: number[];
  supportedGroups: number[] | null;
  /** What the fake answered: a version name, an alert name, or 'sslv2', 'closed'. */
  answer: string;
}

export interface LegacyTlsServer extends PeerAddress {
  hellos: SeenHello[];
  stop(): Promise<void>;
}

const HANDSHAKE = 22;
const ALERT = 21;
const FALLBACK_SCSV = 0x5600;
const RENEGOTIATION_SCSV = 0x00ff;
const EXT = {
  supported_groups: 10,
  heartbeat: 15,
  supported_versions: 43,
  key_share: 51,
  renegotiation_info: 0xff01,
};
/** SHA-256("HelloRetryRequest"), the random of a HelloRetryRequest (RFC 8446 §4.1.3). */
const HRR_RANDOM = Buffer.from('cf21ad74e59a6111be1d8c021e65b891c2a211167abb8c5e079e09e2c8a8339c', 'hex');
const VERSION_CODES: Record<LegacyVersion, number> = {
  SSLv3: PROTOCOL_VERSIONS.SSLv3,
  TLSv1: PROTOCOL_VERSIONS.TLSv1,
  'TLSv1.1': PROTOCOL_VERSIONS['TLSv1.1'],
  'TLSv1.2': PROTOCOL_VERSIONS['TLSv1.2'],
};

export async function startLegacyTlsServer(at: PeerAddress, script: LegacyScript): Promise<LegacyTlsServer> {
  const leaf = script.keyType === 'ECDSA' ? (await getTestPki()).server : await rsaServerLeaf();
  const certificate = pemToDer(leaf.certPem);
  const hellos: SeenHello[] = [];
  const life = new FakeLifecycle();
  const server = createServer((socket: Socket) => {
    life.track(socket);
    socket.on('error', () => socket.destroy());
    // An old server waits for the client's next flight; ours waits for the client to leave.
    socket.setTimeout(10_000, () => socket.destroy());
    let received = Buffer.alloc(0);
    let answered = false;
    socket.on('data', (chunk: Buffer) => {
      if (answered) return;
      received = Buffer.concat([received, chunk]);
      const hello = readHello(received);
      if (hello === 'incomplete') return;
      answered = true;
      if (hello === 'garbage') {
        socket.destroy();
        return;
      }
      const { seen, reply } = answer(hello, script, certificate);
      hellos.push(seen);
      if (reply) socket.write(reply);
      else socket.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(at.port, at.address, () => resolve());
  });
  return { address: at.address, port: at.port, hellos, stop: () => life.close(server) };
}

interface ParsedHello {
  format: 'tls' | 'sslv2';
  recordVersion: number;
  clientVersion: number;
  suites: number[];
  /** SSLv2 only: the three-byte CIPHER-SPECs as sent. */
  cipherSpecs: number[];
  compressionMethods: number[];
  extensions: Map<number, Buffer>;
}

/** The client's first hello once it is whole (one record or an SSLv2 message is enough here). */
function readHello(bytes: Buffer): ParsedHello | 'incomplete' | 'garbage' {
  try {
    if (bytes.length < 2) return 'incomplete';
    if (bytes[0]! & 0x80) {
      // SSLv2 record header: two bytes, top bit set, 15-bit length (draft §1.2).
      const length = bytes.readUInt16BE(0) & 0x7fff;
      if (bytes.length < 2 + length) return 'incomplete';
      return parseSslv2Hello(bytes.subarray(2, 2 + length));
    }
    if (bytes.length < 5) return 'incomplete';
    if (bytes[0] !== HANDSHAKE) return 'garbage';
    // A hello split over records is legal but no scanner sends one: the first record must hold it.
    const length = bytes.readUInt16BE(3);
    if (bytes.length < 5 + length) return 'incomplete';
    const fragment = bytes.subarray(5, 5 + length);
    if (fragment[0] !== 1) return 'garbage';
    return parseTlsHello(fragment.subarray(4, 4 + fragment.readUIntBE(1, 3)), bytes.readUInt16BE(1));
  } catch {
    return 'garbage';
  }
}

/** ClientHello body (RFC 5246 §7.4.1.2): version, random, session id, suites, compression, extensions. */
function parseTlsHello(body: Buffer, recordVersion: number): ParsedHello {
  let offset = 0;
  const clientVersion = body.readUInt16BE(offset);
  offset += 2 + 32;
  offset += 1 + body[offset]!;
  const suitesLength = body.readUInt16BE(offset);
  const suites = u16List(body.subarray(offset + 2, offset + 2 + suitesLength));
  offset += 2 + suitesLength;
  const compressionMethods = [...body.subarray(offset + 1, offset + 1 + body[offset]!)];
  offset += 1 + body[offset]!;
  const extensions = new Map<number, Buffer>();
  // SSLv3 hellos end here (RFC 5246 §7.4.1.2: extensions are optional).
  if (offset + 2 <= body.length) {
    const end = offset + 2 + body.readUInt16BE(offset);
    offset += 2;
    while (offset + 4 <= end) {
      const length = body.readUInt16BE(offset + 2);
      extensions.set(body.readUInt16BE(offset), body.subarray(offset + 4, offset + 4 + length));
      offset += 4 + length;
    }
  }
  return {
    format: 'tls',
    recordVersion,
    clientVersion,
    suites,
    cipherSpecs: [],
    compressionMethods,
    extensions,
  };
}

/** SSLv2 CLIENT-HELLO (draft §2.5): type 1, version, three lengths, specs, session id, challenge. */
function parseSslv2Hello(body: Buffer): ParsedHello | 'garbage' {
  if (body[0] !== 1) return 'garbage';
  const clientVersion = body.readUInt16BE(1);
  const specsLength = body.readUInt16BE(3);
  const specs = body.subarray(9, 9 + specsLength);
  const cipherSpecs: number[] = [];
  for (let i = 0; i + 3 <= specs.length; i += 3) cipherSpecs.push(specs.readUIntBE(i, 3));
  // A TLS suite in a v2-format hello is a spec whose first byte is 0 (RFC 5246 App. E.2).
  const suites = cipherSpecs.filter((spec) => spec >> 16 === 0);
  return {
    format: 'sslv2',
    recordVersion: clientVersion,
    clientVersion,
    suites,
    cipherSpecs,
    compressionMethods: [0],
    extensions: new Map(),
  };
}

/** The script's answer to one hello, and the record of it. */
function answer(
  hello: ParsedHello,
  script: LegacyScript,
  certificate: Buffer,
): { seen: SeenHello; reply?: Buffer } {
  const versionsExt = hello.extensions.get(EXT.supported_versions);
  const groupsExt = hello.extensions.get(EXT.supported_groups);
  const seen: SeenHello = {
    format: hello.format,
    clientVersion: hello.clientVersion,
    supportedVersions: versionsExt ? u16List(versionsExt.subarray(1, 1 + versionsExt[0]!)) : null,
    suites: hello.format === 'sslv2' ? hello.cipherSpecs : hello.suites,
    compressionMethods: hello.compressionMethods,
    extensions: [...hello.extensions.keys()],
    supportedGroups: groupsExt ? u16List(groupsExt.subarray(2, 2 + groupsExt.readUInt16BE(0))) : null,
    answer: 'closed',
  };
  const respond = (what: string, reply?: Buffer) => {
    seen.answer = what;
    return { seen, ...(reply ? { reply } : {}) };
  };

  if (hello.format === 'sslv2' && hello.clientVersion === 0x0002) {
    if (!script.sslv2) return respond('closed');
    const common = script.sslv2.cipherSpecs.filter((spec) => hello.cipherSpecs.includes(spec));
    // ERROR NO-CIPHER-ERROR is 0x0001 (draft, Appendix "Error Codes").
    if (common.length === 0) return respond('sslv2_error', sslv2Message(Buffer.from([0, 0x00, 0x01])));
    return respond('sslv2', sslv2ServerHello(certificate, common));
  }

  if (script.tls13 && seen.supportedVersions?.includes(0x0304))
    return tls13Answer(hello, seen, script.tls13, respond);

  // The version (RFC 8446 §4.2.1 with supported_versions; RFC 5246 App. E.1 without): the
  // highest both speak, or the client's legacy_version capped at the server's best.
  const spoken = script.versions.map((v) => VERSION_CODES[v]);
  const best = Math.max(...spoken);
  const offered = seen.supportedVersions ?? [];
  const version = versionsExt
    ? Math.max(0, ...offered.filter((v) => spoken.includes(v)))
    : Math.min(hello.clientVersion, best);
  const alertVersion = Math.min(hello.recordVersion, 0x0303);
  if (!spoken.includes(version)) return respond('protocol_version', alert(alertVersion, 70));
  const clientBest = versionsExt ? Math.max(...offered) : hello.clientVersion;
  if (script.fallbackScsv && hello.suites.includes(FALLBACK_SCSV) && clientBest < best)
    return respond('inappropriate_fallback', alert(alertVersion, 86));

  const [preferred, other] = script.serverPreference
    ? [script.suites, hello.suites]
    : [hello.suites, script.suites];
  const suite = preferred.find((code) => other.includes(code));
  if (suite === undefined) return respond('handshake_failure', alert(version, 40));

  const compression = script.compression && hello.compressionMethods.includes(1) ? 1 : 0;
  const extensions: Buffer[] = [];
  const wantsRenegotiation =
    hello.extensions.has(EXT.renegotiation_info) || hello.suites.includes(RENEGOTIATION_SCSV);
  // An empty renegotiated_connection for an initial handshake (RFC 5746 §3.6).
  if (script.secureRenegotiation && wantsRenegotiation)
    extensions.push(extension(EXT.renegotiation_info, Buffer.from([0])));
  // peer_allowed_to_send (RFC 6520 §2); only to a client that sent the extension (RFC 5246 §7.4.1.4).
  if (script.heartbeat && hello.extensions.has(EXT.heartbeat))
    extensions.push(extension(EXT.heartbeat, Buffer.from([1])));

  const serverHello = Buffer.concat([
    u16(version),
    randomBytes(32),
    Buffer.from([32]),
    randomBytes(32),
    u16(suite),
    Buffer.from([compression]),
    // No extensions block at all when there is none to send, as SSLv3 servers answer.
    extensions.length > 0 ? vec16(Buffer.concat(extensions)) : Buffer.alloc(0),
  ]);
  // Certificate: a list of one DER certificate, each with a 24-bit length (RFC 5246 §7.4.2).
  const certificateList = Buffer.concat([u24(certificate.length), certificate]);
  const flight = Buffer.concat([
    handshake(2, serverHello),
    handshake(11, Buffer.concat([u24(certificateList.length), certificateList])),
    handshake(14, Buffer.alloc(0)),
  ]);
  return respond(protocolLabel(version), record(HANDSHAKE, version, flight));
}

/**
 * TLS 1.3 (RFC 8446 §4.1.3): the server's first suite and group the client offers; a
 * ServerHello with a key share (random bytes: nothing is ever derived from it) when the client
 * sent a share for that group, else a HelloRetryRequest naming it.
 */
function tls13Answer(
  hello: ParsedHello,
  seen: SeenHello,
  offer: NonNullable<LegacyScript['tls13']>,
  respond: (what: string, reply?: Buffer) => { seen: SeenHello; reply?: Buffer },
) {
  const suite = offer.suites.find((code) => hello.suites.includes(code));
  const group = offer.groups.find((code) => seen.supportedGroups?.includes(code));
  if (suite === undefined || group === undefined) return respond('handshake_failure', alert(0x0303, 40));
  const shares = hello.extensions.get(EXT.key_share);
  const shared = new Set<number>();
  for (let i = 2; shares && i + 4 <= shares.length; i += 4 + shares.readUInt16BE(i + 2))
    shared.add(shares.readUInt16BE(i));
  const retry = !shared.has(group);
  const extensions = Buffer.concat([
    extension(EXT.supported_versions, u16(0x0304)),
    extension(EXT.key_share, retry ? u16(group) : Buffer.concat([u16(group), vec16(randomBytes(32))])),
  ]);
  const serverHello = Buffer.concat([
    u16(0x0303),
    retry ? HRR_RANDOM : randomBytes(32),
    Buffer.from([32]),
    randomBytes(32),
    u16(suite),
    Buffer.from([0]),
    vec16(extensions),
  ]);
  return respond(
    retry ? 'hello_retry_request' : 'TLSv1.3',
    record(HANDSHAKE, 0x0303, handshake(2, serverHello)),
  );
}

/** SERVER-HELLO (draft §2.6): no session hit, X.509 certificate, version 2, a fresh connection id. */
function sslv2ServerHello(certificate: Buffer, specs: number[]): Buffer {
  const specBytes = Buffer.alloc(specs.length * 3);
  for (const [i, spec] of specs.entries()) specBytes.writeUIntBE(spec, i * 3, 3);
  const connectionId = randomBytes(16);
  return sslv2Message(
    Buffer.concat([
      Buffer.from([4, 0, 1]),
      u16(0x0002),
      u16(certificate.length),
      u16(specBytes.length),
      u16(connectionId.length),
      certificate,
      specBytes,
      connectionId,
    ]),
  );
}

function sslv2Message(body: Buffer): Buffer {
  return Buffer.concat([u16(0x8000 | body.length), body]);
}

/** A fatal alert (RFC 5246 §7.2). */
function alert(version: number, description: number): Buffer {
  return record(ALERT, version, Buffer.from([2, description]));
}

function protocolLabel(code: number): string {
  return Object.entries(VERSION_CODES).find(([, v]) => v === code)?.[0] ?? `0x${code.toString(16)}`;
}

function handshake(type: number, body: Buffer): Buffer {
  return Buffer.concat([Buffer.from([type]), u24(body.length), body]);
}

function record(type: number, version: number, payload: Buffer): Buffer {
  return Buffer.concat([Buffer.from([type]), u16(version), u16(payload.length), payload]);
}

function extension(type: number, data: Buffer): Buffer {
  return Buffer.concat([u16(type), vec16(data)]);
}

function vec16(data: Buffer): Buffer {
  return Buffer.concat([u16(data.length), data]);
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

function u16List(bytes: Buffer): number[] {
  const out: number[] = [];
  for (let i = 0; i + 2 <= bytes.length; i += 2) out.push(bytes.readUInt16BE(i));
  return out;
}

function pemToDer(pem: string): Buffer {
  return Buffer.from(pem.replace(/-----[^-]+-----|\s/g, ''), 'base64');
}
