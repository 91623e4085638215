/**
 * One X.509 certificate (RFC 5280) parsed into the facts /api/tls reports.
 * Pure: DER in, plain data out, no I/O.
 *
 * Two parsers, each for what it does best: Node's X509Certificate (OpenSSL)
 * for the public key, names as OpenSSL prints them, and signature checks;
 * @peculiar/asn1-x509 for the fields Node 20 does not expose or only as text
 * (the signature algorithm OID, validity as dates, SAN, AIA, basicConstraints,
 * the embedded SCT list) and @peculiar/asn1-rsa for the RSASSA-PSS parameters.
 * @peculiar/x509 builds on the same ASN.1 layer but needs tsyringe and a
 * global Reflect polyfill, which the server does not.
 */
import { createHash, type KeyObject, X509Certificate } from 'node:crypto';
import {
  id_RSASSA_PSS,
  id_sha1,
  id_sha224,
  id_sha256,
  id_sha384,
  id_sha512,
  RsaSaPssParams,
} from '@peculiar/asn1-rsa';
import { AsnConvert, OctetString } from '@peculiar/asn1-schema';
import {
  AuthorityInfoAccessSyntax,
  BasicConstraints,
  Certificate,
  type Extension,
  id_ad_caIssuers,
  id_ad_ocsp,
  id_ce_basicConstraints,
  id_ce_subjectAltName,
  id_pe_authorityInfoAccess,
  SubjectAlternativeName,
} from '@peculiar/asn1-x509';

export interface PublicKeySummary {
  /** 'RSA', 'RSA-PSS', 'EC', 'Ed25519', 'Ed448', 'DSA', or the SPKI algorithm OID when unknown. */
  type: string;
  /** Modulus size for RSA and DSA; field size for EC. */
  bits?: number;
  /** EC only: 'P-256', 'P-384', 'P-521', or OpenSSL's name for other curves. */
  curve?: string;
}

export interface SignatureAlgorithm {
  /** OpenSSL's name ('sha256WithRSAEncryption', 'ecdsa-with-SHA256', 'ED25519'), else the OID. */
  name: string;
  /** The digest it signs with ('SHA-256'), null for Ed25519/Ed448 or when unknown. */
  hash: string | null;
}

export interface ParsedCertificate {
  der: Buffer;
  /** Distinguished names as OpenSSL prints them (attributes in encoded order), joined with ", ". */
  subject: string;
  issuer: string;
  /** Upper-case hex of the serial number's magnitude bytes, as OpenSSL and Node print it. */
  serial: string;
  notBefore: Date;
  notAfter: Date;
  /** subjectAltName dNSName entries, lower-cased. */
  dnsNames: string[];
  /** subjectAltName iPAddress entries, as text. */
  ipAddresses: string[];
  key: PublicKeySummary;
  signatureAlgorithm: SignatureAlgorithm;
  /** SHA-256 over the DER, upper-case hex pairs joined by ":" (OpenSSL's and Node's format). */
  fingerprintSha256: string;
  ocspUrls: string[];
  caIssuerUrls: string[];
  /** SCTs embedded in the certificate (RFC 6962 §3.3); 0 when the extension is absent. */
  sctCount: number;
  /** basicConstraints cA (RFC 5280 §4.2.1.9). */
  isCa: boolean;
  /** Subject equals issuer and the certificate's own key verifies its signature (RFC 5280 §3.2, §6.1). */
  selfSigned: boolean;
  /** DER of the subject and issuer Names, for exact comparison. */
  subjectName: Buffer;
  issuerName: Buffer;
  /** DER of the SubjectPublicKeyInfo as the certificate holds it (what a TLSA record's SPKI(1) selector matches, RFC 6698 §2.1.2). */
  spki: Buffer;
  /** Node's parsed form, kept for the issuer checks of the chain analysis. */
  x509: X509Certificate;
}

export class CertificateParseError extends Error {
  override readonly name = 'CertificateParseError';
}

