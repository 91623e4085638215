import { describe, expect, it } from 'vitest';
import { HELLO_RETRY_REQUEST_RANDOM, parseServerReply } from '../../../src/tls-scan/server-hello.js';

const hex = (s: string) => Buffer.from(s.replace(/\s+/g, ''), 'hex');

// RFC 8448 §3 (Simple 1-RTT Handshake), "{server} construct a ServerHello handshake message".
const RFC8448_SERVER_HELLO = hex(`
  02 00 00 56 03 03 a6 af 06 a4 12 18 60 dc 5e 6e 60 24 9c d3 4c 95 93 0c 8a c5 cb 14 34 da c1 55 77 2e
  d3 e2 69 28 00 13 01 00 00 2e 00 33 00 24 00 1d 00 20 c9 82 88 76 11 20 95 fe 66 76 2b db f7 c6 72 e1
  56 d6 cc 25 3b 83 3d f1 dd 69 b1 b0 4e 75 1f 0f 00 2b 00 02 03 04`);

const record = (type: number, body: Buffer, version = 0x0303) =>
  Buffer.concat([
    Buffer.from([type, version >> 8, version & 0xff, body.length >> 8, body.length & 0xff]),
    body,
  ]);

/** A TLS 1.2 ServerHello with the given extensions (type, data). */
function tls12Hello(suite: number, extensions: [number, string][], random = Buffer.alloc(32, 1)): Buffer {
  const ext = Buffer.concat(
    extensions.map(([type, data]) => {
      const d = hex(data);
      return Buffer.concat([Buffer.from([type >> 8, type & 0xff, d.length >> 8, d.length & 0xff]), d]);
    }),
  );
  const body = Buffer.concat([
    hex('0303'),
    random,
    hex('00'),
    Buffer.from([suite >> 8, suite & 0xff]),
    hex('00'),
    Buffer.from([ext.length >> 8, ext.length & 0xff]),
    ext,
  ]);
  return Buffer.concat([Buffer.from([2, 0, body.length >> 8, body.length & 0xff]), body]);
}

