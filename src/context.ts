/**
 * The shared mechanisms every feature stands on, built once per app: one
 * cache (+ single-flight loader), one provider registry, one provider chain,
 * one HTTP client for configured upstreams, one outbound client for every
 * other destination, one store for the rate-limit budgets, one metrics registry.
 */
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { CachedLoader } from './cache/cached.js';
import { MemoryCache } from './cache/memory.js';
import { createRedisClient, RedisCache } from './cache/redis.js';
import { TieredCache } from './cache/tiered.js';
import type { Cache, CacheEvents, Clock } from './cache/types.js';
import type { Config } from './config/index.js';
import { IterativeResolver } from './dns-engine/index.js';
import { engineProviderInfo } from './dns-engine/provider.js';
import { loadTrustAnchors, type TrustAnchors } from './features/dnssec/trust-anchors.js';
import { Outbound } from './net/outbound.js';
import { Metrics } from './plugins/metrics.js';
import { ProviderChain } from './providers/chain.js';
import type { CrtshOptions } from './providers/ct/crtsh.js';
import { createDnsProviders, type DnsProviderOptions } from './providers/dns/index.js';
import { DnsResolver } from './providers/dns/resolver.js';
import { HttpClient } from './providers/http-client.js';
import type { RelayListsStart } from './providers/ip/relay-lists.js';
import { ProviderRegistry } from './providers/registry.js';
import { createRateLimitStore, type RateLimitStore } from './rate-limit/store.js';

export interface AppContext {
  readonly config: Config;
  readonly clock: Clock;
  readonly metrics: Metrics;
  readonly redis: Redis | undefined;
  readonly cache: Cache;
  /** Where every budget is counted: the per-client limits, an upstream's published limit. */
  readonly rateLimitStore: RateLimitStore;
  /** What every cache read and write reports (counted in metrics); replays count their hits here too. */
  readonly cacheEvents: Required<CacheEvents>;
  readonly loader: CachedLoader;
  readonly registry: ProviderRegistry;
  readonly chain: ProviderChain;
  readonly http: HttpClient;
  /** The one DNS client: every service asks DNS through it. */
  readonly dns: DnsResolver;
  /** The one client for destinations no operator configured (user- or upstream-named): net/outbound.ts. */
  readonly outbound: Outbound;
  /** netdiag's own iterative resolution from the root (src/dns-engine), the DNSSEC validator's source. */
  readonly dnsEngine: IterativeResolver;
  /** Where DNSSEC validation starts: DNSSEC_TRUST_ANCHORS, else the IANA root KSKs. */
  readonly trustAnchors: TrustAnchors;
  /** Trust anchors for fixture upstreams in tests; production uses the system store + NODE_EXTRA_CA_CERTS. */
  readonly ca: string | string[] | undefined;
  /** crt.sh tuning from AppDeps; empty in production. */
  readonly crtsh: CrtshOptions;
  /** When the relay lists start (AppDeps.relayLists): 'on-ready' but for a one-shot CLI command. */
  readonly relayLists: RelayListsStart;
  close(): Promise<void>;
}

/** What tests and benchmarks may replace. */
export interface AppDeps {
  clock?: Clock;
  cache?: Cache;
  redis?: Redis;
  ca?: string | string[];
  metrics?: Metrics;
  /** DNS transport tuning (tests shorten the UDP retry). */
  dnsOptions?: DnsProviderOptions;
  /** crt.sh tuning (tests shorten its 35 s per-search deadline). */
  crtsh?: CrtshOptions;
  /**
   * 'on-ready' (default, the server): the relay lists load and download when the app is ready.
   * 'on-demand' (a one-shot `netdiag` command): only when something reads them, so a command
   * that does not (dns, tls, ...) downloads nothing it will not use.
   */
  relayLists?: RelayListsStart;
}

export function createContext(config: Config, log: Logger, deps: AppDeps = {}): AppContext {
  const clock = deps.clock ?? Date.now;
  const metrics = deps.metrics ?? new Metrics();
  const ownsRedis = deps.redis === undefined && config.redisUrl !== undefined;
  const redis = deps.redis ?? (config.redisUrl ? createRedisClient(config.redisUrl) : undefined);
  if (ownsRedis && redis) {
    // Without a listener ioredis reports every reconnect attempt as an unhandled 'error' event.
    redis.on('error', (err: Error) => log.warn({ err: err.message }, 'redis connection error'));
  }

  const events: Required<CacheEvents> = {
    onHit: () => metrics.cacheHit.inc(),
    onMiss: () => metrics.cacheMiss.inc(),
    onError: (op, err) => {
      metrics.cacheError.inc();
      log.warn(
        { op, err: err instanceof Error ? err.message : String(err) },
        'cache backend failure, treated as a miss',
      );
    },
  };
  const cache =
    deps.cache ??
    (redis
      ? new TieredCache(new RedisCache(redis, { events, clock }), { clock })
      : new MemoryCache({ clock }));
  const loader = new CachedLoader(cache, { events, clock });
  const rateLimitStore = createRateLimitStore({
    redis,
    clock,
    onError: (err) => {
      metrics.cacheError.inc();
      log.warn(
        { op: 'rate-limit', err: err instanceof Error ? err.message : String(err) },
        'rate-limit store failure, counted in process',
      );
    },
  });
  // Every attempt on every upstream, from the chain or a background refresh, is counted once.
  const registry = new ProviderRegistry(clock, {
    onAttempt: (provider, outcome, kind) =>
      metrics.providerAttempts.inc({ provider, outcome, kind: kind ?? 'none' }),
  });
  const chain = new ProviderChain({ loader, registry, timeoutMs: config.providerTimeoutMs });
  const http = new HttpClient(deps.ca ? { ca: deps.ca } : {});
  const dnsProviders = createDnsProviders(config.dnsResolvers, { ...deps.dnsOptions, ca: deps.ca });
  registry.registerChain('dns', dnsProviders);
  const dns = new DnsResolver(chain, dnsProviders);
  const outbound = new Outbound({
    resolver: dns,
    allowCidrs: config.unsafeAllowTargetCidrs,
    ...(deps.ca ? { ca: deps.ca } : {}),
    timeoutMs: config.providerTimeoutMs,
    limits: {
      liveProbes: config.maxLiveProbes,
      smtpSessions: config.maxSmtpSessions,
      // A probe waits for a slot at most one upstream deadline: longer, and a request under a
      // flood would spend its time queueing for what it will most likely not get.
      waitMs: config.providerTimeoutMs,
      onRejected: (limit) => metrics.liveProbesRejected.inc({ limit }),
    },
  });

  // Its infrastructure cache (NS sets, addresses, DS and DNSKEY answers) lives in the one cache, Redis included.
  registry.registerChain('dnssec', [{ info: engineProviderInfo(config.dnsRootHints) }]);
  const dnsEngine = new IterativeResolver({
    cache,
    rootHints: config.dnsRootHints,
    allowCidrs: config.unsafeAllowTargetCidrs,
    clock,
  });

  return {
    config,
    clock,
    metrics,
    redis,
    cache,
    rateLimitStore,
    cacheEvents: events,
    loader,
    registry,
    chain,
    http,
    dns,
    outbound,
    dnsEngine,
    trustAnchors: loadTrustAnchors(config.dnssecTrustAnchors),
    ca: deps.ca,
    crtsh: deps.crtsh ?? {},
    relayLists: deps.relayLists ?? 'on-ready',
    async close() {
      await Promise.all([http.close(), dns.close()]);
      await cache.close();
      if (ownsRedis && redis) await redis.quit().catch(() => redis.disconnect());
    },
  };
}
