import { describe, expect, it } from 'vitest';
import {
  CertificateParseError,
  countSerializedScts,
  issuedBy,
  parseCertificate,
  serialHex,
  signatureAlgorithm,
} from '../../../../src/features/tls/certificate.js';
import { makeCert, makeChain, x509 } from './make-cert.js';

describe('parseCertificate', () => {
  it('reads names, serial, validity, SAN, key, signature algorithm and fingerprint from the DER', async () => {
    const notBefore = new Date('2030-01-02T03:04:05Z');
    const notAfter = new Date('2031-01-02T03:04:05Z');
    const { leaf } = await makeChain({
      subject: 'CN=leaf.test, O=Example',
      dnsNames: ['leaf.test', 'WWW.Leaf.Test'],
      ips: ['192.0.2.7', '2001:db8::1'],
      notBefore,
      notAfter,
    });
    const parsed = parseCertificate(leaf.der);
    expect(parsed.subject).toBe('CN=leaf.test, O=Example');
    expect(parsed.issuer).toBe('CN=Unit Intermediate, O=netdiag tests');
    expect(parsed.serial).toBe(leaf.cert.serialNumber.toUpperCase().replace(/^(00)+(?=..)/, ''));
    expect(parsed.notBefore).toEqual(notBefore);
    expect(parsed.notAfter).toEqual(notAfter);
    expect(parsed.dnsNames).toEqual(['leaf.test', 'www.leaf.test']);
    expect(parsed.ipAddresses).toEqual(['192.0.2.7', '2001:db8::1']);
    expect(parsed.key).toEqual({ type: 'EC', curve: 'P-256', bits: 256 });
    expect(parsed.signatureAlgorithm).toEqual({ name: 'ecdsa-with-SHA256', hash: 'SHA-256' });
    expect(parsed.fingerprintSha256).toBe(
      Buffer.from(await leaf.cert.getThumbprint('SHA-256'))
        .toString('hex')
        .toUpperCase()
        .match(/../g)!
        .join(':'),
    );
    expect(parsed.isCa).toBe(false);
    expect(parsed.selfSigned).toBe(false);
    expect(parsed.sctCount).toBe(0);
    expect(parsed.ocspUrls).toEqual([]);
  });

  it('RSA keys report their modulus size; signatures are named as OpenSSL names them', async () => {
    const rsaRoot = await makeCert({ subject: 'CN=RSA Root', ca: true, key: 'rsa-2048' });
    const ecRoot = await makeCert({ subject: 'CN=EC Root', ca: true });
    const weak = await makeCert({ subject: 'CN=weak.test', key: 'rsa-1024', issuer: ecRoot, hash: 'SHA-1' });
    const parsed = parseCertificate(weak.der);
    expect(parsed.key).toEqual({ type: 'RSA', bits: 1024 });
    expect(parsed.signatureAlgorithm).toEqual({ name: 'ecdsa-with-SHA1', hash: 'SHA-1' });
    expect(parseCertificate(rsaRoot.der).signatureAlgorithm).toEqual({
      name: 'sha256WithRSAEncryption',
      hash: 'SHA-256',
    });
  });

  it('a P-384 key', async () => {
    const cert = await makeCert({ subject: 'CN=p384.test', key: 'ec-p384', hash: 'SHA-384' });
    const parsed = parseCertificate(cert.der);
    expect(parsed.key).toEqual({ type: 'EC', curve: 'P-384', bits: 384 });
    expect(parsed.signatureAlgorithm.name).toBe('ecdsa-with-SHA384');
  });

  it('reads OCSP and CA Issuers URLs from Authority Information Access (RFC 5280 §4.2.2.1)', async () => {
    const cert = await makeCert({
      subject: 'CN=aia.test',
      extensions: [
        new x509.AuthorityInfoAccessExtension({
          ocsp: ['http://ocsp.example.test'],
          caIssuers: ['http://ca.example.test/int.der'],
        }),
      ],
    });
    const parsed = parseCertificate(cert.der);
    expect(parsed.ocspUrls).toEqual(['http://ocsp.example.test']);
    expect(parsed.caIssuerUrls).toEqual(['http://ca.example.test/int.der']);
  });

  it('counts the SCTs embedded in the certificate (RFC 6962 §3.3)', async () => {
    // Two dummy SerializedSCTs of 3 and 2 bytes inside the TLS list, inside an OCTET STRING.
    const list = Buffer.from([0x00, 0x09, 0x00, 0x03, 1, 2, 3, 0x00, 0x02, 4, 5]);
    const value = Buffer.concat([Buffer.from([0x04, list.length]), list]);
    const cert = await makeCert({
      subject: 'CN=sct.test',
      extensions: [new x509.Extension('1.3.6.1.4.1.11129.2.4.2', false, value)],
    });
    expect(parseCertificate(cert.der).sctCount).toBe(2);
  });

  it('counts no SCTs when the extension does not wrap the list in an OCTET STRING', async () => {
    const list = Buffer.from([0x00, 0x04, 0x00, 0x02, 1, 2]);
    const asSequence = Buffer.concat([Buffer.from([0x30, list.length]), list]);
    const cert = await makeCert({
      subject: 'CN=sct-bad.test',
      extensions: [new x509.Extension('1.3.6.1.4.1.11129.2.4.2', false, asSequence)],
    });
    expect(parseCertificate(cert.der).sctCount).toBe(0);
  });

  it('a self-signed certificate is recognised by name and signature, with or without keyCertSign', async () => {
    const leafLike = await makeCert({ subject: 'CN=self.test', dnsNames: ['self.test'] });
    const caLike = await makeCert({ subject: 'CN=Self CA', ca: true });
    expect(parseCertificate(leafLike.der).selfSigned).toBe(true);
    expect(parseCertificate(caLike.der)).toMatchObject({ selfSigned: true, isCa: true });
  });

  it('rejects bytes that are not a certificate', () => {
    expect(() => parseCertificate(Buffer.from('not a certificate'))).toThrow(CertificateParseError);
  });
});

