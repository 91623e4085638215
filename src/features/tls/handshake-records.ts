/**
 * The certificate list exactly as the server sent it, read from the raw TLS
 * records of the handshake. Pure: bytes and secrets in, DER certificates out.
 *
 * Why not Node's API: `getPeerCertificate(true)` does not return what was
 * sent. Node links `issuerCertificate` by searching the sent list for each
 * certificate's issuer (so a chain sent in the wrong order comes back in the
 * right one, and certificates off the path are dropped), then keeps appending
 * issuers found in the client's trust store (so a root the server omitted
 * looks exactly like a root it sent). Node 20 has no other accessor for
 * SSL_get_peer_cert_chain. The Certificate handshake message is the ground
 * truth, so we read it:
 *  - TLS 1.0–1.2: it travels in cleartext handshake records before the
 *    server's ChangeCipherSpec (RFC 5246 §7.4.2, same layout in RFC 2246/4346).
 *  - TLS 1.3: it is encrypted under the server handshake traffic key (RFC 8446
 *    §2, §7.3). The client learns SERVER_HANDSHAKE_TRAFFIC_SECRET during the
 *    handshake and OpenSSL hands it to Node's 'keylog' event (NSS key log
 *    format), so we derive the key and IV (RFC 8446 §7.3) and decrypt the
 *    records up to the Certificate message (RFC 8446 §5.2, §4.4.2).
 */
import { createDecipheriv, createHmac } from 'node:crypto';

export interface ServerFlight {
  /** Every byte the server sent from the start of the connection: raw TLS records. */
  bytes: Buffer;
  /** The negotiated version as Node names it ('TLSv1.3', 'TLSv1.2', 'TLSv1.1', 'TLSv1'). */
  protocol: string;
  /** The negotiated suite's IANA name (Node's `getCipher().standardName`). */
  cipher: string;
  /** Key log lines from the socket's 'keylog' event; TLS 1.3 needs SERVER_HANDSHAKE_TRAFFIC_SECRET. */
  keylog: readonly string[];
}

/** Why the sent certificate list could not be read (the caller falls back to Node's reconstruction). */
export class HandshakeParseError extends Error {
  override readonly name = 'HandshakeParseError';
}

// TLS record content types (RFC 8446 §5.1, RFC 5246 §6.2.1).
const CHANGE_CIPHER_SPEC = 20;
const ALERT = 21;
const HANDSHAKE = 22;
const APPLICATION_DATA = 23;
// Handshake message type certificate(11) (RFC 8446 §4, RFC 5246 §7.4).
const CERTIFICATE = 11;
// TLSCiphertext.length must not exceed 2^14 + 256 (RFC 8446 §5.2); TLS 1.2 allowed 2^14 + 2048 (RFC 5246 §6.2.3).
const MAX_RECORD = 2 ** 14 + 2048;

interface Tls13Suite {
  aead: 'aes-128-gcm' | 'aes-256-gcm' | 'chacha20-poly1305' | 'aes-128-ccm';
  hash: 'sha256' | 'sha384';
  keyLength: number;
  tagLength: number;
}

// The TLS 1.3 cipher suites (RFC 8446 §B.4). Node offers the first three by default; CCM is accepted if a
// server picks it. Nonces are 12 bytes for all of them (RFC 8446 §5.3: iv_length = max(8, N_MIN) = 12).
const TLS13_SUITES: Readonly<Record<string, Tls13Suite>> = {
  TLS_AES_128_GCM_SHA256: { aead: 'aes-128-gcm', hash: 'sha256', keyLength: 16, tagLength: 16 },
  TLS_AES_256_GCM_SHA384: { aead: 'aes-256-gcm', hash: 'sha384', keyLength: 32, tagLength: 16 },
  TLS_CHACHA20_POLY1305_SHA256: { aead: 'chacha20-poly1305', hash: 'sha256', keyLength: 32, tagLength: 16 },
  TLS_AES_128_CCM_SHA256: { aead: 'aes-128-ccm', hash: 'sha256', keyLength: 16, tagLength: 16 },
  TLS_AES_128_CCM_8_SHA256: { aead: 'aes-128-ccm', hash: 'sha256', keyLength: 16, tagLength: 8 },
};

/**
 * The DER certificates of the server's Certificate message, in the order sent
 * (leaf first, as the protocol requires). Throws HandshakeParseError when the
 * bytes hold no readable Certificate message (an abbreviated handshake, an
 * unknown suite, a missing secret, a truncated capture, an alert).
 */
