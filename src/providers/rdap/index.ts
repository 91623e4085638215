/**
 * The RDAP sources in chain order, built from config: the aggregator
 * (primary), then the IANA bootstrap with the authoritative servers
 * (fallback), plus the fetcher the registrar follow-up uses. One
 * RetryAfterGate is shared by all of them, so a registry that asked us to
 * wait is left alone whichever path would reach it.
 */
import type { Clock } from '../../cache/types.js';
import type { Config } from '../../config/index.js';
import type { ProviderError } from '../../errors.js';
import type { RateLimitStore } from '../../rate-limit/store.js';
import { providerCatalog } from '../catalog.js';
import type { HttpClient } from '../http-client.js';
import type { Provider } from '../types.js';
import { RdapAggregator } from './aggregator.js';
import { AggregatorBudget } from './aggregator-budget.js';
import { BootstrapStore, RdapBootstrap } from './bootstrap.js';
import { type HopSender, RdapFetcher } from './rdap-fetch.js';
import { RetryAfterGate } from './retry-after.js';
import type { BootstrapKind, RdapAnswer, RdapQuery } from './types.js';

export type { RdapDocument } from './rdap-fetch.js';
export type { RdapAnswer, RdapObject, RdapQuery } from './types.js';

/** What the RDAP service asks of a source in the chain. */
export interface RdapSource extends Provider {
  lookup(query: RdapQuery, signal: AbortSignal): Promise<RdapAnswer>;
}

export interface RdapSourcesDeps {
  config: Config;
  /** The plain client for operator-configured upstreams (the aggregator, the bootstrap files). */
  http: Pick<HttpClient, 'send' | 'getJson'>;
  /** The sender for every other destination (see outbound.ts). */
  outbound: HopSender;
  clock: Clock;
  /** Where the aggregator's budget is counted (ctx.rateLimitStore: shared in Redis, or per process). */
  budgets?: RateLimitStore | undefined;
  onBootstrapStale?: (kind: BootstrapKind, error: ProviderError) => void;
}

export interface RdapSources {
  /** Chain order: aggregator, then bootstrap + authoritative server. */
  providers: readonly RdapSource[];
  /** Fetches RDAP objects from URLs found in answers (registrar links), through `outbound`. */
  fetcher: RdapFetcher;
}

export function createRdapSources(deps: RdapSourcesDeps): RdapSources {
  const catalog = providerCatalog(deps.config);
  const gate = new RetryAfterGate(deps.clock);
  const fetcher = new RdapFetcher(deps.outbound, gate);
  const aggregator = new RdapAggregator(catalog.rdapAggregator, {
    baseUrl: deps.config.rdapAggregatorUrl,
    fetcher,
    // The plain client throws on a 429 unless told to pass it: the gate needs its Retry-After.
    firstHop: (url, req) => deps.http.send(url, { ...req, maxRedirects: 0, passStatuses: [429] }),
    gate,
    budget: new AggregatorBudget({
      spec: deps.config.rdapAggregatorRateLimit,
      clock: deps.clock,
      store: deps.budgets,
      id: catalog.rdapAggregator.id,
    }),
  });
  const store = new BootstrapStore({
    baseUrl: deps.config.rdapBootstrapUrl,
    http: deps.http,
    clock: deps.clock,
    timeoutMs: deps.config.providerTimeoutMs,
    onStale: deps.onBootstrapStale,
  });
  const bootstrap = new RdapBootstrap(catalog.rdapBootstrap, { store, fetcher });
  return { providers: [aggregator, bootstrap], fetcher };
}
