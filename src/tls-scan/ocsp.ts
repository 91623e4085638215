/**
 * The verdict on a stapled OCSP response (RFC 6066 §8, RFC 6960): is it about this leaf, signed by
 * someone entitled to speak for its issuer, current, and what does it say. Pure: DER in, the
 * answer's `ocsp_stapling` object out; it never throws, bad bytes are a verdict (`invalid`, why).
 *
 * It trusts nothing in the response that the issuer's key does not vouch for: a responder
 * certificate counts only when the issuer signed it and marked it for OCSP signing (§4.2.2.2).
 * Whether the issuer itself is trusted is the chain check's business, not this module's.
 */
import { constants, createHash, createPublicKey, type KeyObject, verify } from 'node:crypto';
import {
  BasicOCSPResponse,
  id_pkix_ocsp_basic,
  OCSPResponse,
  OCSPResponseStatus,
  type SingleResponse,
} from '@peculiar/asn1-ocsp';
import { id_RSASSA_PSS, RsaSaPssParams } from '@peculiar/asn1-rsa';
import { AsnConvert } from '@peculiar/asn1-schema';
import {
  AlgorithmIdentifier,
  Certificate,
  CRLReasons,
  ExtendedKeyUsage,
  id_ce_extKeyUsage,
  type Name,
} from '@peculiar/asn1-x509';
import type { OcspStapling } from '../features/tls-scan/tls-scan.schema.js';

export interface StapleChain {
  /** The leaf's DER. */
  leaf: Buffer;
  /** The DER of the certificate that issued the leaf; undefined when the server did not send it. */
  issuer: Buffer | undefined;
}

/** RFC 6960 §4.2.2.2: the extended key usage that makes a certificate a delegated responder. */
const ID_KP_OCSP_SIGNING = '1.3.6.1.5.5.7.3.9';
/** Clocks disagree; a response produced "in the future" by less than this is accepted. */
const CLOCK_SKEW_MS = 5 * 60 * 1000;

/** Digest OIDs (RFC 3279 §2.1, RFC 5754 §2) → node:crypto names: CertID hashes and PSS parameters. */
const HASHES: Readonly<Record<string, string>> = {
  '1.3.14.3.2.26': 'sha1',
  '2.16.840.1.101.3.4.2.4': 'sha224',
  '2.16.840.1.101.3.4.2.1': 'sha256',
  '2.16.840.1.101.3.4.2.2': 'sha384',
  '2.16.840.1.101.3.4.2.3': 'sha512',
};

/**
 * Signature algorithm OIDs: RFC 4055 §5 (RSA), RFC 5758 §3.2 and RFC 3279 (ECDSA), RFC 8410 §3
 * (EdDSA), with the key type (node:crypto's asymmetricKeyType, "-pss" aside) each must be made with.
 */
const SIGNATURES: Readonly<Record<string, { key: string; hash: string | null }>> = {
  '1.2.840.113549.1.1.5': { key: 'rsa', hash: 'sha1' },
  '1.2.840.113549.1.1.14': { key: 'rsa', hash: 'sha224' },
  '1.2.840.113549.1.1.11': { key: 'rsa', hash: 'sha256' },
  '1.2.840.113549.1.1.12': { key: 'rsa', hash: 'sha384' },
  '1.2.840.113549.1.1.13': { key: 'rsa', hash: 'sha512' },
  '1.2.840.10045.4.1': { key: 'ec', hash: 'sha1' },
  '1.2.840.10045.4.3.1': { key: 'ec', hash: 'sha224' },
  '1.2.840.10045.4.3.2': { key: 'ec', hash: 'sha256' },
  '1.2.840.10045.4.3.3': { key: 'ec', hash: 'sha384' },
  '1.2.840.10045.4.3.4': { key: 'ec', hash: 'sha512' },
  '1.3.101.112': { key: 'ed25519', hash: null },
  '1.3.101.113': { key: 'ed448', hash: null },
};

