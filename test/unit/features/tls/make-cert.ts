/**
 * Certificates for the TLS unit tests, made in memory with @peculiar/x509:
 * any key (EC P-256/P-384, RSA of any size), any signature hash (SHA-1
 * included, to test the weak-signature finding), any validity, CA or leaf,
 * and extra extensions (AIA, embedded SCTs, ...). Returns the DER and the
 * signer for issuing children.
 */
import 'reflect-metadata';
import type { webcrypto } from 'node:crypto';
import * as x509 from '@peculiar/x509';

export type KeyKind = 'ec-p256' | 'ec-p384' | 'rsa-1024' | 'rsa-2048';

export interface MadeCert {
  der: Buffer;
  pem: string;
  cert: x509.X509Certificate;
  keys: webcrypto.CryptoKeyPair;
  kind: KeyKind;
}

export interface MakeCertOptions {
  /** Subject DN, e.g. "CN=leaf.test". */
  subject: string;
  /** Signer; omitted: self-signed. */
  issuer?: MadeCert;
  key?: KeyKind;
  /** Signature hash. Default SHA-256. */
  hash?: 'SHA-1' | 'SHA-256' | 'SHA-384';
  notBefore?: Date;
  notAfter?: Date;
  ca?: boolean;
  dnsNames?: string[];
  ips?: string[];
  /** Leave keyUsage out (a self-signed leaf without keyCertSign is the common case). */
  extensions?: x509.Extension[];
}

const DAY = 86_400_000;

async function generate(kind: KeyKind): Promise<webcrypto.CryptoKeyPair> {
  if (kind.startsWith('ec-')) {
    const namedCurve = kind === 'ec-p384' ? 'P-384' : 'P-256';
    return crypto.subtle.generateKey({ name: 'ECDSA', namedCurve }, true, ['sign', 'verify']);
  }
  return crypto.subtle.generateKey(
    {
      name: 'RSASSA-PKCS1-v1_5',
      modulusLength: kind === 'rsa-1024' ? 1024 : 2048,
      publicExponent: new Uint8Array([1, 0, 1]),
      hash: 'SHA-256',
    },
    true,
    ['sign', 'verify'],
  );
}

function signingAlgorithm(kind: KeyKind, hash: string): webcrypto.Algorithm {
  return kind.startsWith('ec-')
    ? ({ name: 'ECDSA', hash } as webcrypto.EcdsaParams)
    : ({ name: 'RSASSA-PKCS1-v1_5', hash } as webcrypto.Algorithm);
}

let serial = 1;

export async function makeCert(opts: MakeCertOptions): Promise<MadeCert> {
  const kind = opts.key ?? 'ec-p256';
  const keys = await generate(kind);
  const now = Date.now();
  const extensions: x509.Extension[] = [
    new x509.BasicConstraintsExtension(opts.ca ?? false, undefined, true),
    ...(opts.ca ? [new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign, true)] : []),
    ...(opts.extensions ?? []),
  ];
  const names = [
    ...(opts.dnsNames ?? []).map((value) => ({ type: 'dns' as const, value })),
    ...(opts.ips ?? []).map((value) => ({ type: 'ip' as const, value })),
  ];
  if (names.length > 0) extensions.push(new x509.SubjectAlternativeNameExtension(names));
  const common = {
    serialNumber: (serial++).toString(16).padStart(4, '0'),
    notBefore: opts.notBefore ?? new Date(now - DAY),
    notAfter: opts.notAfter ?? new Date(now + 90 * DAY),
    extensions,
  };
  const signer = opts.issuer;
  const cert = signer
    ? await x509.X509CertificateGenerator.create({
        ...common,
        subject: opts.subject,
        issuer: signer.cert.subject,
        publicKey: keys.publicKey,
        signingKey: signer.keys.privateKey,
        signingAlgorithm: signingAlgorithm(signer.kind, opts.hash ?? 'SHA-256'),
      })
    : await x509.X509CertificateGenerator.createSelfSigned({
        ...common,
        name: opts.subject,
        keys,
        signingAlgorithm: signingAlgorithm(kind, opts.hash ?? 'SHA-256'),
      });
  return { der: Buffer.from(cert.rawData), pem: cert.toString('pem'), cert, keys, kind };
}

/** A root, an intermediate under it and a leaf under that: the usual public-CA shape. */
export async function makeChain(leafOpts: Partial<MakeCertOptions> = {}) {
  const root = await makeCert({ subject: 'CN=Unit Root, O=netdiag tests', ca: true });
  const intermediate = await makeCert({
    subject: 'CN=Unit Intermediate, O=netdiag tests',
    ca: true,
    issuer: root,
  });
  const leaf = await makeCert({
    subject: 'CN=leaf.test',
    dnsNames: ['leaf.test'],
    issuer: intermediate,
    ...leafOpts,
  });
  return { root, intermediate, leaf };
}

export { x509 };
