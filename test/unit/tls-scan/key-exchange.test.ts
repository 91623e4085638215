import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { readServerKeyExchange } from '../../../src/tls-scan/key-exchange.js';
import type { ServerHello } from '../../../src/tls-scan/server-hello.js';

const hello = (ske: Buffer | undefined): ServerHello =>
  ({
    following: ske
      ? [
          { type: 11, body: Buffer.alloc(3) },
          { type: 12, body: ske },
        ]
      : [],
  }) as unknown as ServerHello;

/** ServerDHParams (RFC 5246 §7.4.3): dh_p, dh_g, dh_Ys, each with a two-byte length. */
function dhParams(prime: Buffer): Buffer {
  const len = Buffer.alloc(2);
  len.writeUInt16BE(prime.length);
  return Buffer.concat([len, prime, Buffer.from([0, 1, 2, 0, 1, 5])]);
}

describe('readServerKeyExchange', () => {
  it('reads an ECDHE named curve (RFC 8422 §5.4)', () => {
    // named_curve(3), secp384r1(24), a point of length 1.
    expect(readServerKeyExchange(hello(Buffer.from([3, 0, 24, 1, 4])), 'ECDHE')).toEqual({ group: 24 });
  });

  it('does not read explicit curves as a named one', () => {
    expect(readServerKeyExchange(hello(Buffer.from([1, 0, 24])), 'ECDHE')).toBeUndefined();
  });

  it('counts a DHE prime by its bits, leading zero bytes and bits aside', () => {
    const p2048 = Buffer.alloc(256, 0xff);
    expect(readServerKeyExchange(hello(dhParams(p2048)), 'DHE')).toEqual({ dhBits: 2048, dhGroup: null });
    // A leading zero byte (some servers send one) and a top byte 0x7f: 1023 bits in 129 bytes.
    const odd = Buffer.concat([Buffer.from([0, 0x7f]), Buffer.alloc(127, 0xff)]);
    expect(readServerKeyExchange(hello(dhParams(odd)), 'DHE')).toEqual({ dhBits: 1023, dhGroup: null });
  });

  it('is undefined without a ServerKeyExchange or with a truncated one', () => {
    expect(readServerKeyExchange(hello(undefined), 'DHE')).toBeUndefined();
    expect(readServerKeyExchange(hello(Buffer.from([1, 0, 0xff])), 'DHE')).toBeUndefined();
  });
});

describe('RFC 7919 groups', () => {
  const openssl = spawnSync('openssl', ['version']).status === 0;
  it.skipIf(!openssl)('recognises each ffdhe prime as OpenSSL names it, and no other', () => {
    for (const group of ['ffdhe2048', 'ffdhe3072', 'ffdhe4096', 'ffdhe6144', 'ffdhe8192'] as const) {
      const pem = spawnSync('openssl', [
        'genpkey',
        '-genparam',
        '-algorithm',
        'DH',
        '-pkeyopt',
        `group:${group}`,
      ]).stdout;
      // DHParameter ::= SEQUENCE { prime INTEGER, base INTEGER } (PKCS #3).
      const der = asn1parse(pem.toString());
      const prime = Buffer.from(der.match(/INTEGER\s*:([0-9A-F]+)/)![1]!, 'hex');
      expect(readServerKeyExchange(hello(dhParams(prime)), 'DHE')).toEqual({
        dhBits: Number(group.slice(5)),
        dhGroup: group,
      });
      const changed = Buffer.from(prime);
      changed.writeUInt8(changed.readUInt8(changed.length - 2) ^ 1, changed.length - 2);
      expect(readServerKeyExchange(hello(dhParams(changed)), 'DHE')?.dhGroup).toBeNull();
    }
  });
});

/** `openssl asn1parse` of DH parameters: the prime as the first INTEGER line. */
function asn1parse(pem: string): string {
  return spawnSync('openssl', ['asn1parse'], { input: pem }).stdout.toString();
}