/** OpenSSL's short names for the attributes a responder's name usually has; others print as OIDs. */
const ATTRIBUTES: Readonly<Record<string, string>> = {
  '2.5.4.3': 'CN',
  '2.5.4.6': 'C',
  '2.5.4.7': 'L',
  '2.5.4.8': 'ST',
  '2.5.4.10': 'O',
  '2.5.4.11': 'OU',
  '2.5.4.5': 'serialNumber',
  '1.2.840.113549.1.9.1': 'emailAddress',
  '0.9.2342.19200300.100.1.25': 'DC',
};

/** What the answer says when no staple was sent. */
export const NOT_STAPLED: OcspStapling = {
  stapled: false,
  status: null,
  reason: null,
  produced_at: null,
  this_update: null,
  next_update: null,
  revoked_at: null,
  responder: null,
};

/** The verdict on `response` (the staple's DER, null when none was stapled) for `chain.leaf` at `now`. */
export function checkStaple(response: Buffer | null, chain: StapleChain, now: Date): OcspStapling {
  if (response === null) return { ...NOT_STAPLED };
  const found: OcspStapling = { ...NOT_STAPLED, stapled: true };
  const invalid = (reason: string): OcspStapling => ({
    ...found,
    status: 'invalid',
    reason,
    revoked_at: null,
  });
  try {
    return judge(response, chain, now, found, invalid);
  } catch (err) {
    // Only malformed input gets here (a parser's complaint): the staple is useless, not the scan.
    return invalid(`the response is not a well-formed OCSP response (${(err as Error).message})`);
  }
}

function judge(
  response: Buffer,
  chain: StapleChain,
  now: Date,
  found: OcspStapling,
  invalid: (reason: string) => OcspStapling,
): OcspStapling {
  const outer = AsnConvert.parse(response, OCSPResponse);
  // §4.2.1: anything but successful carries no responseBytes, so nothing about the certificate.
  if (outer.responseStatus !== OCSPResponseStatus.successful) {
    const name = OCSPResponseStatus[outer.responseStatus] ?? `unassigned status ${outer.responseStatus}`;
    return invalid(`the responder answered ${name} (RFC 6960 §4.2.1), not a certificate status`);
  }
  if (!outer.responseBytes) return invalid('the response is successful but carries no responseBytes');
  if (outer.responseBytes.responseType !== id_pkix_ocsp_basic) {
    return invalid(
      `the response type ${outer.responseBytes.responseType} is not id-pkix-ocsp-basic (RFC 6960 §4.2.1)`,
    );
  }
  const basic = AsnConvert.parse(outer.responseBytes.response, BasicOCSPResponse);
  const tbs = basic.tbsResponseData;
  found.produced_at = tbs.producedAt.toISOString();
  found.responder = tbs.responderID.byKey
    ? `key:${Buffer.from(tbs.responderID.byKey.buffer).toString('hex')}`
    : tbs.responderID.byName
      ? formatName(tbs.responderID.byName)
      : null;

  const leaf = attempt(() => AsnConvert.parse(chain.leaf, Certificate));
  if (!leaf) return invalid('the leaf certificate cannot be parsed, so the response cannot be matched to it');
  if (!chain.issuer) {
    // The CertID cannot be checked without the issuer either; the serial alone still finds the window.
    const bySerial = tbs.responses.find((r) =>
      sameSerial(r.certID.serialNumber, leaf.tbsCertificate.serialNumber),
    );
    if (bySerial) setWindow(found, bySerial);
    return invalid('the issuer certificate was not sent, so the signature cannot be checked');
  }
  const issuerDer = chain.issuer;
  const issuer = attempt(() => AsnConvert.parse(issuerDer, Certificate));
  if (!issuer) return invalid('the issuer certificate cannot be parsed, so the signature cannot be checked');
  const single = tbs.responses.find((r) => isAbout(r, leaf, issuer));
  if (!single)
    return invalid('the response is for another certificate (no CertID matches the leaf and its issuer)');
  setWindow(found, single);

  // The signature covers the DER exactly as sent (§4.2.1), not a re-encoding of the parsed form.
  const signed = basic.tbsResponseDataRaw;
  if (!signed) return invalid('the response data could not be read back for its signature');
  const signatureProblem = checkSignature(basic, Buffer.from(signed), issuer, now);
  if (signatureProblem) return invalid(signatureProblem);

  // §4.2.2.1 and §2.4: a response is current from thisUpdate until nextUpdate; one without
  // nextUpdate claims no end (RFC 5019 §2.2.4 leaves that to the client).
  if (single.thisUpdate.getTime() > now.getTime() + CLOCK_SKEW_MS) {
    return invalid(`not valid until ${single.thisUpdate.toISOString()} (thisUpdate is in the future)`);
  }
  if (single.nextUpdate && single.nextUpdate.getTime() < now.getTime()) {
    return invalid(`expired on ${single.nextUpdate.toISOString()} (nextUpdate has passed)`);
  }

  const status = single.certStatus;
  if (status.revoked) {
    const code = status.revoked.revocationReason?.reason;
    return {
      ...found,
      status: 'revoked',
      revoked_at: status.revoked.revocationTime.toISOString(),
      // RFC 5280 §5.3.1 names; a revocation without a reason code gives none.
      reason: code === undefined ? null : (CRLReasons[code] ?? `reason code ${code}`),
    };
  }
  if (status.good !== undefined) return { ...found, status: 'good' };
  return { ...found, status: 'unknown' };
}