/** RFC 6962 §3.3: the X.509v3 extension carrying a SignedCertificateTimestampList. */
const OID_EMBEDDED_SCT_LIST = '1.3.6.1.4.1.11129.2.4.2';

/**
 * Signature algorithm OIDs, named the way OpenSSL prints them. Sources:
 * RFC 3279 §2.2 (md2/md5/sha1 with RSA, dsa-with-sha1, ecdsa-with-SHA1),
 * RFC 4055 §5 (sha224/256/384/512 with RSA, RSASSA-PSS), RFC 5758 §3
 * (ecdsa-with-SHA224..512, dsa-with-SHA224/256), RFC 8410 §3 (Ed25519, Ed448).
 */
const SIGNATURE_ALGORITHMS: Readonly<Record<string, SignatureAlgorithm>> = {
  '1.2.840.113549.1.1.2': { name: 'md2WithRSAEncryption', hash: 'MD2' },
  '1.2.840.113549.1.1.4': { name: 'md5WithRSAEncryption', hash: 'MD5' },
  '1.2.840.113549.1.1.5': { name: 'sha1WithRSAEncryption', hash: 'SHA-1' },
  '1.2.840.113549.1.1.14': { name: 'sha224WithRSAEncryption', hash: 'SHA-224' },
  '1.2.840.113549.1.1.11': { name: 'sha256WithRSAEncryption', hash: 'SHA-256' },
  '1.2.840.113549.1.1.12': { name: 'sha384WithRSAEncryption', hash: 'SHA-384' },
  '1.2.840.113549.1.1.13': { name: 'sha512WithRSAEncryption', hash: 'SHA-512' },
  '1.2.840.10045.4.1': { name: 'ecdsa-with-SHA1', hash: 'SHA-1' },
  '1.2.840.10045.4.3.1': { name: 'ecdsa-with-SHA224', hash: 'SHA-224' },
  '1.2.840.10045.4.3.2': { name: 'ecdsa-with-SHA256', hash: 'SHA-256' },
  '1.2.840.10045.4.3.3': { name: 'ecdsa-with-SHA384', hash: 'SHA-384' },
  '1.2.840.10045.4.3.4': { name: 'ecdsa-with-SHA512', hash: 'SHA-512' },
  '1.2.840.10040.4.3': { name: 'dsaWithSHA1', hash: 'SHA-1' },
  '2.16.840.1.101.3.4.3.1': { name: 'dsa_with_SHA224', hash: 'SHA-224' },
  '2.16.840.1.101.3.4.3.2': { name: 'dsa_with_SHA256', hash: 'SHA-256' },
  '1.3.101.112': { name: 'ED25519', hash: null },
  '1.3.101.113': { name: 'ED448', hash: null },
};

/** Hash algorithm OIDs that can appear in RSASSA-PSS parameters (RFC 4055 §2.1, RFC 5754 §2). */
const HASH_ALGORITHMS: Readonly<Record<string, string>> = {
  [id_sha1]: 'SHA-1',
  [id_sha224]: 'SHA-224',
  [id_sha256]: 'SHA-256',
  [id_sha384]: 'SHA-384',
  [id_sha512]: 'SHA-512',
};

/** OpenSSL's curve names → the NIST names browsers and the CA/B BRs (§6.1.5) use. */
const CURVES: Readonly<Record<string, { name: string; bits: number }>> = {
  prime256v1: { name: 'P-256', bits: 256 },
  secp384r1: { name: 'P-384', bits: 384 },
  secp521r1: { name: 'P-521', bits: 521 },
};

const KEY_TYPES: Readonly<Record<string, string>> = {
  rsa: 'RSA',
  'rsa-pss': 'RSA-PSS',
  ec: 'EC',
  dsa: 'DSA',
  ed25519: 'Ed25519',
  ed448: 'Ed448',
};

