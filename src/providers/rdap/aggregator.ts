/**
 * The RDAP aggregator (rdap.org by default, RDAP_AGGREGATOR_URL): the primary
 * RDAP source. It answers `GET {base}/domain/{name}` and `/ip/{addr}` with a
 * redirect to the authoritative server, which is followed through outbound
 * safety (rdap-fetch.ts).
 *
 * Its own 404 is ambiguous: the aggregator may simply not know the TLD. So a
 * 404 that the aggregator itself sends is thrown as a failure of this source,
 * and the chain consults the IANA bootstrap before anything is concluded. A
 * 404 from the registry it redirected to is definitive: not registered.
 *
 * rdap.org limits each client (aggregator-budget.ts). Two things keep a
 * lookup from paying a 429 only to fall back: after a 429 its Retry-After is
 * honoured, and past the client-side budget the aggregator is not asked. In
 * both cases the attempt fails at once as `rate_limited` without a request,
 * saying until when, and the chain goes on to the bootstrap path.
 */

import { ProviderError } from '../../errors.js';
import { joinUrl } from '../http-client.js';
import type { Provider, ProviderInfo } from '../types.js';
import type { AggregatorBudget } from './aggregator-budget.js';
import type { HopSender, RdapFetcher } from './rdap-fetch.js';
import type { RetryAfterGate } from './retry-after.js';
import { assertObjectClass, queryPath, type RdapAnswer, type RdapQuery } from './types.js';

export interface RdapAggregatorDeps {
  baseUrl: string;
  fetcher: RdapFetcher;
  /**
   * Reaches the operator-configured base URL (the plain HTTP client); the
   * redirects it answers with go through the fetcher's outbound sender. It
   * must resolve with a 429, not reject it, so its Retry-After is recorded.
   */
  firstHop: HopSender;
  /** The fetcher's gate: where a 429's Retry-After from the aggregator is recorded. */
  gate: RetryAfterGate;
  budget: AggregatorBudget;
}

export class RdapAggregator implements Provider {
  readonly info: ProviderInfo;
  readonly #deps: RdapAggregatorDeps;

  constructor(info: ProviderInfo, deps: RdapAggregatorDeps) {
    this.info = info;
    this.#deps = deps;
  }

  async lookup(query: RdapQuery, signal: AbortSignal): Promise<RdapAnswer> {
    const url = joinUrl(this.#deps.baseUrl, queryPath(query));
    const aggregatorHost = new URL(url).host;
    // Before the budget: a request the aggregator asked us not to send spends none of it.
    this.#deps.gate.check(url);
    const refusedUntil = await this.#deps.budget.take();
    if (refusedUntil !== undefined) {
      const { points, seconds } = this.#deps.budget.spec;
      throw new ProviderError(
        'rate_limited',
        `this service's budget for ${aggregatorHost} (${points} requests per ${seconds} s, the limit it publishes) is spent: not sent, skipped until ${new Date(refusedUntil).toISOString()}`,
      );
    }
    const doc = await this.#deps.fetcher.fetch(url, { signal, first: this.#deps.firstHop, allowHttp: true });
    if (doc.status === 'not_found') {
      if (new URL(doc.url).origin !== new URL(url).origin) return { outcome: 'not_registered', url: doc.url };
      throw new ProviderError(
        'upstream_error',
        `${aggregatorHost} answered 404 itself (it may not know this TLD); asking the registry via the IANA bootstrap`,
      );
    }
    assertObjectClass(query, doc.object, doc.url);
    return { outcome: 'found', url: doc.url, object: doc.object };
  }
}