function setWindow(found: OcspStapling, single: SingleResponse): void {
  found.this_update = single.thisUpdate.toISOString();
  found.next_update = single.nextUpdate?.toISOString() ?? null;
}

/**
 * §4.1.1: the CertID names the leaf by serial and its issuer by hashes, in the hash algorithm the
 * CertID itself states: of the issuer's subject DER and of its subjectPublicKey BIT STRING value.
 */
function isAbout(single: SingleResponse, leaf: Certificate, issuer: Certificate): boolean {
  const id = single.certID;
  const hash = HASHES[id.hashAlgorithm.algorithm];
  if (!hash || !sameSerial(id.serialNumber, leaf.tbsCertificate.serialNumber)) return false;
  const digest = (data: ArrayBuffer) => createHash(hash).update(Buffer.from(data)).digest();
  const nameHash = digest(AsnConvert.serialize(issuer.tbsCertificate.subject));
  const keyHash = digest(issuer.tbsCertificate.subjectPublicKeyInfo.subjectPublicKey);
  return (
    nameHash.equals(Buffer.from(id.issuerNameHash.buffer)) &&
    keyHash.equals(Buffer.from(id.issuerKeyHash.buffer))
  );
}

/** Serials compared by magnitude: a DER sign byte (leading 0x00) does not make another serial. */
function sameSerial(a: ArrayBuffer, b: ArrayBuffer): boolean {
  const magnitude = (x: ArrayBuffer) =>
    Buffer.from(x)
      .toString('hex')
      .replace(/^(00)+(?=..)/, '');
  return magnitude(a) === magnitude(b);
}

/**
 * §4.2.2.2: the signer is the issuer itself, or a responder certificate in `certs` the issuer
 * signed and marked with id-kp-OCSPSigning. Returns why not, or undefined when it verifies.
 */
