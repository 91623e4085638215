/**
 * The certificates of a TLS scan: one complete handshake per key type (the
 * offer limited to RSA, then to ECDSA signatures — a dual-certificate server
 * answers each with its own leaf), one without SNI, and the OCSP staple of the
 * first. These are the scan's only completed handshakes: a TLS 1.3 server
 * encrypts its certificate, so Node's TLS (OpenSSL) makes them, and each is
 * judged exactly as GET /api/tls judges its one (features/tls/evidence.ts).
 */
import type { Duplex } from 'node:stream';
import type { AppContext } from '../../context.js';
import { TargetError } from '../../net/errors.js';
import type { ObservedHandshake } from '../../net/tls-handshake.js';
import { checkStaple } from '../../tls-scan/ocsp.js';
import { ScanExhausted, type ScanSession } from '../../tls-scan/session.js';
import { CertificateParseError, parseCertificate } from '../tls/certificate.js';
import { tlsEvidence } from '../tls/tls.service.js';
import type { OcspStapling, ScannedCertificate, TlsScan } from './tls-scan.schema.js';

/**
 * The offers, in OpenSSL's syntax. TLS 1.3 chooses the certificate by signature_algorithms
 * (RFC 8446 §4.4.2.2), TLS ≤ 1.2 by the suite's authentication too (RFC 5246 §7.4.2).
 */
const KEY_TYPES = [
  {
    key_type: 'ECDSA',
    sigalgs: 'ECDSA+SHA256:ECDSA+SHA384:ECDSA+SHA512:ECDSA+SHA1',
    ciphers: 'aECDSA:@SECLEVEL=0',
  },
  {
    key_type: 'RSA',
    sigalgs:
      'rsa_pss_rsae_sha256:rsa_pss_rsae_sha384:rsa_pss_rsae_sha512:RSA+SHA256:RSA+SHA384:RSA+SHA512:RSA+SHA1',
    ciphers: 'aRSA:@SECLEVEL=0',
  },
] as const;

export interface CertificateScan {
  certificates: ScannedCertificate[];
  withoutSni: TlsScan['without_sni'];
  ocsp: OcspStapling;
  /** The ALPN protocols accepted among h2 and http/1.1 (https only). */
  alpn: string[] | null;
}

export interface CertificateScanTarget {
  host: string;
  address: string;
  port: number;
  /** Null for an IP literal: then no handshake sends SNI, and `without_sni` is null. */
  sni: string | null;
  /** SMTP: the plaintext conversation before each handshake. */
  beforeTls?: (tcp: Duplex, signal: AbortSignal) => Promise<void>;
  https: boolean;
  handshakeTimeoutMs: number;
}

type Deps = Pick<AppContext, 'outbound' | 'clock'>;

