import { describe, expect, it } from 'vitest';
import {
  CIPHER_SUITES,
  cipherSuite,
  EMPTY_RENEGOTIATION_INFO_SCSV,
  FALLBACK_SCSV,
  SSLV2_CIPHER_SPECS,
  suitesFor,
} from '../../../src/tls-scan/cipher-suites.js';

// Rows copied from the IANA registry (tls-parameters-4.csv): Value, Description.
const IANA_SAMPLE: [number, string][] = [
  [0x0004, 'TLS_RSA_WITH_RC4_128_MD5'],
  [0x000a, 'TLS_RSA_WITH_3DES_EDE_CBC_SHA'],
  [0x0033, 'TLS_DHE_RSA_WITH_AES_128_CBC_SHA'],
  [0x009e, 'TLS_DHE_RSA_WITH_AES_128_GCM_SHA256'],
  [0x00c6, 'TLS_SM4_GCM_SM3'],
  [0x1301, 'TLS_AES_128_GCM_SHA256'],
  [0x1305, 'TLS_AES_128_CCM_8_SHA256'],
  [0x1306, 'TLS_AEGIS_256_SHA384'],
  [0xc02f, 'TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256'],
  [0xc030, 'TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384'],
  [0xc0aa, 'TLS_PSK_DHE_WITH_AES_128_CCM_8'],
  [0xc0b4, 'TLS_SHA256_SHA256'],
  [0xc106, 'TLS_GOSTR341112_256_WITH_MAGMA_MGM_S'],
  [0xcca8, 'TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256'],
  [0xccae, 'TLS_RSA_PSK_WITH_CHACHA20_POLY1305_SHA256'],
  [0xd005, 'TLS_ECDHE_PSK_WITH_AES_128_CCM_SHA256'],
];

describe('cipher suite table', () => {
  it('holds each code point once, and every IANA-assigned suite under its registry name', () => {
    const codes = CIPHER_SUITES.map((s) => s.code);
    expect(new Set(codes).size).toBe(codes.length);
    for (const [code, name] of IANA_SAMPLE) {
      expect(cipherSuite(code), name).toMatchObject({ name, iana: true });
    }
    // The registry assigns 0x0000-0x00C7 (less its reserved ranges), 0x1301-07, 0xC001-C0B5, ...
    expect(CIPHER_SUITES.filter((s) => s.iana).length).toBeGreaterThan(330);
  });

  it('describes a suite fully: OpenSSL name, key exchange, authentication, encryption, bits, protocols', () => {
    expect(cipherSuite(0xc02f)).toEqual({
      code: 0xc02f,
      name: 'TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256',
      opensslName: 'ECDHE-RSA-AES128-GCM-SHA256',
      keyExchange: 'ECDHE',
      authentication: 'RSA',
      encryption: 'AESGCM',
      bits: 128,
      protocols: ['TLSv1.2'],
      export: false,
      iana: true,
    });
    expect(cipherSuite(0x002f)?.protocols).toEqual(['SSLv3', 'TLSv1', 'TLSv1.1', 'TLSv1.2']);
    expect(cipherSuite(0x0003)).toMatchObject({ export: true, bits: 40, protocols: ['SSLv3', 'TLSv1'] });
    expect(cipherSuite(0x1303)).toMatchObject({ keyExchange: 'any', encryption: 'ChaCha20', bits: 256 });
  });

  it('marks the pre-standard code points as unregistered and keeps signals out', () => {
    expect(cipherSuite(0xcc13)).toMatchObject({ iana: false }); // draft ChaCha20, before RFC 7905
    expect(cipherSuite(0x0062)).toMatchObject({ iana: false, export: true }); // EXP1024
    expect(cipherSuite(EMPTY_RENEGOTIATION_INFO_SCSV)).toBeUndefined();
    expect(cipherSuite(FALLBACK_SCSV)).toBeUndefined();
    expect(cipherSuite(0x0a0a)).toBeUndefined(); // GREASE
  });

  it('lists the suites of a protocol: the five TLS 1.3 AEAD suites of RFC 8446 among them', () => {
    const tls13 = suitesFor('TLSv1.3').map((s) => s.code);
    expect(tls13).toEqual(expect.arrayContaining([0x1301, 0x1302, 0x1303, 0x1304, 0x1305]));
    expect(tls13).not.toContain(0xc02f);
    expect(suitesFor('TLSv1.2').length).toBeGreaterThan(300);
  });

  it('holds the SSLv2 CIPHER-SPECs with three-byte codes', () => {
    expect(SSLV2_CIPHER_SPECS.find((c) => c.code === 0x0700c0)?.name).toBe(
      'SSL_CK_DES_192_EDE3_CBC_WITH_MD5',
    );
    expect(SSLV2_CIPHER_SPECS.every((c) => c.code <= 0xffffff)).toBe(true);
  });
});