function checkSignature(
  basic: BasicOCSPResponse,
  data: Buffer,
  issuer: Certificate,
  now: Date,
): string | undefined {
  const issuerKey = attempt(() => publicKey(issuer));
  if (!issuerKey) return "the issuer's public key cannot be loaded, so the signature cannot be checked";
  const result = verifySignature(issuerKey, basic.signatureAlgorithm, data, basic.signature);
  if (typeof result === 'string') return result;
  if (result) return undefined;
  for (const cert of basic.certs ?? []) {
    // A key node:crypto cannot load signed nothing this check can confirm.
    const responderKey = attempt(() => publicKey(cert));
    if (
      !responderKey ||
      verifySignature(responderKey, basic.signatureAlgorithm, data, basic.signature) !== true
    ) {
      continue;
    }
    const who = formatName(cert.tbsCertificate.subject);
    const sameIssuerName = Buffer.from(AsnConvert.serialize(cert.tbsCertificate.issuer)).equals(
      Buffer.from(AsnConvert.serialize(issuer.tbsCertificate.subject)),
    );
    const raw = cert.tbsCertificateRaw;
    if (
      !sameIssuerName ||
      !raw ||
      verifySignature(issuerKey, cert.signatureAlgorithm, Buffer.from(raw), cert.signatureValue) !== true
    ) {
      return `signed by ${who}, a certificate the leaf's issuer did not issue, so not an authorized responder (RFC 6960 §4.2.2.2)`;
    }
    const eku = cert.tbsCertificate.extensions?.find((e) => e.extnID === id_ce_extKeyUsage);
    const usages = eku ? AsnConvert.parse(eku.extnValue, ExtendedKeyUsage) : [];
    if (!usages.includes(ID_KP_OCSP_SIGNING)) {
      return `signed by ${who}, which the issuer did not delegate OCSP signing to (no extKeyUsage id-kp-OCSPSigning, RFC 6960 §4.2.2.2)`;
    }
    const { notBefore, notAfter } = cert.tbsCertificate.validity; // asn1-x509 Time: getTime() is a Date
    if (now < notBefore.getTime() || now > notAfter.getTime()) {
      return `signed by the delegated responder ${who}, whose certificate is not valid at ${now.toISOString()}`;
    }
    return undefined;
  }
  return "the signature does not verify with the issuer's key nor with an authorized responder certificate in the response";
}

/** The value, or undefined when making it throws (malformed input the verdict names instead). */
function attempt<T>(make: () => T): T | undefined {
  try {
    return make();
  } catch {
    return undefined;
  }
}

function publicKey(cert: Certificate): KeyObject {
  const spki = Buffer.from(AsnConvert.serialize(cert.tbsCertificate.subjectPublicKeyInfo));
  return createPublicKey({ key: spki, format: 'der', type: 'spki' });
}

/** true/false: the signature (in)valid; a string: the algorithm cannot be checked, and why. */
function verifySignature(
  key: KeyObject,
  algorithm: AlgorithmIdentifier,
  data: Buffer,
  signature: ArrayBuffer,
): boolean | string {
  const oid = algorithm.algorithm;
  let keyType: string;
  let hash: string | null;
  let pssSalt: number | undefined;
  if (oid === id_RSASSA_PSS) {
    // RFC 4055 §3.1: the parameters name the hash, MGF1's hash and the salt length (defaults SHA-1, 20).
    const params = algorithm.parameters
      ? AsnConvert.parse(algorithm.parameters, RsaSaPssParams)
      : new RsaSaPssParams();
    const mgfParams = params.maskGenAlgorithm.parameters;
    const mgfHash = mgfParams ? AsnConvert.parse(mgfParams, AlgorithmIdentifier).algorithm : undefined;
    hash = HASHES[params.hashAlgorithm.algorithm] ?? null;
    if (!hash || mgfHash !== params.hashAlgorithm.algorithm) {
      return 'signed with RSASSA-PSS parameters this check does not support (an unknown hash, or MGF1 with another hash)';
    }
    keyType = 'rsa';
    pssSalt = params.saltLength;
  } else {
    const known = SIGNATURES[oid];
    if (!known) return `signed with an algorithm this check does not support (${oid})`;
    ({ key: keyType, hash } = known);
  }
  // An algorithm the key cannot have made (an ECDSA OID, an RSA key) is a failed signature.
  if (key.asymmetricKeyType?.replace(/-pss$/, '') !== keyType) return false;
  try {
    const sig = Buffer.from(signature);
    if (pssSalt !== undefined) {
      return verify(hash, data, { key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: pssSalt }, sig);
    }
    // ECDSA signatures are DER (RFC 5758 §3.2), node's default dsaEncoding; EdDSA takes no digest.
    return verify(hash, data, key, sig);
  } catch {
    return false;
  }
}

/** A distinguished name in OpenSSL's one-line order and form (`CN=…, O=…`), as /api/tls prints names. */
function formatName(name: Name): string {
  return name
    .flatMap((rdn) => rdn.map((atv) => `${ATTRIBUTES[atv.type] ?? atv.type}=${atv.value.toString()}`))
    .join(', ');
}
