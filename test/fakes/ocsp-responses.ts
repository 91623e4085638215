/**
 * Real OCSP responses (RFC 6960) for tests, made by the `openssl ocsp` CLI so the bytes come from
 * an independent implementation rather than from the parser they test.
 *
 * Usage (synchronous; needs `openssl` on PATH, check `opensslAvailable()` and skip when missing):
 *
 *   const pki = await getTestPki();
 *   const ca = { certPem: pki.caPem, keyPem: pki.caKeyPem };
 *   const good = makeOcspResponse({ dir, ca, leaf: pki.server.certPem, status: 'good' });
 *   const revoked = makeOcspResponse({ dir, ca, leaf: pki.server.certPem, status: 'revoked' });
 *   // `openssl s_server ... -status_file ${good}` staples it (RFC 6066 §8).
 *
 * Each call writes its files (index.txt, responder key and certificate, the DER response) into a
 * fresh subdirectory of `dir` and returns the path of the DER response; the caller removes `dir`.
 * The CA may be the test CA (`getTestPki()`: caPem/caKeyPem) or an intermediate
 * (`issueIntermediate()`: certPem/keyPem); it is the leaf's issuer.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes, X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { opensslVersion } from '../openssl-s-client.js';

export interface PemPair {
  certPem: string;
  keyPem: string;
}

/** CRL reasons (RFC 5280 §5.3.1) as they appear in the verdict; openssl spells one differently. */
export type RevocationReason =
  | 'unspecified'
  | 'keyCompromise'
  | 'cACompromise'
  | 'affiliationChanged'
  | 'superseded'
  | 'cessationOfOperation';

export interface OcspResponseOptions {
  /** A directory the caller owns (and removes); each call works in its own subdirectory. */
  dir: string;
  /** The leaf's issuer: its certificate and private key (PEM). */
  ca: PemPair;
  /** The certificate the response is about (PEM). */
  leaf: string;
  /** unknown: the leaf's serial is left out of the index, so the responder does not know it. */
  status: 'good' | 'revoked' | 'unknown';
  /** For `revoked`. Default keyCompromise. */
  reason?: RevocationReason;
  /** For `revoked`. Default: a day ago. Whole seconds (the index keeps no more). */
  revokedAt?: Date;
  /**
   * Who signs: `ca` (default) the issuer itself; `delegated` a responder certificate the CA
   * issues with extKeyUsage id-kp-OCSPSigning (RFC 6960 §4.2.2.2); `delegated-without-eku` the
   * same without that extended key usage; `other` a self-signed key nothing delegated to.
   * The responder certificate is included in the response (`certs`) for all but `ca`.
   */
  signer?: 'ca' | 'delegated' | 'delegated-without-eku' | 'other';
  /** The key type of a responder that is not the CA. Default ec (P-256). */
  signerKey?: 'ec' | 'rsa' | 'rsa-pss' | 'ed25519';
  /** nextUpdate = thisUpdate + days (`-ndays`); 0 leaves nextUpdate out. Default 7. */
  days?: number;
  /**
   * The CertID hash: the request's, which the response echoes. Default sha1, what OpenSSL and most
   * responders use. (Not `-rcid`: OpenSSL 3.0.19 then answers with serial 0 in the CertID.)
   */
  certIdHash?: 'sha1' | 'sha256';
  /** Name the responder by key hash (byKey) instead of by name. */
  responderByKey?: boolean;
}

/** Whether the openssl CLI is on PATH. */
export function opensslAvailable(): boolean {
  return opensslVersion() !== undefined;
}

