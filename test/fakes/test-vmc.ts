/**
 * Verified Mark Certificates for tests, made on the fly with the test PKI
 * (test-ca.ts): a test Mark Verifying Authority, a root of its own apart from
 * the TLS test CA, with an issuing intermediate, and VMCs carrying the BIMI
 * extended key usage (1.3.6.1.5.5.7.3.31), the domain in their
 * subjectAltName and the mark in a logotype extension (RFC 9399: the SVG
 * gzip-compressed in a base64 data: URI, with its hash), encoded with the
 * same ASN.1 schema the service reads it with. Options make the broken
 * variants a validator must refuse. Nothing trusts the test MVA unless a
 * test adds it: `testMarkAuthority().roots` or `.rootFile` (BIMI_VMC_ROOTS_FILE).
 */
import 'reflect-metadata';
import { createHash, type webcrypto } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { id_sha1, id_sha256 } from '@peculiar/asn1-rsa';
import { AsnConvert, OctetString } from '@peculiar/asn1-schema';
import { AlgorithmIdentifier } from '@peculiar/asn1-x509';
import {
  HashAlgAndValue,
  id_pe_logotype,
  LogotypeData,
  LogotypeDetails,
  LogotypeExtn,
  LogotypeImage,
  LogotypeInfo,
} from '@peculiar/asn1-x509-logotype';
import * as x509 from '@peculiar/x509';
import { bundledMarkRoots, type MarkRoots, parseMarkRoots } from '../../src/features/email/bimi-roots.js';
import { fixtureText } from '../fixtures/email/zones.js';
import { createPki, getTestPki, type TestIssuer } from './test-ca.js';

const KEY: webcrypto.EcKeyGenParams = { name: 'ECDSA', namedCurve: 'P-256' };
const SIGN: webcrypto.EcdsaParams = { name: 'ECDSA', hash: 'SHA-256' };
const DAY = 86_400_000;

/** The fixture logo (test/fixtures/email/logo.svg), the mark a VMC carries by default. */
export const MARK_SVG = fixtureText('logo.svg');

export interface VmcOptions {
  domains: string[];
  /** Who signs the VMC. Default 'mva', the test MVA's issuing CA; 'tls-ca': an intermediate of the TLS test CA. */
  issuer?: 'mva' | 'tls-ca';
  notBefore?: Date;
  notAfter?: Date;
  /** Default true: the BIMI EKU. false: serverAuth instead (an ordinary TLS certificate). */
  bimiEku?: boolean;
  /** The SVG embedded in the logotype extension (default MARK_SVG); null: no logotype extension at all. */
  svg?: string | null;
  /** The SVG whose hash the extension states; default the embedded one. */
  hashOf?: string;
  /** Default sha256. */
  hash?: 'sha256' | 'sha1';
  /** Default true, as RFC 9399 requires for SVG in a data: URI. */
  gzip?: boolean;
  /** Append the root after the issuing CA (default false: receivers hold the root). */
  withRoot?: boolean;
}

export interface TestMarkAuthority {
  rootPem: string;
  /** The root in a PEM file, for BIMI_VMC_ROOTS_FILE; removed when the process exits. */
  rootFile: string;
  /** The bundled roots plus the test MVA's: what a service configured with rootFile trusts. */
  roots: MarkRoots;
  issuer: TestIssuer;
}

let mva: Promise<TestMarkAuthority> | undefined;

/** The test Mark Verifying Authority, made once per process. */
export function testMarkAuthority(): Promise<TestMarkAuthority> {
  mva ??= (async () => {
    const pki = await createPki('netdiag test Mark Verifying Authority');
    const issuer = await pki.issueIntermediate({ commonName: 'netdiag test VMC issuing CA' });
    const dir = mkdtempSync(join(tmpdir(), 'netdiag-test-mva-'));
    const rootFile = join(dir, 'root.pem');
    writeFileSync(rootFile, pki.caPem);
    process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
    const extra = parseMarkRoots(pki.caPem, 'test MVA');
    return { rootPem: pki.caPem, rootFile, roots: () => [...bundledMarkRoots(), ...extra], issuer };
  })();
  return mva;
}

