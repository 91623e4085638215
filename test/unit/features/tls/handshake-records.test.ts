import { createCipheriv } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  HandshakeParseError,
  hkdfExpandLabel,
  parseCertificateMessage,
  sentCertificates,
} from '../../../../src/features/tls/handshake-records.js';

// RFC 8448 §3 (Simple 1-RTT Handshake): the server handshake traffic secret and what it derives.
const RFC8448_S_HS_TRAFFIC = hex('b67b7d690cc16c4e75e54213cb2d37b4e9c912bcded9105d42befd59d391ad38');
const RFC8448_S_HS_KEY = hex('3fce516009c21727d0f2e4e86ee403bc');
const RFC8448_S_HS_IV = hex('5d313eb2671276ee13000b30');
const RFC8448_S_FINISHED_KEY = hex('008d3b66f816ea559f96b537e885c31fc068bf492c652f01f288a1d8cdc19fc8');

const CLIENT_RANDOM = '00'.repeat(32);
const CERT_A = Buffer.from('first certificate, DER in real life');
const CERT_B = Buffer.from('second');
const CERT_C = Buffer.from('third, the root the server should not send');

function hex(s: string): Buffer {
  return Buffer.from(s, 'hex');
}

function u(n: number, bytes: 1 | 2 | 3): Buffer {
  const b = Buffer.alloc(bytes);
  b.writeUIntBE(n, 0, bytes);
  return b;
}

function record(type: number, payload: Buffer): Buffer {
  return Buffer.concat([Buffer.from([type, 0x03, 0x03]), u(payload.length, 2), payload]);
}

function message(type: number, body: Buffer): Buffer {
  return Buffer.concat([Buffer.from([type]), u(body.length, 3), body]);
}

function certificate12(certs: Buffer[]): Buffer {
  const list = Buffer.concat(certs.map((c) => Buffer.concat([u(c.length, 3), c])));
  return message(11, Buffer.concat([u(list.length, 3), list]));
}

/** TLS 1.3 Certificate (RFC 8446 §4.4.2) with an extension on the first entry, as OCSP stapling adds. */
function certificate13(certs: Buffer[]): Buffer {
  const entries = certs.map((c, i) => {
    const ext = i === 0 ? Buffer.concat([u(5, 2), u(3, 2), Buffer.from([1, 2, 3])]) : Buffer.alloc(0);
    return Buffer.concat([u(c.length, 3), c, u(ext.length, 2), ext]);
  });
  const list = Buffer.concat(entries);
  return message(11, Buffer.concat([u(0, 1), u(list.length, 3), list]));
}

const SERVER_HELLO = message(2, Buffer.alloc(40, 7));
const SERVER_HELLO_DONE = message(14, Buffer.alloc(0));
const ENCRYPTED_EXTENSIONS = message(8, Buffer.from([0x00, 0x00]));

/** Seals TLS 1.3 records the way a server does (RFC 8446 §5.2): inner type, zero padding, header as AAD. */
function sealer(aead: 'aes-128-gcm' | 'aes-256-gcm' | 'chacha20-poly1305', key: Buffer, iv: Buffer) {
  let seq = 0n;
  return (innerType: number, content: Buffer, padding = 0): Buffer => {
    const plaintext = Buffer.concat([content, Buffer.from([innerType]), Buffer.alloc(padding)]);
    const header = Buffer.concat([Buffer.from([23, 0x03, 0x03]), u(plaintext.length + 16, 2)]);
    const nonce = Buffer.from(iv);
    const s = Buffer.alloc(8);
    s.writeBigUInt64BE(seq++);
    for (let i = 0; i < 8; i++) nonce[4 + i]! ^= s[i]!;
    const cipher = createCipheriv(aead as 'aes-128-gcm', key, nonce, { authTagLength: 16 });
    cipher.setAAD(header, { plaintextLength: plaintext.length });
    const body = Buffer.concat([cipher.update(plaintext), cipher.final(), cipher.getAuthTag()]);
    return Buffer.concat([header, body]);
  };
}

function keylog(secret: Buffer): string[] {
  return [
    `CLIENT_HANDSHAKE_TRAFFIC_SECRET ${CLIENT_RANDOM} ${'11'.repeat(secret.length)}\n`,
    `SERVER_HANDSHAKE_TRAFFIC_SECRET ${CLIENT_RANDOM} ${secret.toString('hex')}\n`,
  ];
}

describe('hkdfExpandLabel (RFC 8446 §7.1)', () => {
  it('derives the RFC 8448 §3 server handshake key, IV and finished key', () => {
    expect(hkdfExpandLabel('sha256', RFC8448_S_HS_TRAFFIC, 'key', 16)).toEqual(RFC8448_S_HS_KEY);
    expect(hkdfExpandLabel('sha256', RFC8448_S_HS_TRAFFIC, 'iv', 12)).toEqual(RFC8448_S_HS_IV);
    expect(hkdfExpandLabel('sha256', RFC8448_S_HS_TRAFFIC, 'finished', 32)).toEqual(RFC8448_S_FINISHED_KEY);
  });
});

