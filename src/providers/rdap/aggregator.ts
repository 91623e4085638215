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
 */
import { joinUrl } from '../http-client.js';
import { type Provider, ProviderError, type ProviderInfo } from '../types.js';
import type { HopSender, RdapFetcher } from './rdap-fetch.js';
import { assertObjectClass, queryPath, type RdapAnswer, type RdapQuery } from './types.js';

export class RdapAggregator implements Provider {
  readonly info: ProviderInfo;
  readonly #base: string;
  readonly #fetcher: RdapFetcher;
  readonly #firstHop: HopSender;

  /**
   * `firstHop` reaches the operator-configured base URL (the plain HTTP
   * client); the redirects it answers with go through the fetcher's outbound
   * sender.
   */
  constructor(info: ProviderInfo, deps: { baseUrl: string; fetcher: RdapFetcher; firstHop: HopSender }) {
    this.info = info;
    this.#base = deps.baseUrl;
    this.#fetcher = deps.fetcher;
    this.#firstHop = deps.firstHop;
  }

  async lookup(query: RdapQuery, signal: AbortSignal): Promise<RdapAnswer> {
    const url = joinUrl(this.#base, queryPath(query));
    const doc = await this.#fetcher.fetch(url, { signal, first: this.#firstHop, allowHttp: true });
    const aggregatorHost = new URL(url).host;
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