/** The TLS test CA's intermediate: a CA that issues, but no Mark Verifying Authority. */
let tlsIssuer: Promise<TestIssuer> | undefined;

/** The VMC and its issuer (and root when asked), PEM, the VMC first, as an a= URL serves them. */
export async function issueVmc(opts: VmcOptions): Promise<string> {
  const authority = await testMarkAuthority();
  tlsIssuer ??= getTestPki().then((pki) =>
    pki.issueIntermediate({ commonName: 'netdiag test TLS intermediate' }),
  );
  const issuer = opts.issuer === 'tls-ca' ? await tlsIssuer : authority.issuer;
  const keys = await crypto.subtle.generateKey(KEY, true, ['sign', 'verify']);
  const extensions: x509.Extension[] = [
    new x509.BasicConstraintsExtension(false, undefined, true),
    new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
    new x509.ExtendedKeyUsageExtension([
      opts.bimiEku === false ? x509.ExtendedKeyUsage.serverAuth : '1.3.6.1.5.5.7.3.31',
    ]),
    new x509.SubjectAlternativeNameExtension(opts.domains.map((value) => ({ type: 'dns' as const, value }))),
    await x509.AuthorityKeyIdentifierExtension.create(issuer.signer.certificate),
  ];
  const svg = opts.svg === undefined ? MARK_SVG : opts.svg;
  if (svg !== null) {
    extensions.push(new x509.Extension(id_pe_logotype, false, logotypeExtension(svg, opts)));
  }
  const notBefore = opts.notBefore ?? new Date(Date.now() - DAY);
  const leaf = await x509.X509CertificateGenerator.create({
    // A leading 01 keeps the DER INTEGER positive (RFC 5280 §4.1.2.2).
    serialNumber: `01${Buffer.from(crypto.getRandomValues(new Uint8Array(8))).toString('hex')}`,
    subject: `CN=${opts.domains[0] ?? 'mark'}, O=Test Brand`,
    issuer: issuer.signer.certificate.subject,
    notBefore,
    notAfter: opts.notAfter ?? new Date(Math.max(Date.now(), notBefore.getTime()) + 300 * DAY),
    publicKey: keys.publicKey,
    signingKey: issuer.signer.privateKey,
    signingAlgorithm: SIGN,
    extensions,
  });
  const chain = [leaf.toString('pem'), issuer.certPem];
  if (opts.withRoot) chain.push(opts.issuer === 'tls-ca' ? (await getTestPki()).caPem : authority.rootPem);
  return `${chain.map((pem) => pem.trim()).join('\n')}\n`;
}

/** DER of a LogotypeExtn whose subject logo is `svg` in a data: URI, with the hash of `opts.hashOf ?? svg`. */
function logotypeExtension(svg: string, opts: VmcOptions): ArrayBuffer {
  const algorithm = opts.hash ?? 'sha256';
  const digest = createHash(algorithm)
    .update(opts.hashOf ?? svg)
    .digest();
  const data = opts.gzip === false ? Buffer.from(svg) : gzipSync(svg);
  const details = new LogotypeDetails({
    mediaType: 'image/svg+xml',
    logotypeHash: [
      new HashAlgAndValue({
        hashAlg: new AlgorithmIdentifier({ algorithm: algorithm === 'sha1' ? id_sha1 : id_sha256 }),
        hashValue: new OctetString(digest),
      }),
    ],
    logotypeURI: [`data:image/svg+xml;base64,${data.toString('base64')}`],
  });
  const extn = new LogotypeExtn({
    subjectLogo: new LogotypeInfo({
      direct: new LogotypeData({ image: [new LogotypeImage({ imageDetails: details })] }),
    }),
  });
  return AsnConvert.serialize(extn);
}
