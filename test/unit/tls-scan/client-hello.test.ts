import { describe, expect, it } from 'vitest';
import {
  buildClientHello,
  buildSslv2ClientHello,
  EXTENSION,
  NAMED_GROUPS,
} from '../../../src/tls-scan/client-hello.js';

/** Walks a ClientHello record field by field (RFC 8446 §4.1.2), as a server reads it. */
function readHello(bytes: Buffer) {
  let o = 0;
  const u = (n: number) => {
    const v = bytes.readUIntBE(o, n);
    o += n;
    return v;
  };
  const take = (n: number) => {
    const v = bytes.subarray(o, o + n);
    o += n;
    return v;
  };
  const record = { type: u(1), version: u(2), length: u(2) };
  const hs = { type: u(1), length: u(3) };
  const version = u(2);
  const random = take(32);
  const sessionId = take(u(1));
  const suites = take(u(2));
  const compression = [...take(u(1))];
  const extensions = new Map<number, Buffer>();
  const order: number[] = [];
  if (o < bytes.length) {
    const end = u(2) + o;
    while (o < end) {
      const type = u(2);
      order.push(type);
      extensions.set(type, take(u(2)));
    }
  }
  const codes: number[] = [];
  for (let i = 0; i < suites.length; i += 2) codes.push(suites.readUInt16BE(i));
  return { record, hs, version, random, sessionId, codes, compression, extensions, order, end: o };
}

