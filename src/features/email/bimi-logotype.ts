/**
 * The mark a VMC carries: its logotype extension (id-pe-logotype, RFC 9399,
 * which obsoletes RFC 3709 and RFC 6170), read with an ASN.1 parser, the
 * subject logo's SVG taken out of its `data:` URI (RFC 2397) and
 * decompressed, and checked against the hash the extension states.
 * Pure: a parsed certificate in, facts and findings out.
 */
import { createHash } from 'node:crypto';
import { gunzipSync } from 'node:zlib';
import { id_sha1, id_sha224, id_sha256, id_sha384, id_sha512 } from '@peculiar/asn1-rsa';
import { AsnConvert } from '@peculiar/asn1-schema';
import { Certificate } from '@peculiar/asn1-x509';
import { id_pe_logotype, LogotypeExtn } from '@peculiar/asn1-x509-logotype';
import type { ParsedCertificate } from '../tls/certificate.js';
import { SVG_MAX_BYTES } from './bimi-svg.js';
import { type Finding, finding } from './types.js';

const LOGOTYPES = 'RFC 9399';
const VMC_PROFILE = 'draft-fetch-validation-vmc-wchuang';

/** Digest OIDs (RFC 3279 §2.2.1, RFC 5754 §2) → node:crypto names; RFC 9399 §4.1 leaves the choice open. */
const HASHES: Readonly<Record<string, string>> = {
  [id_sha1]: 'sha1',
  [id_sha224]: 'sha224',
  [id_sha256]: 'sha256',
  [id_sha384]: 'sha384',
  [id_sha512]: 'sha512',
};

export interface LogoHash {
  /** The node:crypto name ('sha256'), or the OID when unknown. */
  algorithm: string;
  known: boolean;
  value: Buffer;
}

export interface MarkLogo {
  mediaType: string;
  hashes: LogoHash[];
  /** The SVG, decompressed; null when it could not be taken out (the findings say why). */
  svg: Buffer | null;
  /** The SVG hashes to every hash the extension states that netdiag can compute (and to at least one). */
  hashMatches: boolean;
}

export interface LogotypeReading {
  /** The certificate has the extension at all. */
  present: boolean;
  logo: MarkLogo | null;
  findings: Finding[];
}

/** Reads the subject logo of `cert`'s logotype extension. Every problem is an error: receivers show no mark. */
export function readLogotype(cert: ParsedCertificate): LogotypeReading {
  const findings: Finding[] = [];
  const fail = (message: string, rfc = LOGOTYPES): LogotypeReading => {
    findings.push(finding('error', message, rfc));
    return { present: true, logo: null, findings };
  };
  const ext = AsnConvert.parse(cert.der, Certificate).tbsCertificate.extensions?.find(
    (e) => e.extnID === id_pe_logotype,
  );
  if (!ext) {
    findings.push(
      finding(
        'error',
        `The certificate has no logotype extension (${id_pe_logotype}): it carries no mark, so it is not a VMC.`,
        VMC_PROFILE,
      ),
    );
    return { present: false, logo: null, findings };
  }
  let extn: LogotypeExtn;
  try {
    const value = ext.extnValue;
    extn = AsnConvert.parse(Buffer.from(value.buffer, value.byteOffset, value.byteLength), LogotypeExtn);
  } catch (err) {
    return fail(`The logotype extension is not valid DER (${(err as Error).message}).`);
  }
  const details = extn.subjectLogo?.direct?.image?.[0]?.imageDetails;
  if (!details)
    return fail('The logotype extension holds no subject logo image given directly.', VMC_PROFILE);

  const hashes = details.logotypeHash.map((h) => {
    const name = HASHES[h.hashAlg.algorithm];
    return {
      algorithm: name ?? h.hashAlg.algorithm,
      known: name !== undefined,
      value: Buffer.from(h.hashValue.buffer, h.hashValue.byteOffset, h.hashValue.byteLength),
    };
  });
  const logo: MarkLogo = { mediaType: details.mediaType, hashes, svg: null, hashMatches: false };
  if (details.mediaType.toLowerCase() !== 'image/svg+xml') {
    findings.push(
      finding('error', `The mark is ${details.mediaType}, not an SVG (image/svg+xml).`, VMC_PROFILE),
    );
  }
  const uri = details.logotypeURI[0] ?? '';
  const data = /^data:([^,]*),(.*)$/s.exec(uri);
  if (!data) {
    findings.push(
      finding(
        'error',
        'The mark is not embedded as a data: URI (RFC 2397) but referenced elsewhere.',
        VMC_PROFILE,
      ),
    );
    return { present: true, logo, findings };
  }
  if (!/;base64$/i.test(data[1]!)) {
    findings.push(finding('error', 'The data: URI of the mark is not base64-encoded.', VMC_PROFILE));
    return { present: true, logo, findings };
  }
  const bytes = Buffer.from(data[2]!, 'base64');
  if (bytes[0] === 0x1f && bytes[1] === 0x8b) {
    try {
      logo.svg = gunzipSync(bytes, { maxOutputLength: SVG_MAX_BYTES });
    } catch (err) {
      const tooLarge = (err as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE';
      findings.push(
        finding(
          'error',
          tooLarge
            ? `The embedded SVG is larger than ${SVG_MAX_BYTES / 1024} KB once decompressed.`
            : `The embedded SVG does not decompress (${(err as Error).message}).`,
          LOGOTYPES,
        ),
      );
      return { present: true, logo, findings };
    }
  } else {
    // Readable all the same, so the hash and the comparison with l= are still reported.
    logo.svg = bytes;
    findings.push(
      finding(
        'error',
        'The embedded SVG is not gzip-compressed, as an SVG in a data: URI must be.',
        LOGOTYPES,
      ),
    );
  }
  const computable = hashes.filter((h) => h.known);
  logo.hashMatches = computable.length > 0 && computable.every((h) => digestMatches(logo.svg!, h));
  if (computable.length === 0) {
    findings.push(
      finding(
        'error',
        `The logotype hash uses ${hashes.map((h) => h.algorithm).join(', ') || 'no algorithm'}, none of which netdiag can compute.`,
        LOGOTYPES,
      ),
    );
  } else if (!logo.hashMatches) {
    findings.push(
      finding(
        'error',
        `The embedded SVG does not match the logotype hash (${computable[0]!.algorithm} ${computable[0]!.value.toString('hex')}).`,
        LOGOTYPES,
      ),
    );
  }
  return { present: true, logo, findings };
}

/** `body` hashes to `hash`'s value with its algorithm. */
export function digestMatches(body: Buffer, hash: LogoHash): boolean {
  return hash.known && createHash(hash.algorithm).update(body).digest().equals(hash.value);
}
