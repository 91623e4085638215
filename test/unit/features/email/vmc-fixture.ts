/**
 * Verified Mark Certificates for tests, made on the fly: an issuing "mark
 * verifying authority" CA and a leaf with the BIMI extended key usage
 * (1.3.6.1.5.5.7.3.31), the domain in its subjectAltName and a logotype
 * extension (RFC 9399). Options make the broken variants the checks must
 * catch. Returns the PEM chain, leaf first, as a BIMI a= URL serves it.
 */
import 'reflect-metadata';
import type { webcrypto } from 'node:crypto';
import * as x509 from '@peculiar/x509';

const KEY: webcrypto.EcKeyGenParams = { name: 'ECDSA', namedCurve: 'P-256' };
const SIGN: webcrypto.EcdsaParams = { name: 'ECDSA', hash: 'SHA-256' };
const DAY = 86_400_000;

export interface VmcOptions {
  domains: string[];
  notBefore?: Date;
  notAfter?: Date;
  /** Default true: the BIMI EKU. false: serverAuth instead (an ordinary TLS certificate). */
  bimiEku?: boolean;
  /** Default true. */
  logotype?: boolean;
  /** Put an unrelated certificate after the leaf instead of its issuer. */
  wrongIssuer?: boolean;
}

async function ca(name: string): Promise<{ cert: x509.X509Certificate; keys: webcrypto.CryptoKeyPair }> {
  const keys = await crypto.subtle.generateKey(KEY, true, ['sign', 'verify']);
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: '01',
    name: `CN=${name}`,
    notBefore: new Date(Date.now() - DAY),
    notAfter: new Date(Date.now() + 365 * DAY),
    keys,
    signingAlgorithm: SIGN,
    extensions: [new x509.BasicConstraintsExtension(true, 0, true)],
  });
  return { cert, keys };
}

export async function issueVmc(opts: VmcOptions): Promise<string> {
  const issuer = await ca('Test Mark Verifying Authority');
  const keys = await crypto.subtle.generateKey(KEY, true, ['sign', 'verify']);
  const extensions: x509.Extension[] = [
    new x509.BasicConstraintsExtension(false, undefined, true),
    new x509.ExtendedKeyUsageExtension([
      opts.bimiEku === false ? x509.ExtendedKeyUsage.serverAuth : '1.3.6.1.5.5.7.3.31',
    ]),
    new x509.SubjectAlternativeNameExtension(opts.domains.map((value) => ({ type: 'dns' as const, value }))),
  ];
  // id-pe-logotype carrying an (empty) LogotypeExtn SEQUENCE: only its presence is checked.
  if (opts.logotype !== false)
    extensions.push(new x509.Extension('1.3.6.1.5.5.7.1.12', false, new Uint8Array([0x30, 0x00])));
  const leaf = await x509.X509CertificateGenerator.create({
    serialNumber: '02',
    subject: `CN=${opts.domains[0] ?? 'mark'}, O=Test Brand`,
    issuer: issuer.cert.subject,
    notBefore: opts.notBefore ?? new Date(Date.now() - DAY),
    notAfter: opts.notAfter ?? new Date(Date.now() + 300 * DAY),
    publicKey: keys.publicKey,
    signingKey: issuer.keys.privateKey,
    signingAlgorithm: SIGN,
    extensions,
  });
  const second = opts.wrongIssuer ? (await ca('Someone Else')).cert : issuer.cert;
  return `${leaf.toString('pem')}\n${second.toString('pem')}\n`;
}