/** Parses one DER certificate. Throws CertificateParseError when it is not a certificate. */
export function parseCertificate(der: Uint8Array): ParsedCertificate {
  const bytes = Buffer.from(der);
  let x509: X509Certificate;
  let asn: Certificate;
  try {
    x509 = new X509Certificate(bytes);
    asn = AsnConvert.parse(bytes, Certificate);
  } catch (err) {
    throw new CertificateParseError(`not a parseable X.509 certificate: ${(err as Error).message}`);
  }
  const tbs = asn.tbsCertificate;
  const extensions = tbs.extensions ?? [];
  const san = extensionValue(extensions, id_ce_subjectAltName, SubjectAlternativeName) ?? [];
  const aia = extensionValue(extensions, id_pe_authorityInfoAccess, AuthorityInfoAccessSyntax) ?? [];
  const accessUrls = (method: string) =>
    aia
      .filter((d) => d.accessMethod === method)
      .flatMap((d) =>
        d.accessLocation.uniformResourceIdentifier ? [d.accessLocation.uniformResourceIdentifier] : [],
      );
  const subjectDer = Buffer.from(AsnConvert.serialize(tbs.subject));
  const issuerDer = Buffer.from(AsnConvert.serialize(tbs.issuer));

  return {
    der: bytes,
    subject: distinguishedName(x509.subject),
    issuer: distinguishedName(x509.issuer),
    serial: serialHex(new Uint8Array(tbs.serialNumber)),
    notBefore: tbs.validity.notBefore.getTime(),
    notAfter: tbs.validity.notAfter.getTime(),
    dnsNames: san.flatMap((n) => (n.dNSName !== undefined ? [n.dNSName.toLowerCase()] : [])),
    ipAddresses: san.flatMap((n) => (n.iPAddress !== undefined ? [n.iPAddress] : [])),
    key: publicKeySummary(x509, tbs.subjectPublicKeyInfo.algorithm.algorithm),
    signatureAlgorithm: signatureAlgorithm(
      asn.signatureAlgorithm.algorithm,
      asn.signatureAlgorithm.parameters,
    ),
    fingerprintSha256: colonHex(createHash('sha256').update(bytes).digest()),
    ocspUrls: accessUrls(id_ad_ocsp),
    caIssuerUrls: accessUrls(id_ad_caIssuers),
    sctCount: embeddedSctCount(extensions),
    isCa: extensionValue(extensions, id_ce_basicConstraints, BasicConstraints)?.cA ?? false,
    selfSigned: subjectDer.equals(issuerDer) && signedBy(x509, x509),
    subjectName: subjectDer,
    issuerName: issuerDer,
    spki: Buffer.from(AsnConvert.serialize(tbs.subjectPublicKeyInfo)),
    x509,
  };
}

/**
 * Whether `parent` issued `child`: the names chain (OpenSSL's X509_check_issued,
 * which also compares key identifiers) or are byte-equal, and parent's key
 * verifies child's signature (RFC 5280 §6.1.3 (a)(1), (a)(4)). The signature is
 * the deciding test: names alone are easy to fake.
 */
export function issuedBy(child: ParsedCertificate, parent: ParsedCertificate): boolean {
  const namesChain = child.issuerName.equals(parent.subjectName) || child.x509.checkIssued(parent.x509);
  return namesChain && signedBy(child.x509, parent.x509);
}

/** The signer's public key (a certificate's, or a bare key) verifies the certificate's signature. */
export function signedBy(cert: X509Certificate, signer: X509Certificate | KeyObject): boolean {
  try {
    // Inside the try: reading the key of a certificate can fail for a key type OpenSSL does not load.
    return cert.verify(signer instanceof X509Certificate ? signer.publicKey : signer);
  } catch {
    // An algorithm OpenSSL cannot verify with: not provably issued.
    return false;
  }
}

/** Node prints one attribute per line; the API shows them on one line like OpenSSL's one-line form. */
function distinguishedName(multiline: string): string {
  return multiline.split('\n').filter(Boolean).join(', ');
}

