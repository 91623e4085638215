/**
 * A throwaway PKI for tests: one CA and a localhost server leaf, generated in
 * memory when first asked for, so no private key is ever committed.
 *
 * ECDSA P-256 keeps generation to a few milliseconds. The extensions are the
 * ones a strict verifier expects (RFC 5280 §4.2; CA/Browser Forum Baseline
 * Requirements §7.1.2): leaves carry a SAN, keyUsage digitalSignature,
 * extKeyUsage serverAuth and basicConstraints CA:false; the CA carries
 * basicConstraints CA:true and keyUsage keyCertSign. Node's TLS (OpenSSL) and
 * undici accept the leaves when given `caPem` as their trust anchor.
 */
// @peculiar/x509 resolves its internals through tsyringe, which needs a Reflect
// metadata polyfill loaded before the library itself.
import 'reflect-metadata';
import type { webcrypto } from 'node:crypto';
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as x509 from '@peculiar/x509';

export interface IssuedCert {
  certPem: string;
  keyPem: string;
}

export interface IssueOptions {
  /** DNS names for the subjectAltName. */
  dnsNames?: string[];
  /** IPv4/IPv6 literals for the subjectAltName. */
  ips?: string[];
  /** Default: an hour ago (or 30 days before `notAfter` when that is in the past). */
  notBefore?: Date;
  /** Default: 30 days after `notBefore`, and never earlier than an hour from now unless given. */
  notAfter?: Date;
  /** Sign with the leaf's own key instead of the test CA. */
  selfSigned?: boolean;
  /** Subject CN. Default: the first DNS name, else the first IP, else "netdiag test leaf". */
  commonName?: string;
  /** Sign with this intermediate (from `issueIntermediate`) instead of the test CA. */
  issuer?: TestIssuer;
  /**
   * The leaf's key: 'ecdsa' (P-256, the default) or 'rsa' (RSASSA-PKCS1-v1_5 2048, for RSA
   * key exchange and dual-certificate servers). One RSA key pair per process serves every RSA
   * leaf: generating one takes far longer than a P-256 key.
   */
  keyType?: 'ecdsa' | 'rsa';
}

/** An intermediate CA under the test CA: serve `certPem` after the leaf to send a full chain. */
export interface TestIssuer extends IssuedCert {
  readonly signer: Signer;
}

export interface IntermediateOptions {
  /** Default "netdiag test intermediate". */
  commonName?: string;
  /** Default: a day ago (or 30 days before `notAfter` when that is in the past). */
  notBefore?: Date;
  /** Default: 180 days from now. */
  notAfter?: Date;
}

/** The certificate and key an intermediate signs with. */
export interface Signer {
  certificate: x509.X509Certificate;
  privateKey: webcrypto.CryptoKey;
}

export interface TestPki {
  caPem: string;
  /** The CA's private key (PKCS#8 PEM), for tools that sign as the CA, e.g. `openssl ocsp` (test/fakes/ocsp-responses.ts). */
  caKeyPem: string;
  /** The CA PEM written to a temp file, for NODE_EXTRA_CA_CERTS in child processes. */
  caFile: string;
  /** Leaf for localhost, 127.0.0.1, ::1 and 127.0.0.2..127.0.0.9. */
  server: IssuedCert;
  /** Issues a further certificate, e.g. expired, for the wrong name, or self-signed. */
  issue(opts: IssueOptions): Promise<IssuedCert>;
  /** Issues an intermediate CA certificate signed by the test CA, for `issue({ issuer })`. */
  issueIntermediate(opts?: IntermediateOptions): Promise<TestIssuer>;
}

const KEY_ALGORITHM: webcrypto.EcKeyGenParams = { name: 'ECDSA', namedCurve: 'P-256' };
const SIGNING_ALGORITHM: webcrypto.EcdsaParams = { name: 'ECDSA', hash: 'SHA-256' };
const RSA_KEY_ALGORITHM: webcrypto.RsaHashedKeyGenParams = {
  name: 'RSASSA-PKCS1-v1_5',
  modulusLength: 2048,
  publicExponent: new Uint8Array([1, 0, 1]),
  hash: 'SHA-256',
};
const HOUR_MS = 60 * 60 * 1000;
const DAY_MS = 24 * HOUR_MS;

/** Every loopback name and address a fake upstream or target may be reached on. */
const SERVER_DNS_NAMES = ['localhost'];
const SERVER_IPS = ['127.0.0.1', '::1', ...Array.from({ length: 8 }, (_, i) => `127.0.0.${i + 2}`)];

let pending: Promise<TestPki> | undefined;

/** The process-wide test PKI; generated once, then shared by every caller. */
export function getTestPki(): Promise<TestPki> {
  pending ??= createPki('netdiag test CA')
    .then((pki) => ({ ...pki, caFile: writeCaFile(pki.caPem) }))
    .catch((err: unknown) => {
      // Do not memoize a failure: the next caller gets a fresh attempt.
      pending = undefined;
      throw err;
    });
  return pending;
}