export async function scanCertificates(
  deps: Deps,
  session: ScanSession,
  target: CertificateScanTarget,
  notes: string[],
): Promise<CertificateScan> {
  const now = new Date(deps.clock());
  const observe = (opts: {
    servername?: string;
    offer?: { sigalgs: string; ciphers: string };
    alpn?: string[];
  }) =>
    session
      .budgeted((signal) =>
        deps.outbound.observeTlsHandshake(target.address, {
          port: target.port,
          allowedPorts: [target.port],
          timeoutMs: target.handshakeTimeoutMs,
          signal,
          ...(opts.servername ? { servername: opts.servername } : {}),
          ...(opts.offer ? { offer: opts.offer } : {}),
          alpnProtocols: target.https ? (opts.alpn ?? ['h2', 'http/1.1']) : [],
          ...(target.beforeTls ? { beforeTls: target.beforeTls } : {}),
        }),
      )
      // Each is a result: the key type not served, the budget or deadline spent, a refused connection.
      .catch((err: unknown) => {
        if (err instanceof ScanExhausted || err instanceof TargetError) return err;
        throw err;
      });
  const sni = target.sni ?? undefined;
  const [typed, bare] = await Promise.all([
    Promise.all(
      KEY_TYPES.map(({ sigalgs, ciphers }) => observe({ servername: sni, offer: { sigalgs, ciphers } })),
    ),
    target.sni ? observe({}) : Promise.resolve(undefined),
  ]);

  const certificates: ScannedCertificate[] = [];
  const seen = new Set<string>();
  for (const [i, observed] of typed.entries()) {
    if (observed instanceof Error) continue;
    const entry = judge(observed, KEY_TYPES[i]!.key_type, target, now, notes);
    // A server with one certificate answers both offers with it when it can sign either way.
    if (!entry || seen.has(entry.fingerprint_sha256)) continue;
    seen.add(entry.fingerprint_sha256);
    certificates.push(entry);
  }
  const first = typed.find((o): o is ObservedHandshake => !(o instanceof Error));
  const leaf = first?.peerChain[0];
  // The issuer as OpenSSL linked it (sent, or from the trust store) verifies the staple's signature.
  const ocsp = checkStaple(
    first && leaf ? first.ocspResponse : null,
    { leaf: leaf ?? Buffer.alloc(0), issuer: first?.peerChain[1] },
    now,
  );

  if (!first) {
    const why =
      typed.find((o): o is TargetError | ScanExhausted => o instanceof Error)?.message ??
      'no handshake was made';
    notes.push(
      `No certificate could be read: Node's OpenSSL completed no handshake with the server (${why}); ` +
        'it offers only protocols or suites OpenSSL no longer has, or refused every offer.',
    );
  }
  // Unknown, not "none", when no complete handshake told.
  let alpn: string[] | null = null;
  if (target.https && first) {
    alpn = first.alpn ? [first.alpn] : [];
    if (first.alpn === 'h2') {
      const h1 = await observe({ servername: sni, alpn: ['http/1.1'] });
      if (!(h1 instanceof Error) && h1.alpn === 'http/1.1') alpn.push('http/1.1');
    }
  }
  return { certificates, withoutSni: withoutSni(bare, certificates), ocsp, alpn };
}

function judge(
  observed: ObservedHandshake,
  asked: 'RSA' | 'ECDSA',
  target: CertificateScanTarget,
  now: Date,
  notes: string[],
): ScannedCertificate | undefined {
  if (observed.peerChain.length === 0) return undefined;
  let evidence: ReturnType<typeof tlsEvidence>;
  try {
    evidence = tlsEvidence(observed, { host: target.host, port: target.port, sni: target.sni, now });
  } catch (err) {
    if (!(err instanceof CertificateParseError)) throw err;
    notes.push(`The certificate served for ${asked} could not be read: ${err.message}.`);
    return undefined;
  }
  const { leaf } = evidence;
  const served = leaf.key.type === 'EC' ? 'ECDSA' : /^RSA/.test(leaf.key.type) ? 'RSA' : leaf.key.type;
  return {
    key_type:
      served === 'ECDSA' || served === 'RSA'
        ? served
        : /^Ed/.test(served)
          ? 'EdDSA'
          : served === 'DSA'
            ? 'DSA'
            : 'other',
    key_bits: leaf.key.bits ?? null,
    fingerprint_sha256: leaf.fingerprint_sha256,
    protocol: evidence.connection.protocol,
    leaf,
    chain: evidence.chain.certificates,
    authorized: evidence.connection.authorized,
    authorization_error: evidence.connection.authorization_error,
    verdict: evidence.verdict,
    findings: evidence.findings.filter(
      (f) => f.code !== 'protocol_below_tls_1_2' && f.code !== 'no_forward_secrecy',
    ),
  };
}

function withoutSni(
  bare: ObservedHandshake | Error | undefined,
  certificates: ScannedCertificate[],
): TlsScan['without_sni'] {
  if (bare === undefined) return null;
  if (bare instanceof Error)
    return { fingerprint_sha256: null, same_as_sni: false, subject: null, error: bare.message };
  const der = bare.peerChain[0];
  if (!der)
    return { fingerprint_sha256: null, same_as_sni: false, subject: null, error: 'no certificate was sent' };
  let parsed: ReturnType<typeof parseCertificate>;
  try {
    parsed = parseCertificate(der);
  } catch (err) {
    if (!(err instanceof CertificateParseError)) throw err;
    return { fingerprint_sha256: null, same_as_sni: false, subject: null, error: err.message };
  }
  return {
    fingerprint_sha256: parsed.fingerprintSha256,
    same_as_sni: certificates.some((c) => c.fingerprint_sha256 === parsed.fingerprintSha256),
    subject: parsed.subject,
    error: null,
  };
}