describe('sentCertificates, TLS 1.2 and earlier (cleartext)', () => {
  const flight = (bytes: Buffer, protocol = 'TLSv1.2') => ({
    bytes,
    protocol,
    cipher: 'TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256',
    keylog: [],
  });

  it('reads the list in the order sent, from a Certificate message split across records', () => {
    const cert = certificate12([CERT_A, CERT_C, CERT_B]);
    const bytes = Buffer.concat([
      record(22, Buffer.concat([SERVER_HELLO, cert.subarray(0, 10)])),
      record(22, Buffer.concat([cert.subarray(10), SERVER_HELLO_DONE])),
      record(20, Buffer.from([1])),
    ]);
    expect(sentCertificates(flight(bytes))).toEqual([CERT_A, CERT_C, CERT_B]);
    expect(sentCertificates(flight(bytes, 'TLSv1'))).toEqual([CERT_A, CERT_C, CERT_B]);
  });

  it('ignores trailing bytes after the certificate and a truncated last record', () => {
    const bytes = Buffer.concat([
      record(22, Buffer.concat([SERVER_HELLO, certificate12([CERT_A])])),
      record(23, Buffer.alloc(20)).subarray(0, 9),
    ]);
    expect(sentCertificates(flight(bytes))).toEqual([CERT_A]);
  });

  it('no Certificate before ChangeCipherSpec (a resumed session) is an error, not a guess', () => {
    const bytes = Buffer.concat([
      record(22, SERVER_HELLO),
      record(20, Buffer.from([1])),
      record(22, certificate12([CERT_A])),
    ]);
    expect(() => sentCertificates(flight(bytes))).toThrow(HandshakeParseError);
  });

  it('an alert or a capture cut short is an error', () => {
    expect(() => sentCertificates(flight(record(21, Buffer.from([2, 40]))))).toThrow(/alert/);
    const cut = record(22, Buffer.concat([SERVER_HELLO, certificate12([CERT_A])])).subarray(0, 60);
    expect(() => sentCertificates(flight(cut))).toThrow(/no Certificate/);
  });

  it('an oversized record is refused', () => {
    const header = Buffer.from([22, 3, 3, 0xff, 0xff]);
    expect(() => sentCertificates(flight(header))).toThrow(/exceeds/);
  });
});

describe('sentCertificates, TLS 1.3 (decrypted with the key log secret)', () => {
  function tls13Flight(opts: {
    cipher: string;
    aead: 'aes-128-gcm' | 'aes-256-gcm' | 'chacha20-poly1305';
    hash: 'sha256' | 'sha384';
    secret: Buffer;
  }) {
    const keyLength = opts.aead === 'aes-128-gcm' ? 16 : 32;
    const seal = sealer(
      opts.aead,
      hkdfExpandLabel(opts.hash, opts.secret, 'key', keyLength),
      hkdfExpandLabel(opts.hash, opts.secret, 'iv', 12),
    );
    const cert = certificate13([CERT_A, CERT_C, CERT_B]);
    return Buffer.concat([
      record(22, SERVER_HELLO),
      record(20, Buffer.from([1])), // middlebox compatibility (RFC 8446 §D.4)
      seal(22, ENCRYPTED_EXTENSIONS, 5),
      seal(22, cert.subarray(0, 20)),
      seal(22, Buffer.concat([cert.subarray(20), message(15, Buffer.alloc(8))]), 3),
    ]);
  }

  it.each([
    ['TLS_AES_128_GCM_SHA256', 'aes-128-gcm', 'sha256', RFC8448_S_HS_TRAFFIC],
    ['TLS_AES_256_GCM_SHA384', 'aes-256-gcm', 'sha384', Buffer.alloc(48, 0x5a)],
    ['TLS_CHACHA20_POLY1305_SHA256', 'chacha20-poly1305', 'sha256', Buffer.alloc(32, 0xa5)],
  ] as const)(
    '%s: reads the encrypted Certificate message in the order sent',
    (cipher, aead, hash, secret) => {
      const bytes = tls13Flight({ cipher, aead, hash, secret });
      expect(sentCertificates({ bytes, protocol: 'TLSv1.3', cipher, keylog: keylog(secret) })).toEqual([
        CERT_A,
        CERT_C,
        CERT_B,
      ]);
    },
  );

  it('without the secret, with a wrong one, or for an unknown suite it fails instead of guessing', () => {
    const cipher = 'TLS_AES_128_GCM_SHA256';
    const bytes = tls13Flight({ cipher, aead: 'aes-128-gcm', hash: 'sha256', secret: RFC8448_S_HS_TRAFFIC });
    const base = { bytes, protocol: 'TLSv1.3', cipher };
    expect(() => sentCertificates({ ...base, keylog: [] })).toThrow(/SERVER_HANDSHAKE_TRAFFIC_SECRET/);
    expect(() => sentCertificates({ ...base, keylog: keylog(Buffer.alloc(32, 1)) })).toThrow(
      /did not decrypt/,
    );
    expect(() =>
      sentCertificates({ ...base, cipher: 'TLS_SM4_GCM_SM3', keylog: keylog(RFC8448_S_HS_TRAFFIC) }),
    ).toThrow(/cannot decrypt/);
  });

  it('an encrypted alert is an error', () => {
    const seal = sealer('aes-128-gcm', RFC8448_S_HS_KEY, RFC8448_S_HS_IV);
    const bytes = Buffer.concat([record(22, SERVER_HELLO), seal(21, Buffer.from([2, 42]))]);
    expect(() =>
      sentCertificates({
        bytes,
        protocol: 'TLSv1.3',
        cipher: 'TLS_AES_128_GCM_SHA256',
        keylog: keylog(RFC8448_S_HS_TRAFFIC),
      }),
    ).toThrow(/alert/);
  });
});

describe('parseCertificateMessage', () => {
  it('refuses an empty list and a truncated list', () => {
    expect(() => parseCertificateMessage(Buffer.from([0, 0, 0]), false)).toThrow(/empty certificate list/);
    expect(() => parseCertificateMessage(Buffer.from([0, 0, 5, 0, 0, 9, 1]), false)).toThrow(/truncated/);
    expect(() => parseCertificateMessage(Buffer.from([0, 0, 0, 3, 0, 0, 0]), true)).toThrow(
      /empty certificate/,
    );
  });
});