let untrusted: Promise<IssuedCert> | undefined;

/**
 * A leaf for the same loopback names and addresses as the test PKI's `server`, issued by
 * another CA, generated in memory and never handed to a client: a fake serving it is a TLS
 * failure whose only fault is the issuer (UNABLE_TO_VERIFY_LEAF_SIGNATURE). One per process.
 */
export function untrustedLeaf(): Promise<IssuedCert> {
  untrusted ??= createPki('untrusted fault-injection CA').then((pki) => pki.server);
  return untrusted;
}

/**
 * A PKI of its own (a root named `caName`, its server leaf, and the means to issue more), for
 * tests that need an authority apart from the process-wide test CA: a Mark Verifying
 * Authority (test/fakes/test-vmc.ts), a CA nobody trusts. Nothing trusts it unless told to.
 */
export async function createPki(caName: string): Promise<Omit<TestPki, 'caFile'>> {
  const caKeys = await generateKeys();
  const now = Date.now();
  const caCert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: randomSerial(),
    name: `CN=${escapeRdnValue(caName)}, O=netdiag tests`,
    notBefore: new Date(now - DAY_MS),
    notAfter: new Date(now + 365 * DAY_MS),
    keys: caKeys,
    signingAlgorithm: SIGNING_ALGORITHM,
    extensions: [
      // pathLenConstraint 1: one intermediate may sit between the CA and a leaf (RFC 5280 §4.2.1.9).
      new x509.BasicConstraintsExtension(true, 1, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(caKeys.publicKey),
    ],
  });
  const caPem = caCert.toString('pem');
  const caSigner: Signer = { certificate: caCert, privateKey: caKeys.privateKey };

  const issue = async (opts: IssueOptions): Promise<IssuedCert> => {
    const rsa = opts.keyType === 'rsa';
    const keys = rsa ? await rsaKeys() : await generateKeys();
    const { notBefore, notAfter } = validity(opts);
    const dnsNames = opts.dnsNames ?? [];
    const ips = opts.ips ?? [];
    const commonName = opts.commonName ?? dnsNames[0] ?? ips[0] ?? 'netdiag test leaf';
    const extensions: x509.Extension[] = [
      new x509.BasicConstraintsExtension(false, undefined, true),
      // An RSA leaf may also decrypt a premaster secret (RSA key exchange, RFC 5246 §7.4.7.1).
      new x509.KeyUsagesExtension(
        x509.KeyUsageFlags.digitalSignature | (rsa ? x509.KeyUsageFlags.keyEncipherment : 0),
        true,
      ),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ];
    const altNames = [
      ...dnsNames.map((value) => ({ type: 'dns' as const, value })),
      ...ips.map((value) => ({ type: 'ip' as const, value })),
    ];
    // An empty SAN extension is invalid DER (GeneralNames is SIZE (1..MAX)); a
    // leaf without names is still useful to test "no SAN" handling.
    if (altNames.length > 0) extensions.push(new x509.SubjectAlternativeNameExtension(altNames));

    const subject = `CN=${escapeRdnValue(commonName)}`;
    const signer = opts.issuer?.signer ?? caSigner;
    const cert = opts.selfSigned
      ? await x509.X509CertificateGenerator.createSelfSigned({
          serialNumber: randomSerial(),
          name: subject,
          notBefore,
          notAfter,
          keys,
          signingAlgorithm: rsa ? RSA_KEY_ALGORITHM : SIGNING_ALGORITHM,
          extensions,
        })
      : await x509.X509CertificateGenerator.create({
          serialNumber: randomSerial(),
          subject,
          issuer: signer.certificate.subject,
          notBefore,
          notAfter,
          publicKey: keys.publicKey,
          signingKey: signer.privateKey,
          signingAlgorithm: SIGNING_ALGORITHM,
          extensions: [...extensions, await x509.AuthorityKeyIdentifierExtension.create(signer.certificate)],
        });
    return { certPem: cert.toString('pem'), keyPem: await privateKeyPem(keys.privateKey) };
  };

  const issueIntermediate = async (opts: IntermediateOptions = {}): Promise<TestIssuer> => {
    const keys = await generateKeys();
    const now = Date.now();
    const notAfter = opts.notAfter ?? new Date(now + 180 * DAY_MS);
    const notBefore = opts.notBefore ?? new Date(Math.min(now - DAY_MS, notAfter.getTime() - 30 * DAY_MS));
    const certificate = await x509.X509CertificateGenerator.create({
      serialNumber: randomSerial(),
      subject: `CN=${escapeRdnValue(opts.commonName ?? 'netdiag test intermediate')}, O=netdiag tests`,
      issuer: caCert.subject,
      notBefore,
      notAfter,
      publicKey: keys.publicKey,
      signingKey: caKeys.privateKey,
      signingAlgorithm: SIGNING_ALGORITHM,
      // A CA that may issue leaves only (pathLenConstraint 0), as issuing intermediates of public CAs are.
      extensions: [
        new x509.BasicConstraintsExtension(true, 0, true),
        new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
        await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
        await x509.AuthorityKeyIdentifierExtension.create(caCert),
      ],
    });
    return {
      certPem: certificate.toString('pem'),
      keyPem: await privateKeyPem(keys.privateKey),
      signer: { certificate, privateKey: keys.privateKey },
    };
  };

  const server = await issue({ dnsNames: SERVER_DNS_NAMES, ips: SERVER_IPS });

  return { caPem, caKeyPem: await privateKeyPem(caKeys.privateKey), server, issue, issueIntermediate };
}

