/**
 * The blocklist listings of a domain's mail servers, as findings of the email
 * check's MX part (issue 35): each MX host's first addresses against the
 * enabled IP lists, through the same per-list check as GET /api/blocklists
 * (check.ts), within the email check's own deadline. Not scored
 * (docs/email-security.md says why); a refusal, an error or a broken list
 * says nothing and adds nothing.
 */

import type { Cache } from '../../cache/types.js';
import { mapConcurrent } from '../../concurrency.js';
import type { IterativeResolver } from '../../dns-engine/resolver.js';
import { type Finding, finding } from '../email/types.js';
import type { Catalogue } from './catalogue.js';
import { checkList } from './check.js';

export interface MxListingsDeps {
  engine: Pick<IterativeResolver, 'resolve' | 'usable'>;
  cache: Pick<Cache, 'get' | 'set'>;
  catalogue: Catalogue;
  /** The email check's budget for this part, in ms. */
  timeoutMs: number;
}

const MAX_HOSTS = 4;
const MAX_ADDRESSES = 2;

export async function mxListingFindings(
  deps: MxListingsDeps,
  hosts: readonly { exchange: string; addresses: readonly string[] }[],
): Promise<Finding[]> {
  // Without a usable engine (no root hint may be contacted) no list can be asked.
  if (!deps.engine.usable) return [];
  const signal = AbortSignal.timeout(deps.timeoutMs);
  const pairs = hosts
    .slice(0, MAX_HOSTS)
    .flatMap((h) => h.addresses.slice(0, MAX_ADDRESSES).map((address) => ({ host: h.exchange, address })));
  const lists = deps.catalogue.lists.filter((l) => l.enabled && (l.kind === 'ip4' || l.kind === 'ip6'));
  const found = await mapConcurrent(pairs, 2, async ({ host, address }) => {
    const mine = lists.filter((l) => l.kind === (address.includes(':') ? 'ip6' : 'ip4'));
    const results = await mapConcurrent(mine, 8, (l) =>
      checkList({ engine: deps.engine, cache: deps.cache }, l, { ip: address }, signal).catch(
        () => undefined,
      ),
    );
    return { host, address, listed: results.filter((r) => r?.status === 'listed') };
  });
  return found
    .filter((f) => f.listed.length > 0)
    .map((f) =>
      finding(
        'warning',
        `${f.host} (${f.address}) is listed on ${f.listed.map((r) => `${r!.name} (${r!.meaning})`).join(', ')}: ` +
          `receivers that use these lists refuse or mark its mail. Delisting: ${f.listed.map((r) => r!.delist_url).join(', ')}.`,
        'RFC 5782; docs/blocklists.md',
      ),
    );
}