describe('buildClientHello', () => {
  it('writes a TLS 1.2 hello field by field: record, handshake header, version, random, suites, extensions', () => {
    const random = Buffer.alloc(32, 7);
    const { bytes } = buildClientHello({
      version: 'TLSv1.2',
      cipherSuites: [0xc02f, 0x009e, 0x00ff],
      serverName: 'example.test',
      alpn: ['h2', 'http/1.1'],
      statusRequest: true,
      heartbeat: true,
      random,
    });
    const h = readHello(bytes);
    expect(h.end).toBe(bytes.length);
    expect(h.record).toEqual({ type: 22, version: 0x0301, length: bytes.length - 5 });
    expect(h.hs).toEqual({ type: 1, length: bytes.length - 9 });
    expect(h.version).toBe(0x0303);
    expect(h.random.equals(random)).toBe(true);
    expect(h.sessionId.length).toBe(0);
    expect(h.codes).toEqual([0xc02f, 0x009e, 0x00ff]);
    expect(h.compression).toEqual([0]);
    // server_name: list length, host_name(0), name length, name (RFC 6066 §3).
    expect(h.extensions.get(EXTENSION.server_name)?.toString('hex')).toBe(
      `000f00000c${Buffer.from('example.test').toString('hex')}`,
    );
    expect(h.extensions.get(EXTENSION.alpn)?.toString('hex')).toBe('000c02683208687474702f312e31');
    expect(h.extensions.get(EXTENSION.renegotiation_info)?.toString('hex')).toBe('00');
    expect(h.extensions.get(EXTENSION.supported_groups)?.toString('hex')).toBe('0006001d00170018');
    expect(h.extensions.get(EXTENSION.ec_point_formats)?.toString('hex')).toBe('0100');
    expect(h.extensions.get(EXTENSION.status_request)?.toString('hex')).toBe('0100000000');
    expect(h.extensions.get(EXTENSION.heartbeat)?.toString('hex')).toBe('01');
    expect(h.extensions.get(EXTENSION.extended_master_secret)?.length).toBe(0);
    expect(h.extensions.get(EXTENSION.session_ticket)?.length).toBe(0);
    expect(h.extensions.get(EXTENSION.signature_algorithms)?.readUInt16BE(0)).toBeGreaterThan(0);
    expect(h.extensions.has(EXTENSION.supported_versions)).toBe(false);
    expect(h.extensions.has(EXTENSION.key_share)).toBe(false);
  });

  it('offers TLS 1.3 in supported_versions with an x25519 share, a 32-byte session id and legacy_version 1.2', () => {
    const { bytes, keyShareGroups } = buildClientHello({
      version: 'TLSv1.3',
      cipherSuites: [0x1301, 0x1302],
      groups: [NAMED_GROUPS.x25519, NAMED_GROUPS.secp384r1],
    });
    const h = readHello(bytes);
    expect(h.version).toBe(0x0303);
    expect(h.sessionId.length).toBe(32);
    expect(h.extensions.get(EXTENSION.supported_versions)?.toString('hex')).toBe('020304');
    const share = h.extensions.get(EXTENSION.key_share)!;
    // client_shares length 36 = group(2) + length(2) + 32-byte X25519 key.
    expect(share.readUInt16BE(0)).toBe(36);
    expect(share.readUInt16BE(2)).toBe(NAMED_GROUPS.x25519);
    expect(share.readUInt16BE(4)).toBe(32);
    expect(keyShareGroups).toEqual([NAMED_GROUPS.x25519]);
  });

  it('makes shares for the NIST curves and x448, and none when asked for none', () => {
    const h = readHello(
      buildClientHello({
        version: 'TLSv1.3',
        cipherSuites: [0x1301],
        groups: [NAMED_GROUPS.secp256r1, NAMED_GROUPS.x448],
        keyShares: ['secp256r1', 'x448'],
      }).bytes,
    );
    const share = h.extensions.get(EXTENSION.key_share)!;
    expect(share.readUInt16BE(2)).toBe(NAMED_GROUPS.secp256r1);
    expect(share.readUInt16BE(4)).toBe(65);
    expect(share[6]).toBe(4); // uncompressed point
    expect(share.readUInt16BE(6 + 65)).toBe(NAMED_GROUPS.x448);
    expect(share.readUInt16BE(8 + 65)).toBe(56);
    const none = readHello(
      buildClientHello({ version: 'TLSv1.3', cipherSuites: [0x1301], groups: [0x11ec], keyShares: [] }).bytes,
    );
    expect(none.extensions.get(EXTENSION.key_share)?.toString('hex')).toBe('0000');
  });

  it('writes an SSLv3 hello with SSLv3 record and hello versions and, when asked, no extensions', () => {
    const { bytes } = buildClientHello({
      version: 'SSLv3',
      cipherSuites: [0x0004, 0x000a],
      noExtensions: true,
    });
    const h = readHello(bytes);
    expect(h.record.version).toBe(0x0300);
    expect(h.version).toBe(0x0300);
    expect(h.order).toEqual([]);
    expect(h.end).toBe(bytes.length);
  });

  it('pads a hello of 256-511 bytes to 512 (RFC 7685) and offers DEFLATE when asked', () => {
    const suites = Array.from({ length: 100 }, (_, i) => 0xc000 + i);
    const { bytes } = buildClientHello({
      version: 'TLSv1.2',
      cipherSuites: suites,
      compressionMethods: [1, 0],
    });
    const h = readHello(bytes);
    expect(bytes.length - 5).toBe(512);
    expect(h.extensions.has(EXTENSION.padding)).toBe(true);
    expect(h.compression).toEqual([1, 0]);
  });
});

describe('buildSslv2ClientHello', () => {
  it('writes the SSLv2 CLIENT-HELLO: 2-byte header with the top bit, type 1, version 2, 3-byte specs, challenge', () => {
    const challenge = Buffer.alloc(16, 0xab);
    const bytes = buildSslv2ClientHello([0x010080, 0x0700c0], challenge);
    expect(bytes.readUInt16BE(0)).toBe(0x8000 | (bytes.length - 2));
    expect(bytes.subarray(2, 11).toString('hex')).toBe('010002000600000010');
    expect(bytes.subarray(11, 17).toString('hex')).toBe('0100800700c0');
    expect(bytes.subarray(17).equals(challenge)).toBe(true);
  });
});