describe('parseServerReply', () => {
  it('reads the RFC 8448 §3 ServerHello: TLS 1.3 by supported_versions, TLS_AES_128_GCM_SHA256, an x25519 share', () => {
    const reply = parseServerReply(record(22, RFC8448_SERVER_HELLO));
    expect(reply).toMatchObject({
      kind: 'server_hello',
      version: 'TLSv1.3',
      legacyVersion: 0x0303,
      cipherSuite: 0x1301,
      compressionMethod: 0,
      downgradeSentinel: null,
      extensions: { types: [0x33, 0x2b], keyShareGroup: 0x1d, secureRenegotiation: false },
    });
  });

  it('is incomplete until a record split across reads is whole, at every cut', () => {
    const bytes = record(22, RFC8448_SERVER_HELLO);
    for (let cut = 0; cut < bytes.length; cut++) {
      expect(parseServerReply(bytes.subarray(0, cut)).kind, `cut at ${cut}`).toBe('incomplete');
    }
    expect(parseServerReply(bytes).kind).toBe('server_hello');
  });

  it('reassembles a ServerHello split over two records, and keeps the messages after it in the same record', () => {
    const hello = tls12Hello(0xc02f, [
      [0xff01, '00'],
      [0x0017, ''],
      [0x0023, ''],
      [0x0010, '0003026832'],
      [0x000f, '01'],
      [0x000b, '0100'],
    ]);
    const split = Buffer.concat([record(22, hello.subarray(0, 20)), record(22, hello.subarray(20))]);
    expect(parseServerReply(split)).toMatchObject({
      kind: 'server_hello',
      version: 'TLSv1.2',
      cipherSuite: 0xc02f,
      extensions: {
        secureRenegotiation: true,
        extendedMasterSecret: true,
        sessionTicket: true,
        alpn: 'h2',
        heartbeat: 1,
        ecPointFormats: [0],
        keyShareGroup: null,
      },
    });
    const certificate = hex('0b000003000000');
    const done = hex('0e000000');
    const together = record(22, Buffer.concat([hello, certificate, done]));
    const reply = parseServerReply(together);
    expect(reply.kind === 'server_hello' && reply.following.map((m) => m.type)).toEqual([11, 14]);
  });

  it('tells a HelloRetryRequest by its random and reads the selected group (RFC 8446 §4.1.3, §4.2.8)', () => {
    const hrr = tls12Hello(
      0x1302,
      [
        [0x002b, '0304'],
        [0x0033, '0018'],
      ],
      HELLO_RETRY_REQUEST_RANDOM,
    );
    expect(parseServerReply(record(22, hrr))).toEqual({
      kind: 'hello_retry_request',
      version: 'TLSv1.3',
      cipherSuite: 0x1302,
      selectedGroup: 0x18,
      extensions: [0x2b, 0x33],
    });
  });

  it('sees the TLS 1.2 downgrade sentinel in a ServerHello random', () => {
    const random = Buffer.concat([Buffer.alloc(24, 9), hex('444f574e47524401')]);
    const reply = parseServerReply(record(22, tls12Hello(0xc030, [], random)));
    expect(reply).toMatchObject({ kind: 'server_hello', downgradeSentinel: 'TLSv1.2' });
  });

  it('reads an SSLv3 ServerHello without an extensions block', () => {
    const body = Buffer.concat([hex('0300'), Buffer.alloc(32, 2), hex('00 0004 00')]);
    const hello = Buffer.concat([hex('020000'), Buffer.from([body.length]), body]);
    expect(parseServerReply(record(22, hello, 0x0300))).toMatchObject({
      kind: 'server_hello',
      version: 'SSLv3',
      cipherSuite: 0x0004,
      extensions: { types: [], secureRenegotiation: false },
    });
  });

  it('names an alert (RFC 8446 §6)', () => {
    expect(parseServerReply(hex('15 0303 0002 02 28'))).toEqual({
      kind: 'alert',
      level: 2,
      description: 40,
      name: 'handshake_failure',
    });
    expect(parseServerReply(hex('15 0301 0002 02 46'))).toMatchObject({ name: 'protocol_version' });
    expect(parseServerReply(hex('15 0301 0002 02 56'))).toMatchObject({ name: 'inappropriate_fallback' });
    expect(parseServerReply(hex('15 0303 0002 02 fa'))).toMatchObject({ name: 'alert_250' });
  });

  it('reads an SSLv2 SERVER-HELLO and an SSLv2 ERROR', () => {
    const cert = Buffer.from('fake-der');
    const body = Buffer.concat([
      hex('04 00 01 0002'),
      Buffer.from([0, cert.length, 0, 6, 0, 16]),
      cert,
      hex('0700c0 010080'),
      Buffer.alloc(16, 3),
    ]);
    const bytes = Buffer.concat([Buffer.from([0x80 | (body.length >> 8), body.length & 0xff]), body]);
    expect(parseServerReply(bytes.subarray(0, 10)).kind).toBe('incomplete');
    expect(parseServerReply(bytes)).toMatchObject({
      kind: 'sslv2_server_hello',
      version: 2,
      certificateType: 1,
      cipherSpecs: [0x0700c0, 0x010080],
      certificate: cert,
    });
    expect(parseServerReply(hex('8003 00 0001'))).toEqual({ kind: 'sslv2_error', code: 1 });
  });

  it('calls what no TLS server sends garbage, saying what it saw', () => {
    expect(parseServerReply(Buffer.from('HTTP/1.1 400 Bad Request\r\n'))).toMatchObject({
      kind: 'garbage',
      head: 'HTTP/1.1 400 Bad Request..',
    });
    expect(parseServerReply(hex('16 0903 0002 0000'))).toMatchObject({
      kind: 'garbage',
      reason: 'record version 9.3',
    });
    expect(parseServerReply(record(22, hex('0b000000')))).toMatchObject({ kind: 'garbage' });
    // A ServerHello whose session id length runs past its end.
    expect(parseServerReply(record(22, hex('02000003 0303 ff')))).toMatchObject({ kind: 'garbage' });
  });
});