/** Makes one OCSP response with `openssl ocsp` and returns the path of its DER file. */
export function makeOcspResponse(opts: OcspResponseOptions): string {
  const work = mkdtempSync(join(opts.dir, 'ocsp-'));
  const file = (name: string, content?: string) => {
    const path = join(work, name);
    if (content !== undefined) writeFileSync(path, content);
    return path;
  };
  const caCert = file('ca.pem', opts.ca.certPem);
  const caKey = file('ca.key', opts.ca.keyPem);
  const leafCert = file('leaf.pem', opts.leaf);
  const leaf = new X509Certificate(opts.leaf);

  // The responder's database, in `openssl ca`'s index.txt format: status, expiry, revocation
  // "time[,reason]", serial (upper-case hex), file name, subject; tab-separated.
  const lines: string[] = [];
  if (opts.status !== 'unknown') {
    const revocation =
      opts.status === 'revoked'
        ? `${utcTime(opts.revokedAt ?? new Date(Date.now() - 86_400_000))},${opensslReason(opts.reason ?? 'keyCompromise')}`
        : '';
    const flag = opts.status === 'revoked' ? 'R' : 'V';
    lines.push(
      [flag, utcTime(new Date(leaf.validTo)), revocation, leaf.serialNumber, 'unknown', '/CN=leaf'].join(
        '\t',
      ),
    );
  }
  const index = file('index.txt', lines.map((l) => `${l}\n`).join(''));

  const signer = opts.signer ?? 'ca';
  const responder: PemPair =
    signer === 'ca' ? opts.ca : makeResponder(work, signer, opts.signerKey ?? 'ec', caCert, caKey);
  const rsigner = signer === 'ca' ? caCert : file('responder.pem', responder.certPem);
  const rkey = signer === 'ca' ? caKey : file('responder.key', responder.keyPem);
  const out = file('response.der');
  const days = opts.days ?? 7;
  const hash = opts.certIdHash ?? 'sha1';
  openssl([
    'ocsp',
    ...['-index', index, '-CA', caCert, '-rsigner', rsigner, '-rkey', rkey],
    // The request is built in-process from -issuer/-cert and answered at once, no network.
    // (The CertID digest must come before -cert.)
    ...['-issuer', caCert, `-${hash}`, '-cert', leafCert],
    // A stapled response carries no nonce (RFC 6066 §8 staples a cached response).
    '-no_nonce',
    ...(days > 0 ? ['-ndays', String(days)] : []),
    ...(signer === 'ca' ? ['-resp_no_certs'] : []),
    ...(opts.responderByKey ? ['-resp_key_id'] : []),
    ...(opts.signerKey === 'rsa-pss' && signer !== 'ca'
      ? ['-rsigopt', 'rsa_padding_mode:pss', '-rsigopt', 'rsa_pss_saltlen:32']
      : []),
    ...['-respout', out],
  ]);
  return out;
}

/** A responder key and certificate: issued by the CA for `delegated*`, self-signed for `other`. */
function makeResponder(
  work: string,
  signer: 'delegated' | 'delegated-without-eku' | 'other',
  keyType: 'ec' | 'rsa' | 'rsa-pss' | 'ed25519',
  caCert: string,
  caKey: string,
): PemPair {
  const key = join(work, 'responder.key');
  const cert = join(work, 'responder.pem');
  const csr = join(work, 'responder.csr');
  const ext = join(work, 'responder.ext');
  const keyArgs =
    keyType === 'ec'
      ? ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256']
      : keyType === 'ed25519'
        ? ['-newkey', 'ed25519']
        : ['-newkey', 'rsa:2048'];
  const subject = `/CN=netdiag test OCSP responder (${signer})`;
  // RFC 6960 §4.2.2.2: a delegated responder is marked by id-kp-OCSPSigning in extKeyUsage.
  const eku = signer === 'delegated' ? 'OCSPSigning' : 'serverAuth';
  writeFileSync(
    ext,
    `basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=${eku}\n`,
  );
  if (signer === 'other') {
    openssl([
      'req',
      '-x509',
      ...keyArgs,
      '-nodes',
      '-keyout',
      key,
      '-subj',
      subject,
      '-days',
      '30',
      '-out',
      cert,
    ]);
  } else {
    openssl(['req', '-new', ...keyArgs, '-nodes', '-keyout', key, '-subj', subject, '-out', csr]);
    openssl([
      'x509',
      '-req',
      ...['-in', csr, '-CA', caCert, '-CAkey', caKey, '-set_serial', `0x${randomBytes(8).toString('hex')}`],
      ...['-days', '30', '-extfile', ext, '-out', cert],
    ]);
  }
  return { certPem: readFileSync(cert, 'utf8'), keyPem: readFileSync(key, 'utf8') };
}

/** Runs the openssl CLI; a failure throws with openssl's own message. */
function openssl(args: string[]): void {
  try {
    execFileSync('openssl', args, { stdio: ['ignore', 'ignore', 'pipe'] });
  } catch (err) {
    const stderr = (err as { stderr?: Buffer }).stderr?.toString().trim();
    throw new Error(`openssl ${args[0]} failed: ${stderr || (err as Error).message}`);
  }
}

/** The index's time format: UTCTime, YYMMDDHHMMSSZ. */
function utcTime(date: Date): string {
  return `${date.toISOString().slice(2, 19).replace(/[-T:]/g, '')}Z`;
}

/** openssl's spelling (apps/lib/apps.c crl_reasons): CACompromise, not RFC 5280's cACompromise. */
function opensslReason(reason: RevocationReason): string {
  return reason === 'cACompromise' ? 'CACompromise' : reason;
}
