/**
 * A certificate for the loopback addresses issued by a CA nobody trusts: a
 * fresh CA generated in memory, never written to disk nor handed to a client.
 * A fake upstream serving it is a TLS failure for the code under test, with a
 * leaf that is otherwise in order (SAN for 127.0.0.1, validity, extensions),
 * so the only fault is the issuer (UNABLE_TO_VERIFY_LEAF_SIGNATURE).
 */
import 'reflect-metadata';
import type { webcrypto } from 'node:crypto';
import * as x509 from '@peculiar/x509';

const KEY: webcrypto.EcKeyGenParams = { name: 'ECDSA', namedCurve: 'P-256' };
const SIGN: webcrypto.EcdsaParams = { name: 'ECDSA', hash: 'SHA-256' };
const DAY_MS = 24 * 60 * 60 * 1000;

let pending: Promise<{ certPem: string; keyPem: string }> | undefined;

/** One leaf per process, for localhost, 127.0.0.1 and ::1. */
export function untrustedLeaf(): Promise<{ certPem: string; keyPem: string }> {
  pending ??= issue();
  return pending;
}

async function issue(): Promise<{ certPem: string; keyPem: string }> {
  const now = Date.now();
  const serial = () =>
    Buffer.from(
      crypto.getRandomValues(new Uint8Array(16)).map((b, i) => (i === 0 ? (b & 0x7f) | 1 : b)),
    ).toString('hex');
  const caKeys = await crypto.subtle.generateKey(KEY, true, ['sign', 'verify']);
  const ca = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serial(),
    name: 'CN=untrusted fault-injection CA, O=netdiag tests',
    notBefore: new Date(now - DAY_MS),
    notAfter: new Date(now + 30 * DAY_MS),
    keys: caKeys,
    signingAlgorithm: SIGN,
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign, true),
    ],
  });
  const keys = await crypto.subtle.generateKey(KEY, true, ['sign', 'verify']);
  const leaf = await x509.X509CertificateGenerator.create({
    serialNumber: serial(),
    subject: 'CN=127.0.0.1',
    issuer: ca.subject,
    notBefore: new Date(now - DAY_MS),
    notAfter: new Date(now + 30 * DAY_MS),
    publicKey: keys.publicKey,
    signingKey: caKeys.privateKey,
    signingAlgorithm: SIGN,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
      new x509.SubjectAlternativeNameExtension([
        { type: 'dns', value: 'localhost' },
        { type: 'ip', value: '127.0.0.1' },
        { type: 'ip', value: '::1' },
      ]),
    ],
  });
  const pkcs8 = await crypto.subtle.exportKey('pkcs8', keys.privateKey);
  return { certPem: leaf.toString('pem'), keyPem: x509.PemConverter.encode(pkcs8, 'PRIVATE KEY') };
}
