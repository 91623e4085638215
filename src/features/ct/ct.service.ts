/**
 * GET /api/certificates and GET /api/subdomains: normalize the domain, load
 * its CT history through the one CT chain (cached one hour under one key, so
 * the two endpoints share a single upstream call; five minutes when the
 * fallback gave it), then shape the answer; subdomains also resolves the most
 * recently valid names live.
 */
import { randomBytes } from 'node:crypto';
import { type CachedLoader, type Freshness, freshness } from '../../cache/cached.js';
import type { Clock } from '../../cache/types.js';
import { mapConcurrent } from '../../concurrency.js';
import { badInput, isUpstreamFailed } from '../../errors.js';
import { isIP } from '../../net/address.js';
import { normalizeDomain } from '../../net/names.js';
import type { ChainResult, ProviderChain } from '../../providers/chain.js';
import type { CtProvider } from '../../providers/ct/types.js';
import type { DnsResolver } from '../../providers/dns/resolver.js';
import type { DnsAnswer, DnsRecordType } from '../../providers/dns/types.js';
import type { Attribution } from '../../providers/types.js';
import type { CertificatesResponse, GapBody, HostBody, SubdomainsResponse } from './ct.schema.js';
import { buildHistory, type CtHistory, type HistoryGap } from './history.js';
import { classifyHost, type DnsWildcard, type HostDns, hostDnsFrom, wildcardFrom } from './live-hosts.js';
import { selectSubdomainNames } from './subdomain-names.js';

/** Seconds a CT history is reused (both endpoints read it). */
export const CERTIFICATES_TTL = 3600;
/** Seconds a subdomains answer (CT plus live DNS) is reused. */
export const SUBDOMAINS_TTL = 1800;
/**
 * Seconds a history is reused when the fallback gave it, crt.sh having failed, and a
 * subdomains answer built on one: Cert Spotter lists unexpired certificates only, and
 * crt.sh usually answers again within minutes, so the whole history is not held back an hour.
 */
export const FALLBACK_TTL = 300;
/** Names resolved live per request: the most recently valid ones. */
export const MAX_RESOLVED_NAMES = 50;
/** Names resolved at once (each is three queries). */
export const RESOLVE_CONCURRENCY = 16;
/** Random names asked to detect a DNS wildcard; several, so a wildcard rotating its answers shows its whole set. */
export const WILDCARD_PROBES = 3;
/** Hosts listed at most; `truncated` says when there were more. */
export const MAX_HOSTS = 1000;

const HOST_TYPES: readonly DnsRecordType[] = ['A', 'AAAA', 'CNAME'];
const PROBE_TYPES: readonly DnsRecordType[] = ['A', 'AAAA'];

export interface CtDeps {
  chain: Pick<ProviderChain, 'run'>;
  /** In chain order: primary first. */
  providers: readonly CtProvider[];
  clock: Clock;
  /** Per-attempt budget of the CT chain (crt.sh is slow). */
  timeoutMs?: number;
}

export interface SubdomainDeps extends CtDeps {
  loader: Pick<CachedLoader, 'load'>;
  dns: Pick<DnsResolver, 'resolve'>;
  /** A fresh random DNS label per call (tests make it predictable). */
  randomLabel?: () => string;
}

export interface Shaped<T> {
  body: T;
  cache: Freshness;
}

/** The `domain` parameter, normalized; a bare TLD would ask CT for a whole zone. */
export function parseCtDomain(input: string): string {
  // Checked here: the shared domain check's IP hint speaks of /api/dns (type=PTR).
  if (isIP(input.replace(/^\[|\]$/g, '')) !== 0) {
    throw badInput('domain', 'must be a domain name, not an IP address (CT is searched by name)');
  }
  const domain = normalizeDomain(input, { param: 'domain' });
  if (!domain.includes('.'))
    throw badInput('domain', 'must have at least two labels (a TLD alone is not searched)');
  return domain;
}

/**
 * Part of both cache keys: an entry written before the history carried its
 * gaps (issue 18) must not be read as one that does, by this instance or by
 * another of a different version sharing Redis during a rolling deploy.
 */
const CACHE_SHAPE = 'v2';

/** Whether a provider failed before the one that answered: the answer is a fallback's. */
const byFallback = (answered: Attribution) => answered.providers_tried.some((a) => a.status === 'failed');

/** The domain's CT history through the chain: cache, crt.sh, then Cert Spotter after a failure. */
export function loadCtHistory(deps: CtDeps, domain: string): Promise<ChainResult<CtHistory>> {
  return deps.chain.run({
    capability: 'ct',
    providers: deps.providers,
    key: `${CACHE_SHAPE}:${domain}`,
    // An empty history is an answer and is cached like any other; failures never reach here.
    ttl: (_history, answered) => (byFallback(answered) ? FALLBACK_TTL : CERTIFICATES_TTL),
    timeoutMs: deps.timeoutMs,
    call: async (provider, signal) => buildHistory(domain, await provider.issuances(domain, signal)),
  });
}

export async function lookupCertificates(deps: CtDeps, input: string): Promise<Shaped<CertificatesResponse>> {
  const domain = parseCtDomain(input);
  const result = await loadCtHistory(deps, domain);
  const history = result.value;
  // Computed per response, not cached: a certificate expires while its history sits in the cache.
  const now = deps.clock();
  const gaps = describeGaps(history.gaps, result);
  return {
    body: {
      domain,
      total: history.total,
      truncated: gaps.length > 0,
      expired_excluded: gaps.some((g) => g.reason === 'expired_excluded' || g.reason === 'unexpired_only'),
      gaps,
      issuances: history.issuances.map((i) => ({ ...i, expired: Date.parse(i.not_after) < now })),
      source: result.source,
      source_id: result.source_id,
      providers_tried: result.providers_tried,
    },
    cache: result.cache,
  };
}

