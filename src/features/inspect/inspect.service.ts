/**
 * GET /api/inspect: live HTTP, security-header, TLS and network evidence
 * for one public host, plus routing data for an optional address.
 *
 * Flow: the input is normalized (pure), the target resolved and every
 * address checked ONCE before anything connects (a non-public target is a
 * 400 and nothing is dialed), then the parts run concurrently. Each part
 * reports its own `status`; a failing part (RIPEstat down, a site that
 * times out) leaves the others standing. Only a target that cannot be
 * resolved at all fails the request (502, the resolver's providers_tried).
 *
 * Caching: the whole answer is cached INSPECT_TTL_SECONDS per (target, ip,
 * include_tls), single-flight. A part that failed on OUR side (a provider
 * chain or our DNS failed) makes the answer uncacheable, because failures
 * are never cached (docs/architecture.md §1); a target that refuses, times out or
 * shows a bad certificate is evidence about the target and is cached.
 */
import { type CachedLoader, type Freshness, freshness } from '../../cache/cached.js';
import type { Clock } from '../../cache/types.js';
import { AppError, isOperational } from '../../errors.js';
import { TargetError } from '../../net/errors.js';
import type { ResolvedTarget } from '../../net/resolve-target.js';
import type { HopEvidence, SafeFetchResult } from '../../net/safe-http.js';
import type { DnssecValidator } from '../dnssec/verdicts.js';
import type { TlsEvidence, TlsPart } from '../tls/tls.schema.js';
import { targetFailure } from '../tls/tls.service.js';
import { hstsPreloadEligibility, type PreloadEligibility } from './hsts.js';
import { type ChainOutcome, describeFailure, finalResult, type HttpPart, httpPart } from './http-evidence.js';
import { type InspectTarget, parseInspectTarget, parseRoutingIp } from './inspect-target.js';
import { type NetworkDeps, type NetworkPart, networkPart, type RoutingPart, routingPart } from './network.js';
import { evaluateSecurityHeaders, type SecurityHeaders } from './security-headers.js';
import { fieldLines } from './verdict.js';

export const INSPECT_TTL_SECONDS = 120;

/**
 * Fetches one URL through outbound safety (safeFetch with the inspector's
 * caps), reporting each hop as it completes so a later failure keeps them.
 */
export type ChainFetcher = (url: string, onHop: (hop: HopEvidence) => void) => Promise<SafeFetchResult>;

/** The /api/tls evidence for a host (its `tls` object), from the TLS service (its cache included). */
export type TlsInspector = (host: string) => Promise<TlsEvidence>;

export interface InspectDeps extends NetworkDeps {
  /** Resolves the target and checks every address (ctx.outbound.resolve: the DNS client, allow-list and all). */
  resolve: (host: string) => Promise<ResolvedTarget>;
  fetch: ChainFetcher;
  tls: TlsInspector;
  loader: Pick<CachedLoader, 'load'>;
  clock: Clock;
  /** netdiag's own DNSSEC verdicts (features/dnssec/verdicts.ts): a bogus name is an answer. */
  dnssec?: Pick<DnssecValidator, 'verdict'>;
}

export interface InspectQuery {
  target: string;
  ip?: string;
  include_tls?: boolean;
}

export type SecurityHeadersPart =
  | ({ status: 'ok'; hsts_preload: PreloadEligibility } & SecurityHeaders)
  | { status: 'error'; error: string };

export interface InspectResponse {
  target: string;
  target_type: 'domain' | 'ip';
  /** Every address the target resolved to, checked public; the connections went only to these. */
  addresses: string[];
  checked_at: string;
  http: HttpPart;
  security_headers: SecurityHeadersPart;
  tls?: TlsPart;
  network: NetworkPart;
  routing?: RoutingPart;
}

export interface InspectLookup {
  body: InspectResponse;
  cache: Freshness;
}

export async function inspect(deps: InspectDeps, query: InspectQuery): Promise<InspectLookup> {
  // Pure checks first: bad input is a 400 before any lookup or connection.
  const target = parseInspectTarget(query.target);
  const ip = query.ip === undefined ? undefined : parseRoutingIp(query.ip);
  const includeTls = query.include_tls ?? true;
  const key = `inspect:${target.host}|ip=${ip ?? '-'}|tls=${includeTls ? 1 : 0}`;
  const result = await deps.loader.load(key, async () => {
    const { body, transient } = await runInspection(deps, target, ip, includeTls);
    return { value: body, ttl: transient ? 0 : INSPECT_TTL_SECONDS };
  });
  return { body: result.value, cache: freshness(result) };
}

async function runInspection(
  deps: InspectDeps,
  target: InspectTarget,
  ip: string | undefined,
  includeTls: boolean,
): Promise<{ body: InspectResponse; transient: boolean }> {
  // Throws a 400 UnsafeTargetError for a non-public (or nonexistent) target before any connection,
  // or the resolver's 502 when DNS itself failed; unless netdiag's own validation finds the name
  // DNSSEC-bogus, which is the answer (issue 32): nothing is contacted, every part says why.
  let resolved: ResolvedTarget;
  try {
    resolved = await deps.resolve(target.host);
  } catch (err) {
    const bogus = await bogusTarget(deps, target, err, includeTls);
    if (bogus) return { body: bogus, transient: true };
    throw err;
  }
  const checkedAt = new Date(deps.clock()).toISOString();
  // An IPv6 literal goes in brackets in a URL.
  const authority = resolved.literal && resolved.host.includes(':') ? `[${resolved.host}]` : resolved.host;

  const [http, https, tls, network, routing] = await Promise.all([
    fetchChain(deps, `http://${authority}/`),
    fetchChain(deps, `https://${authority}/`),
    includeTls ? tlsPart(deps, resolved.host) : undefined,
    networkPart(deps, resolved.addresses),
    ip === undefined ? undefined : routingPart(deps, ip),
  ]);

  const body: InspectResponse = {
    target: resolved.host,
    target_type: resolved.literal ? 'ip' : 'domain',
    addresses: resolved.addresses.map((a) => a.address),
    checked_at: checkedAt,
    http: httpPart(http, https),
    security_headers: securityHeadersPart(resolved.host, resolved.literal, http, https),
    ...(tls ? { tls: tls.part } : {}),
    network: network.part,
    ...(routing ? { routing: routing.part } : {}),
  };
  const transient =
    isOurFailure(http) ||
    isOurFailure(https) ||
    tls?.transient === true ||
    network.transient ||
    routing?.transient === true;
  return { body, transient };
}