export function sentCertificates(flight: ServerFlight): Buffer[] {
  const tls13 = flight.protocol === 'TLSv1.3';
  let decrypt: ((header: Buffer, fragment: Buffer) => { type: number; content: Buffer }) | undefined;
  const messages = new HandshakeStream();
  const { bytes } = flight;
  let offset = 0;
  while (offset + 5 <= bytes.length) {
    const type = bytes[offset]!;
    const length = bytes.readUInt16BE(offset + 3);
    if (length > MAX_RECORD) throw new HandshakeParseError(`record of ${length} bytes exceeds the TLS limit`);
    const end = offset + 5 + length;
    if (end > bytes.length) break;
    const header = bytes.subarray(offset, offset + 5);
    const fragment = bytes.subarray(offset + 5, end);
    offset = end;

    if (type === HANDSHAKE) {
      messages.push(fragment);
    } else if (type === CHANGE_CIPHER_SPEC) {
      // TLS ≤ 1.2: everything after it is encrypted, and the Certificate message came before it.
      // TLS 1.3: a middlebox-compatibility no-op (RFC 8446 §D.4), skipped.
      if (!tls13) break;
    } else if (type === APPLICATION_DATA && tls13) {
      decrypt ??= handshakeDecrypter(flight);
      const inner = decrypt(header, fragment);
      if (inner.type === ALERT) throw new HandshakeParseError('the server sent an encrypted alert');
      if (inner.type === HANDSHAKE) messages.push(inner.content);
    } else if (type === ALERT) {
      throw new HandshakeParseError('the server sent an alert before its certificate');
    } else {
      throw new HandshakeParseError(`unexpected record type ${type} before the certificate`);
    }

    const body = messages.find(CERTIFICATE);
    if (body) return parseCertificateMessage(body, tls13);
  }
  throw new HandshakeParseError('no Certificate message in the captured handshake');
}

/** Reassembles handshake messages that may be split across records or share one (RFC 8446 §5.1). */
class HandshakeStream {
  #buffer = Buffer.alloc(0);

  push(fragment: Buffer): void {
    this.#buffer = Buffer.concat([this.#buffer, fragment]);
  }

  /** The body of the first complete message of `type`, consuming complete messages before it. */
  find(type: number): Buffer | undefined {
    while (this.#buffer.length >= 4) {
      const length = this.#buffer.readUIntBE(1, 3);
      if (this.#buffer.length < 4 + length) return undefined;
      const msgType = this.#buffer[0];
      const body = this.#buffer.subarray(4, 4 + length);
      this.#buffer = this.#buffer.subarray(4 + length);
      if (msgType === type) return body;
    }
    return undefined;
  }
}

/**
 * TLS 1.2 (RFC 5246 §7.4.2): certificate_list<0..2^24-1> of ASN.1Cert<1..2^24-1>.
 * TLS 1.3 (RFC 8446 §4.4.2): certificate_request_context<0..2^8-1>, then
 * certificate_list<0..2^24-1> of CertificateEntry {cert_data<1..2^24-1>, extensions<0..2^16-1>}.
 */
export function parseCertificateMessage(body: Buffer, tls13: boolean): Buffer[] {
  const reader = new Reader(body);
  if (tls13) reader.take(reader.uint(1));
  const list = new Reader(reader.take(reader.uint(3)));
  const certificates: Buffer[] = [];
  while (!list.done) {
    const der = list.take(list.uint(3));
    if (der.length === 0) throw new HandshakeParseError('empty certificate in the Certificate message');
    certificates.push(Buffer.from(der));
    if (tls13) list.take(list.uint(2)); // per-certificate extensions (OCSP, SCTs): not needed here
  }
  if (certificates.length === 0) throw new HandshakeParseError('the server sent an empty certificate list');
  return certificates;
}

class Reader {
  #offset = 0;
  constructor(private readonly buf: Buffer) {}

  get done(): boolean {
    return this.#offset >= this.buf.length;
  }