export async function lookupSubdomains(
  deps: SubdomainDeps,
  input: string,
): Promise<Shaped<SubdomainsResponse>> {
  const domain = parseCtDomain(input);
  const result = await deps.loader.load<SubdomainsResponse>(
    `subdomains:${CACHE_SHAPE}:${domain}`,
    async () => {
      const ct = await loadCtHistory(deps, domain);
      const body = await discoverHosts(deps, domain, ct);
      // A partial DNS failure is not cached for half an hour: the next request asks again (the CT part stays cached).
      const complete =
        body.dns_wildcard.detected !== null && body.hosts.every((h) => h.status !== 'lookup_failed');
      const ttl = byFallback(ct) ? FALLBACK_TTL : SUBDOMAINS_TTL;
      return { value: body, ttl: complete ? ttl : 0 };
    },
  );
  return { body: result.value, cache: freshness(result) };
}

async function discoverHosts(
  deps: SubdomainDeps,
  domain: string,
  ct: ChainResult<CtHistory>,
): Promise<SubdomainsResponse> {
  const names = selectSubdomainNames(domain, ct.value.issuances);
  const checked = names.slice(0, MAX_RESOLVED_NAMES);
  // The wildcard first: without it, every answer below is uninterpretable.
  const wildcard = await detectWildcard(deps, domain);
  const live = await mapConcurrent(checked, RESOLVE_CONCURRENCY, (n) =>
    resolveHost(deps.dns, n.name, HOST_TYPES),
  );
  const hosts: HostBody[] = names.slice(0, MAX_HOSTS).map((n, i) => {
    const dns = live[i];
    const host: HostBody = {
      name: n.name,
      status: dns ? classifyHost(n.name, domain, dns, wildcard) : 'unchecked',
      addresses: dns?.addresses ?? [],
      first_seen: n.first_seen,
      last_seen: n.last_seen,
      last_not_after: n.last_not_after,
      certificate_count: n.certificate_count,
      wildcard: n.wildcard,
    };
    if (dns?.cname) host.cname = dns.cname;
    return host;
  });
  const gaps: SubdomainsResponse['gaps'] = describeGaps(ct.value.gaps, ct);
  if (names.length > checked.length) {
    gaps.push({
      reason: 'unchecked_names',
      detail:
        `${names.length - checked.length} of ${names.length} names were not resolved (only the ` +
        `${MAX_RESOLVED_NAMES} most recently valid are): they are marked unchecked.`,
    });
  }
  if (names.length > MAX_HOSTS) {
    gaps.push({
      reason: 'host_cap',
      detail: `Only the first ${MAX_HOSTS} of ${names.length} names are listed.`,
    });
  }
  return {
    domain,
    discovered_count: names.length,
    checked_count: checked.length,
    active_count: hosts.filter((h) => h.status === 'active').length,
    truncated: gaps.length > 0,
    gaps,
    dns_wildcard: wildcard,
    hosts,
    source: ct.source,
    source_id: ct.source_id,
    providers_tried: ct.providers_tried,
  };
}

/**
 * The history's gaps as the answer states them. Expired history missing
 * because a provider lists unexpired certificates only is the price of its
 * being asked at all, so when it answered after a failure the gap says that
 * the fallback answered and why.
 */
function describeGaps(gaps: readonly HistoryGap[], result: ChainResult<CtHistory>): GapBody[] {
  const failed = result.providers_tried.filter((a) => a.status === 'failed').map((a) => a.name);
  return gaps.map((gap) =>
    gap.reason === 'unexpired_only' && failed.length > 0
      ? {
          reason: gap.reason,
          detail: `${failed.join(' and ')} failed (see providers_tried), so the fallback answered. ${gap.detail}`,
        }
      : { reason: gap.reason, detail: gap.detail },
  );
}

async function detectWildcard(deps: SubdomainDeps, domain: string): Promise<DnsWildcard> {
  const label = deps.randomLabel ?? randomProbeLabel;
  const probes = Array.from({ length: WILDCARD_PROBES }, () => `${label()}.${domain}`);
  return wildcardFrom(await Promise.all(probes.map((name) => resolveHost(deps.dns, name, PROBE_TYPES))));
}

/** A, AAAA (and CNAME) of one name, concurrently; a resolver failure is recorded, not thrown. */
async function resolveHost(
  dns: Pick<DnsResolver, 'resolve'>,
  name: string,
  types: readonly DnsRecordType[],
): Promise<HostDns> {
  const settled = await Promise.allSettled(types.map((type) => dns.resolve(name, type)));
  const answers: (DnsAnswer | undefined)[] = settled.map((s) => {
    if (s.status === 'fulfilled') return s.value.value;
    // Every resolver failing is the resolver's upstream_failed; anything else is a bug and stays loud.
    if (isUpstreamFailed(s.reason)) return undefined;
    throw s.reason;
  });
  return hostDnsFrom(name, answers);
}

/** A label no zone holds: 16 random hex digits, named so an operator reading query logs can tell what it is. */
function randomProbeLabel(): string {
  return `netdiag-probe-${randomBytes(8).toString('hex')}`;
}