describe('issuedBy', () => {
  it('is true only for the certificate whose key signed it', async () => {
    const { root, intermediate, leaf } = await makeChain();
    const [r, i, l] = [root, intermediate, leaf].map((c) => parseCertificate(c.der)) as [
      ReturnType<typeof parseCertificate>,
      ReturnType<typeof parseCertificate>,
      ReturnType<typeof parseCertificate>,
    ];
    expect(issuedBy(l, i)).toBe(true);
    expect(issuedBy(i, r)).toBe(true);
    expect(issuedBy(l, r)).toBe(false);
    expect(issuedBy(i, l)).toBe(false);
  });

  it('a look-alike issuer (same name, another key) does not count', async () => {
    const { intermediate, leaf } = await makeChain();
    const impostor = await makeCert({ subject: intermediate.cert.subject, ca: true });
    expect(issuedBy(parseCertificate(leaf.der), parseCertificate(impostor.der))).toBe(false);
    expect(issuedBy(parseCertificate(leaf.der), parseCertificate(intermediate.der))).toBe(true);
  });
});

describe('signatureAlgorithm', () => {
  it.each([
    ['1.2.840.113549.1.1.4', 'md5WithRSAEncryption', 'MD5'],
    ['1.2.840.113549.1.1.5', 'sha1WithRSAEncryption', 'SHA-1'],
    ['1.2.840.113549.1.1.11', 'sha256WithRSAEncryption', 'SHA-256'],
    ['1.2.840.113549.1.1.12', 'sha384WithRSAEncryption', 'SHA-384'],
    ['1.2.840.10045.4.1', 'ecdsa-with-SHA1', 'SHA-1'],
    ['1.2.840.10045.4.3.2', 'ecdsa-with-SHA256', 'SHA-256'],
    ['1.2.840.10045.4.3.4', 'ecdsa-with-SHA512', 'SHA-512'],
    ['1.3.101.112', 'ED25519', null],
  ])('%s is %s', (oid, name, hash) => {
    expect(signatureAlgorithm(oid, null)).toEqual({ name, hash });
  });

  it('RSASSA-PSS takes its hash from the parameters, SHA-1 when absent (RFC 4055 §3.1)', () => {
    // SEQUENCE { [0] { SEQUENCE { OID sha256, NULL } } }
    const sha256 = Buffer.from('a00f300d06096086480165030402010500', 'hex');
    const params = Buffer.concat([Buffer.from([0x30, sha256.length]), sha256]);
    expect(signatureAlgorithm('1.2.840.113549.1.1.10', params.buffer.slice(params.byteOffset))).toEqual({
      name: 'rsassaPss (SHA-256)',
      hash: 'SHA-256',
    });
    const empty = new Uint8Array([0x30, 0x00]).buffer;
    expect(signatureAlgorithm('1.2.840.113549.1.1.10', empty)).toEqual({
      name: 'rsassaPss (SHA-1)',
      hash: 'SHA-1',
    });
  });

  it.each([
    // SEQUENCE { [0] { SEQUENCE { OID sha512, NULL } } }
    ['a0 0f 300d 0609 608648016503040203 0500', 'SHA-512'],
    // Only saltLength [2]: the hash is still the DEFAULT.
    ['a2 03 020114', 'SHA-1'],
    // SHA3-256 (NIST CSOR): no name here.
    ['a0 0f 300d 0609 608648016503040208 0500', null],
    // The [0] element runs past the SEQUENCE.
    ['a0 0f 300d 0609 6086480165030402', null],
  ])('RSASSA-PSS parameters %s name %s', (inner, hash) => {
    const body = Buffer.from(inner.replaceAll(' ', ''), 'hex');
    const params = Buffer.concat([Buffer.from([0x30, body.length]), body]);
    expect(signatureAlgorithm('1.2.840.113549.1.1.10', new Uint8Array(params).buffer).hash).toBe(hash);
  });

  it('RSASSA-PSS parameters that are no SEQUENCE name no hash', () => {
    expect(signatureAlgorithm('1.2.840.113549.1.1.10', new Uint8Array([0x05, 0x00]).buffer)).toEqual({
      name: 'rsassaPss (unknown hash)',
      hash: null,
    });
  });

  it('an unknown OID is reported as the OID', () => {
    expect(signatureAlgorithm('1.2.3.4', null)).toEqual({ name: '1.2.3.4', hash: null });
  });
});

describe('helpers', () => {
  it('serialHex drops the DER sign byte only', () => {
    expect(serialHex(Uint8Array.from([0x00, 0x8f, 0x01]))).toBe('8F01');
    expect(serialHex(Uint8Array.from([0x0a, 0x00]))).toBe('0A00');
    expect(serialHex(Uint8Array.from([0x00]))).toBe('00');
  });

  it('countSerializedScts rejects a list whose lengths do not add up', () => {
    expect(countSerializedScts(Buffer.from([0x00, 0x04, 0x00, 0x02, 1, 2]))).toBe(1);
    expect(countSerializedScts(Buffer.from([0x00, 0x05, 0x00, 0x02, 1, 2]))).toBe(0);
    expect(countSerializedScts(Buffer.from([0x00, 0x04, 0x00, 0x03, 1, 2]))).toBe(0);
    expect(countSerializedScts(Buffer.from([0x00, 0x02, 0x00, 0x00]))).toBe(0);
  });
});