/**
 * The answer for a name the resolvers refused (a 502 with providers_tried) and netdiag's own
 * validation finds DNSSEC-bogus: no address is read from a broken chain, so no part has anything
 * to show but why. Undefined when the failure is anything else (it stays the 502).
 */
async function bogusTarget(
  deps: InspectDeps,
  target: InspectTarget,
  err: unknown,
  includeTls: boolean,
): Promise<InspectResponse | undefined> {
  if (
    !deps.dnssec ||
    !(err instanceof AppError) ||
    err.statusCode !== 502 ||
    err.providersTried === undefined
  )
    return undefined;
  const verdict = await deps.dnssec.verdict(target.host, 'A');
  if (verdict.status !== 'bogus' || !verdict.reason) return undefined;
  const { zone, code, detail } = verdict.reason;
  const why =
    `${target.host} is DNSSEC-bogus by netdiag's own validation: the chain breaks at ${zone} (${code}): ${detail}. ` +
    'Validating resolvers answer SERVFAIL for it, so clients behind them cannot reach it; nothing was contacted.';
  const failed = (startUrl: string): ChainOutcome => ({
    startUrl,
    ok: false,
    hops: [],
    error: new AppError(502, 'upstream_failed', why),
  });
  return {
    target: target.host,
    target_type: 'domain',
    addresses: [],
    checked_at: new Date(deps.clock()).toISOString(),
    http: httpPart(failed(`http://${target.host}/`), failed(`https://${target.host}/`)),
    security_headers: { status: 'error', error: why },
    ...(includeTls ? { tls: { status: 'error' as const, stage: 'dns', error: why } } : {}),
    network: { status: 'error', addresses: [], truncated: false, error: why },
  };
}

async function fetchChain(deps: InspectDeps, startUrl: string): Promise<ChainOutcome> {
  const hops: HopEvidence[] = [];
  try {
    const result = await deps.fetch(startUrl, (hop) => hops.push(hop));
    return { startUrl, ok: true, result };
  } catch (err) {
    if (!isOperational(err)) throw err;
    return { startUrl, ok: false, hops, error: err };
  }
}

/** A chain that failed because our DNS failed (not because the target did). */
function isOurFailure(outcome: ChainOutcome): boolean {
  return !outcome.ok && outcome.error instanceof AppError && outcome.error.statusCode >= 500;
}

function securityHeadersPart(
  host: string,
  literal: boolean,
  http: ChainOutcome,
  https: ChainOutcome,
): SecurityHeadersPart {
  const final = finalResult(http, https);
  if (!final) return { status: 'error', error: 'no HTTP or HTTPS response to read headers from' };
  const firstHttps = https.ok ? https.result.hops[0] : https.hops[0];
  const firstHttp = http.ok ? http.result.hops[0] : http.hops[0];
  const httpFailure = !http.ok && !firstHttp ? describeFailure(http.error) : undefined;
  const hstsPreload = hstsPreloadEligibility({
    host,
    literal,
    ...(firstHttps
      ? {
          firstHttps: {
            status: firstHttps.status,
            stsLines: fieldLines(firstHttps.headers['strict-transport-security']),
            certificateValid: firstHttps.tls?.authorized === true,
          },
        }
      : {}),
    firstHttp: firstHttp
      ? { kind: 'response', status: firstHttp.status, location: firstHttp.location ?? null }
      : {
          kind: 'failed',
          stage: httpFailure?.stage ?? 'request',
          notListening: !http.ok && isConnectionRefused(http.error),
        },
  });
  return {
    status: 'ok',
    ...evaluateSecurityHeaders(final.final.url, final.final.headers),
    hsts_preload: hstsPreload,
  };
}

/** Nothing listens on the port: the connection was refused outright (not a timeout or a reset). */
function isConnectionRefused(err: unknown): boolean {
  if (!(err instanceof TargetError) || err.stage !== 'connect') return false;
  const code = (err.cause as { code?: unknown } | undefined)?.code;
  return code === 'ECONNREFUSED' || /\bECONNREFUSED\b/.test(err.message);
}

async function tlsPart(deps: InspectDeps, host: string): Promise<{ part: TlsPart; transient: boolean }> {
  try {
    const evidence = await deps.tls(host);
    return { part: { status: 'ok', ...evidence }, transient: false };
  } catch (err) {
    // A failed connection or handshake is evidence about the target, as /api/tls answers it.
    const failure = targetFailure(err);
    if (failure !== undefined) return { part: failure, transient: false };
    // Our own failure (the DNS providers, with providers_tried): this part only, and not cached.
    if (err instanceof AppError && err.providersTried !== undefined) {
      return { part: { status: 'error', error: err.message, stage: 'dns' }, transient: true };
    }
    throw err;
  }
}