/**
 * Writes the CA to `<tmp>/netdiag-test-ca/ca-<pid>.pem`. Test workers are often
 * killed rather than exiting, so the exit hook alone would leak a file per
 * worker per run: each new PKI also sweeps the files of processes that are gone.
 */
function writeCaFile(caPem: string): string {
  const dir = join(tmpdir(), 'netdiag-test-ca');
  mkdirSync(dir, { recursive: true });
  for (const name of readdirSync(dir)) {
    const pid = /^ca-(\d+)\.pem$/.exec(name)?.[1];
    if (pid !== undefined && !isAlive(Number(pid))) rmSync(join(dir, name), { force: true });
  }
  const caFile = join(dir, `ca-${process.pid}.pem`);
  writeFileSync(caFile, caPem);
  process.once('exit', () => rmSync(caFile, { force: true }));
  return caFile;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0); // signal 0: existence check only
    return true;
  } catch (err) {
    // EPERM: it exists but belongs to someone else.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function generateKeys(): Promise<webcrypto.CryptoKeyPair> {
  // Extractable so the private key can be exported as PEM for the TLS server.
  return crypto.subtle.generateKey(KEY_ALGORITHM, true, ['sign', 'verify']);
}

let rsaPair: Promise<webcrypto.CryptoKeyPair> | undefined;

/** The process's one RSA key pair (see IssueOptions.keyType). */
function rsaKeys(): Promise<webcrypto.CryptoKeyPair> {
  rsaPair ??= crypto.subtle.generateKey(RSA_KEY_ALGORITHM, true, ['sign', 'verify']).catch((err: unknown) => {
    rsaPair = undefined;
    throw err;
  });
  return rsaPair;
}

let rsaServer: Promise<IssuedCert> | undefined;

/**
 * An RSA 2048 leaf from the test CA for the same names and addresses as the test PKI's
 * `server` (which is ECDSA P-256): RSA key exchange, ECDHE-RSA and DHE-RSA suites, and the
 * second certificate of a dual-certificate server. One per process.
 */
export function rsaServerLeaf(): Promise<IssuedCert> {
  rsaServer ??= getTestPki()
    .then((pki) => pki.issue({ dnsNames: SERVER_DNS_NAMES, ips: SERVER_IPS, keyType: 'rsa' }))
    .catch((err: unknown) => {
      rsaServer = undefined;
      throw err;
    });
  return rsaServer;
}

async function privateKeyPem(key: webcrypto.CryptoKey): Promise<string> {
  const pkcs8 = await crypto.subtle.exportKey('pkcs8', key);
  return x509.PemConverter.encode(pkcs8, 'PRIVATE KEY');
}

/**
 * 128 random bits as hex with the top bit cleared, so the DER INTEGER is
 * positive (RFC 5280 §4.1.2.2), and the low bit set, so it is never zero.
 */
function randomSerial(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  bytes[0] = (bytes[0]! & 0x7f) | 0x01;
  return Buffer.from(bytes).toString('hex');
}

function validity(opts: IssueOptions): { notBefore: Date; notAfter: Date } {
  const now = Date.now();
  if (opts.notBefore && opts.notAfter) return { notBefore: opts.notBefore, notAfter: opts.notAfter };
  if (opts.notAfter) {
    // Back-date the start so an already-expired leaf still has notBefore < notAfter.
    const notBefore = new Date(Math.min(now - HOUR_MS, opts.notAfter.getTime() - 30 * DAY_MS));
    return { notBefore, notAfter: opts.notAfter };
  }
  const notBefore = opts.notBefore ?? new Date(now - HOUR_MS);
  const notAfter = new Date(Math.max(now, notBefore.getTime()) + 30 * DAY_MS);
  return { notBefore, notAfter };
}

/** Escapes the characters RFC 4514 §2.4 reserves in a distinguished-name value. */
function escapeRdnValue(value: string): string {
  return value.replace(/[,+"\\<>;=]/g, (ch) => `\\${ch}`).replace(/^[ #]|[ ]$/g, (ch) => `\\${ch}`);
}
