/**
 * GET /api/tls (and the `tls` part of /api/inspect): one live TLS handshake
 * with HOST:443 through net/'s safe connect, turned into evidence.
 *
 *   const { body: { tls }, cache } = await inspectTls(ctx, 'example.com');
 *
 * The client hello offers TLS 1.0 to 1.3 with Node's default cipher list at
 * OpenSSL security level 0, so a server stuck on old protocols or weak keys
 * is reached and reported rather than failing the handshake; what the server
 * picks from that offer is what is reported. The certificate is not enforced
 * on the connection (net/ connects with rejectUnauthorized false); it is
 * judged afterwards: `authorized` is OpenSSL's verdict against the trust store
 * (the system's, or the test CA in tests), the findings are ours.
 *
 * Cached 300 s per host (`tls:<host>`); failures are not cached. Concurrent
 * identical requests share one handshake.
 */
import { type Freshness, freshness } from '../../cache/cached.js';
import type { AppContext } from '../../context.js';
import { AppError } from '../../errors.js';
import { TargetError } from '../../net/errors.js';
import type { ObservedHandshake } from '../../net/tls-handshake.js';
import type { DnssecDeps } from '../dnssec/dnssec.service.js';
import { dnssecValidator } from '../dnssec/verdicts.js';
import { CertificateParseError } from './certificate.js';
import { buildTlsEvidence, type HandshakeFacts } from './evidence.js';
import { HandshakeParseError, sentCertificates } from './handshake-records.js';
import type { TlsEvidence, TlsPart, TlsResponse } from './tls.schema.js';
import { parseTlsTarget, type TlsTarget } from './tls-target.js';

/** What inspectTls needs; the app context satisfies it, a test can build a smaller one. */
export type TlsDeps = Pick<AppContext, 'clock' | 'loader' | 'outbound'>;

export interface TlsInspection {
  body: { tls: TlsEvidence };
  /** For reply.cacheable(): whether it came from the cache, and for how much longer it is fresh. */
  cache: Freshness;
}

export const TLS_CACHE_SECONDS = 300;
export const TLS_PORT = 443;

/**
 * Inspects the certificate and TLS parameters HOST serves on port 443.
 * `target` is user input (see tls-target.ts). Rejects with a 400 AppError for
 * bad input or a non-public target (before any connection), the DNS client's
 * 502 when resolution failed, and a 502 AppError (code upstream_failed)
 * naming the stage when the connection or handshake failed.
 */
export async function inspectTls(deps: TlsDeps, target: string): Promise<TlsInspection> {
  const parsed = parseTlsTarget(target);
  const result = await deps.loader.load(`tls:${parsed.host}`, async () => ({
    value: await liveInspection(parsed, deps),
    ttl: TLS_CACHE_SECONDS,
  }));
  return { body: { tls: result.value }, cache: freshness(result) };
}

async function liveInspection(target: TlsTarget, deps: TlsDeps): Promise<TlsEvidence> {
  let observed: ObservedHandshake;
  try {
    observed = await deps.outbound.observeTlsHandshake(target.host, { port: TLS_PORT });
  } catch (err) {
    throw handshakeFailure(target.host, err);
  }
  if (observed.peerChain.length === 0) {
    // Only anonymous or PSK suites complete a handshake without a certificate; the client offers neither.
    throw new AppError(
      502,
      'upstream_failed',
      `${target.host}:${TLS_PORT}: the server presented no certificate`,
    );
  }
  try {
    return tlsEvidence(observed, {
      host: target.host,
      port: TLS_PORT,
      sni: target.literal ? null : target.host,
      now: new Date(deps.clock()),
    });
  } catch (err) {
    if (err instanceof CertificateParseError) {
      throw new AppError(
        502,
        'upstream_failed',
        `${target.host}:${TLS_PORT}: the server's certificate: ${err.message}`,
        {
          cause: err,
        },
      );
    }
    throw err;
  }
}

/**
 * The evidence of one observed handshake, judged for `host` (its name is
 * what the certificate must cover): GET /api/tls's and each MX host's of GET
 * /api/mail-tls. Throws CertificateParseError for a certificate that cannot
 * be read, RangeError when the server sent none.
 */
export function tlsEvidence(
  observed: ObservedHandshake,
  at: { host: string; port: number; sni: string | null; now: Date },
  sent: Buffer[] | undefined = sentList(observed),
): TlsEvidence {
  return buildTlsEvidence(handshakeFacts(observed, at, sent));
}