/** Hex of the INTEGER's magnitude: the DER sign padding (a leading 0x00) is dropped, like BN_bn2hex. */
export function serialHex(integer: Uint8Array): string {
  let start = 0;
  while (start < integer.length - 1 && integer[start] === 0) start++;
  return Buffer.from(integer.subarray(start)).toString('hex').toUpperCase();
}

function colonHex(bytes: Buffer): string {
  return (bytes.toString('hex').toUpperCase().match(/../g) ?? []).join(':');
}

function extensionValue<T>(extensions: readonly Extension[], oid: string, type: new () => T): T | undefined {
  const ext = extensions.find((e) => e.extnID === oid);
  if (!ext) return undefined;
  try {
    return AsnConvert.parse(extensionBytes(ext), type);
  } catch {
    // A malformed extension is reported as absent rather than failing the whole inspection.
    return undefined;
  }
}

function extensionBytes(ext: Extension): Buffer {
  const value = ext.extnValue;
  return Buffer.from(value.buffer, value.byteOffset, value.byteLength);
}

function publicKeySummary(x509: X509Certificate, spkiOid: string): PublicKeySummary {
  let keyType: string | undefined;
  let details: { modulusLength?: number; namedCurve?: string } | undefined;
  try {
    keyType = x509.publicKey.asymmetricKeyType;
    details = x509.publicKey.asymmetricKeyDetails;
  } catch {
    // A key type OpenSSL does not load: report the SPKI algorithm only.
  }
  const type = (keyType && KEY_TYPES[keyType]) ?? keyType ?? spkiOid;
  if (details?.namedCurve) {
    const curve = CURVES[details.namedCurve];
    return curve ? { type, bits: curve.bits, curve: curve.name } : { type, curve: details.namedCurve };
  }
  if (details?.modulusLength) return { type, bits: details.modulusLength };
  return { type };
}

/** Names the signature algorithm; for RSASSA-PSS the hash comes from its parameters (RFC 4055 §3.1). */
export function signatureAlgorithm(
  oid: string,
  parameters: ArrayBuffer | null | undefined,
): SignatureAlgorithm {
  const known = SIGNATURE_ALGORITHMS[oid];
  if (known) return known;
  if (oid === id_RSASSA_PSS) {
    const hash = parameters ? pssHash(parameters) : 'SHA-1';
    return { name: `rsassaPss (${hash ?? 'unknown hash'})`, hash };
  }
  return { name: oid, hash: null };
}

/** RSASSA-PSS-params (RFC 4055 §3.1): hashAlgorithm, sha1 when omitted; null when unknown or malformed. */
function pssHash(params: ArrayBuffer): string | null {
  try {
    return HASH_ALGORITHMS[AsnConvert.parse(params, RsaSaPssParams).hashAlgorithm.algorithm] ?? null;
  } catch {
    return null;
  }
}

/**
 * RFC 6962 §3.3: the extension's value is an OCTET STRING holding the TLS
 * encoding of SignedCertificateTimestampList = opaque SerializedSCT<1..2^16-1>
 * inside a list<1..2^16-1>, i.e. a 2-byte total length, then 2-byte-length SCTs.
 */
export function embeddedSctCount(extensions: readonly Extension[]): number {
  const ext = extensions.find((e) => e.extnID === OID_EMBEDDED_SCT_LIST);
  if (!ext) return 0;
  try {
    const inner = AsnConvert.parse(extensionBytes(ext), OctetString);
    return countSerializedScts(Buffer.from(inner.buffer, inner.byteOffset, inner.byteLength));
  } catch {
    return 0;
  }
}

/** Counts the entries of a TLS-encoded SignedCertificateTimestampList; 0 when it is malformed. */
export function countSerializedScts(list: Buffer): number {
  if (list.length < 2 || list.readUInt16BE(0) !== list.length - 2) return 0;
  let count = 0;
  let offset = 2;
  while (offset < list.length) {
    if (offset + 2 > list.length) return 0;
    const length = list.readUInt16BE(offset);
    offset += 2 + length;
    if (length === 0 || offset > list.length) return 0;
    count++;
  }
  return count;
}