  uint(bytes: 1 | 2 | 3): number {
    if (this.#offset + bytes > this.buf.length)
      throw new HandshakeParseError('truncated Certificate message');
    const value = this.buf.readUIntBE(this.#offset, bytes);
    this.#offset += bytes;
    return value;
  }

  take(length: number): Buffer {
    if (this.#offset + length > this.buf.length)
      throw new HandshakeParseError('truncated Certificate message');
    const out = this.buf.subarray(this.#offset, this.#offset + length);
    this.#offset += length;
    return out;
  }
}

/** Decrypts the server's TLS 1.3 handshake records, in order (RFC 8446 §5.2, §5.3). */
function handshakeDecrypter(flight: ServerFlight): (
  header: Buffer,
  fragment: Buffer,
) => {
  type: number;
  content: Buffer;
} {
  const suite = TLS13_SUITES[flight.cipher];
  if (!suite) throw new HandshakeParseError(`cannot decrypt TLS 1.3 records of ${flight.cipher}`);
  const secret = keylogSecret(flight.keylog, 'SERVER_HANDSHAKE_TRAFFIC_SECRET');
  if (!secret) throw new HandshakeParseError('no SERVER_HANDSHAKE_TRAFFIC_SECRET in the key log');
  const key = hkdfExpandLabel(suite.hash, secret, 'key', suite.keyLength);
  const iv = hkdfExpandLabel(suite.hash, secret, 'iv', 12);
  let sequence = 0n;

  return (header, fragment) => {
    if (fragment.length < suite.tagLength) throw new HandshakeParseError('encrypted record too short');
    // per-record nonce = iv XOR the 64-bit sequence number, left-padded to the IV length (RFC 8446 §5.3).
    const nonce = Buffer.from(iv);
    const seq = Buffer.alloc(8);
    seq.writeBigUInt64BE(sequence++);
    for (let i = 0; i < 8; i++) nonce[4 + i]! ^= seq[i]!;
    const ciphertext = fragment.subarray(0, fragment.length - suite.tagLength);
    const tag = fragment.subarray(fragment.length - suite.tagLength);
    let plaintext: Buffer;
    try {
      plaintext = aeadOpen(suite, key, nonce, header, ciphertext, tag);
    } catch (err) {
      throw new HandshakeParseError(`TLS 1.3 record did not decrypt: ${(err as Error).message}`);
    }
    // TLSInnerPlaintext = content || ContentType type || zeros (RFC 8446 §5.2): the type is the last non-zero byte.
    let end = plaintext.length;
    while (end > 0 && plaintext[end - 1] === 0) end--;
    if (end === 0) throw new HandshakeParseError('TLS 1.3 record without a content type');
    return { type: plaintext[end - 1]!, content: plaintext.subarray(0, end - 1) };
  };
}

/** AEAD-Decrypt with the record header as additional data (RFC 8446 §5.2). */
function aeadOpen(
  suite: Tls13Suite,
  key: Buffer,
  nonce: Buffer,
  aad: Buffer,
  ct: Buffer,
  tag: Buffer,
): Buffer {
  const authTagLength = suite.tagLength;
  if (suite.aead === 'aes-128-ccm') {
    const decipher = createDecipheriv(suite.aead, key, nonce, { authTagLength });
    decipher.setAuthTag(tag);
    decipher.setAAD(aad, { plaintextLength: ct.length });
    return Buffer.concat([decipher.update(ct), decipher.final()]);
  }
  if (suite.aead === 'chacha20-poly1305') {
    const decipher = createDecipheriv(suite.aead, key, nonce, { authTagLength });
    decipher.setAuthTag(tag);
    decipher.setAAD(aad, { plaintextLength: ct.length });
    return Buffer.concat([decipher.update(ct), decipher.final()]);
  }
  const decipher = createDecipheriv(suite.aead, key, nonce, { authTagLength });
  decipher.setAuthTag(tag);
  decipher.setAAD(aad);
  return Buffer.concat([decipher.update(ct), decipher.final()]);
}

/** The secret of the first `label` line of an NSS key log ("LABEL <client_random hex> <secret hex>"). */
function keylogSecret(lines: readonly string[], label: string): Buffer | undefined {
  for (const line of lines) {
    const [name, , secret] = line.trim().split(/\s+/);
    if (name === label && secret && /^(?:[0-9a-f]{2})+$/i.test(secret)) return Buffer.from(secret, 'hex');
  }
  return undefined;
}

/**
 * HKDF-Expand-Label(Secret, Label, "", Length) (RFC 8446 §7.1): HKDF-Expand
 * (RFC 5869 §2.3) with info = uint16 Length || opaque label<7..255> =
 * "tls13 " + Label || opaque context<0..255> (empty here).
 */
export function hkdfExpandLabel(
  hash: 'sha256' | 'sha384',
  secret: Buffer,
  label: string,
  length: number,
): Buffer {
  const fullLabel = Buffer.from(`tls13 ${label}`, 'ascii');
  const info = Buffer.concat([
    Buffer.from([length >> 8, length & 0xff, fullLabel.length]),
    fullLabel,
    Buffer.from([0]),
  ]);
  const blocks: Buffer[] = [];
  let previous = Buffer.alloc(0);
  for (let i = 1; Buffer.concat(blocks).length < length; i++) {
    previous = createHmac(hash, secret)
      .update(Buffer.concat([previous, info, Buffer.from([i])]))
      .digest();
    blocks.push(previous);
  }
  return Buffer.concat(blocks).subarray(0, length);
}