function handshakeFacts(
  observed: ObservedHandshake,
  { host, port, sni, now }: { host: string; port: number; sni: string | null; now: Date },
  sent: Buffer[] | undefined,
): HandshakeFacts {
  return {
    host,
    port,
    address: observed.address,
    sni,
    protocol: observed.protocol,
    cipher: observed.cipher,
    alpn: observed.alpn,
    ephemeralKey: observed.ephemeralKey,
    ocspStapled: observed.ocspResponse !== null,
    authorized: observed.authorized,
    authorizationError: observed.authorizationError,
    sent,
    peerChain: observed.peerChain,
    now,
  };
}

/**
 * The Certificate message's list, or undefined when it cannot be read (a suite we cannot decrypt,
 * an oversized flight) or disagrees with the certificate OpenSSL verified: then the caller
 * falls back to Node's reconstruction and says so (`chain.source`).
 */
export function sentList(observed: ObservedHandshake): Buffer[] | undefined {
  const { serverBytes, protocol, cipher, keylog, peerChain } = observed;
  if (serverBytes === undefined) return undefined;
  try {
    const sent = sentCertificates({ bytes: serverBytes, protocol, cipher: cipher.standardName, keylog });
    const verifiedLeaf = peerChain[0];
    return verifiedLeaf && sent[0]?.equals(verifiedLeaf) ? sent : undefined;
  } catch (err) {
    if (err instanceof HandshakeParseError) return undefined;
    throw err;
  }
}

/**
 * GET /api/tls's answer: the evidence (cached), or, as an answer all the same and never
 * cached, why the target gave none. Bad input (400) and our own failures (the DNS
 * providers: a 502 with providers_tried) stay errors.
 */
export async function lookupTls(
  deps: TlsDeps & DnssecDeps,
  target: string,
): Promise<{ body: TlsResponse; cache: Freshness | undefined }> {
  try {
    const { body, cache } = await inspectTls(deps, target);
    return { body: { tls: { status: 'ok', ...body.tls } }, cache };
  } catch (err) {
    const failure = targetFailure(err) ?? (await bogusName(deps, target, err));
    if (failure === undefined) throw err;
    return { body: { tls: failure }, cache: undefined };
  }
}

/**
 * The resolvers failed the name (a 502 with providers_tried): when netdiag's own validation finds
 * it DNSSEC-bogus, that is the answer about the target (issue 32), not an outage of ours: every
 * validating resolver refuses the name, so no client behind one reaches it. No connection is made
 * to addresses that failed validation.
 */
async function bogusName(
  deps: DnssecDeps,
  target: string,
  err: unknown,
): Promise<Extract<TlsPart, { status: 'error' }> | undefined> {
  if (!(err instanceof AppError) || err.statusCode !== 502 || err.providersTried === undefined)
    return undefined;
  const { host, literal } = parseTlsTarget(target);
  if (literal) return undefined;
  const verdict = await dnssecValidator(deps).verdict(host, 'A');
  if (verdict.status !== 'bogus' || !verdict.reason) return undefined;
  const { zone, code, detail } = verdict.reason;
  return {
    status: 'error',
    stage: 'dns',
    error:
      `${host} is DNSSEC-bogus by netdiag's own validation: the chain breaks at ${zone} (${code}): ${detail}. ` +
      'Validating resolvers answer SERVFAIL for it, so clients behind them cannot reach it; no connection was made.',
  };
}

/**
 * The error part for a failure that is evidence about the target (inspectTls's 502 without
 * providers_tried: the connection, the handshake or the certificate), else undefined.
 */
export function targetFailure(err: unknown): Extract<TlsPart, { status: 'error' }> | undefined {
  if (!(err instanceof AppError) || err.code !== 'upstream_failed' || err.providersTried !== undefined) {
    return undefined;
  }
  const stage = err.cause instanceof TargetError ? err.cause.stage : undefined;
  return { status: 'error', error: err.message, ...(stage ? { stage } : {}) };
}

/** 400s and the DNS client's own errors pass through; a failed connection becomes a 502 naming the stage. */
function handshakeFailure(host: string, err: unknown): Error {
  if (err instanceof AppError) return err;
  if (err instanceof TargetError) {
    return new AppError(
      502,
      'upstream_failed',
      `TLS handshake with ${host}:${TLS_PORT} failed at the ${err.stage} stage (${err.kind}): ${err.message}`,
      { cause: err },
    );
  }
  return err instanceof Error ? err : new Error(String(err));
}
