/**
 * GET /api/blocklists: an address against the IP lists, or a domain against
 * the domain lists and its MX hosts' addresses against the IP lists
 * (docs/blocklists.md). Every list query goes through netdiag's own
 * iterative resolver to the list's own servers (check.ts), never through the
 * configured public resolvers, which the lists refuse; only the MX lookup of
 * a domain is the DNS client's. Each list is a provider: in `providers_tried`
 * and, with its runtime status, on /api/providers.
 *
 * Cached per subject for the shortest TTL among its answers (an hour at
 * most); an answer with a list in error is not cached.
 */
import { type Freshness, freshness } from '../../cache/cached.js';
import { mapConcurrent } from '../../concurrency.js';
import type { AppContext } from '../../context.js';
import { ENGINE_PROVIDER } from '../../dns-engine/provider.js';
import type { ProviderAttempt } from '../../errors.js';
import { badInput, isUpstreamFailed, ProviderError } from '../../errors.js';
import { normalizeDomain } from '../../net/names.js';
import type { BlocklistsQuery, BlocklistsResponse, ListResult } from './blocklists.schema.js';
import { type Blocklist, type Catalogue, loadCatalogue } from './catalogue.js';
import { checkList, type Subject } from './check.js';

/** Lists asked at once; each costs a few queries to the list's own servers. */
const CONCURRENCY = 8;
const MAX_CACHE_SECONDS = 3600;
/** MX hosts checked for a domain, and addresses per host. */
const MAX_MX_HOSTS = 10;
const MAX_ADDRESSES = 4;

export type BlocklistsDeps = Pick<
  AppContext,
  'dnsEngine' | 'cache' | 'loader' | 'clock' | 'dns' | 'outbound' | 'registry' | 'config'
>;

/** The provider id of a list (its zone shown without a key). */
export const listProviderId = (list: Pick<Blocklist, 'kind' | 'zone'>) => `dnsbl-${list.kind}-${list.zone}`;

const catalogues = new WeakMap<AppContext['config'], Catalogue>();

/** The configuration's catalogue, read once per configuration: the blocklists and email routes share it. */
export function blocklistCatalogue(config: AppContext['config']): Catalogue {
  let catalogue = catalogues.get(config);
  if (!catalogue) {
    catalogue = loadCatalogue({ blocklistsFile: config.blocklistsFile, blocklistKeys: config.blocklistKeys });
    catalogues.set(config, catalogue);
  }
  return catalogue;
}

/** Registers every enabled list as a provider of its own, for /api/providers. */
export function registerLists(ctx: Pick<AppContext, 'registry'>, catalogue: Catalogue): void {
  for (const list of catalogue.lists.filter((l) => l.enabled)) {
    ctx.registry.registerChain(`blocklist:${list.kind}:${list.zone}`, [
      {
        info: {
          id: listProviderId(list),
          name: list.name,
          capabilities: ['blocklists'],
          docs_url: list.sources[0] ?? list.delistUrl,
          access: list.keySetting ? 'api_key' : 'none',
          configured: !list.keyMissing,
          endpoint: `${list.zone} (${list.kind}), asked through netdiag's iterative resolver`,
        },
      },
    ]);
  }
}

export async function lookupBlocklists(
  deps: BlocklistsDeps,
  catalogue: Catalogue,
  query: BlocklistsQuery,
): Promise<{ body: BlocklistsResponse; cache: Freshness | undefined }> {
  const subject = await parseSubject(deps, query);
  const key = `blocklists:${'ip' in subject ? `ip:${subject.ip}` : `domain:${subject.domain}`}`;
  const result = await deps.loader.load(key, async () => {
    const body = await check(deps, catalogue, subject);
    const entries = [...body.lists, ...(body.mx ?? []).flatMap((h) => h.addresses.flatMap((a) => a.lists))];
    const failed = entries.some((e) => e.status === 'error');
    const ttl = failed ? 0 : Math.min(MAX_CACHE_SECONDS, ...entries.map((e) => e.ttl ?? MAX_CACHE_SECONDS));
    return { value: body, ttl };
  });
  return { body: result.value, cache: result.maxAge > 0 ? freshness(result) : undefined };
}

/** Exactly one of ip and domain; an address must be one outbound safety would contact. */
async function parseSubject(deps: BlocklistsDeps, query: BlocklistsQuery): Promise<Subject> {
  const ip = query.ip?.trim();
  const domain = query.domain?.trim();
  if (ip && domain) throw badInput('ip', 'give ip or domain, not both');
  if (ip) {
    // Refuses a private or special-use address (400), as every target is refused.
    const resolved = await deps.outbound.resolve(ip, { param: 'ip' });
    return { ip: resolved.addresses[0]!.address };
  }
  if (domain) return { domain: normalizeDomain(domain, { param: 'domain' }) };
  throw badInput('ip', 'is required (or domain)');
}

async function check(
  deps: BlocklistsDeps,
  catalogue: Catalogue,
  subject: Subject,
): Promise<BlocklistsResponse> {
  const deadline = AbortSignal.timeout(deps.config.providerTimeoutMs * 3);
  const enabled = catalogue.lists.filter((l) => l.enabled);
  const attempts = new Map<string, ProviderAttempt>();
  const run = (list: Blocklist, s: Subject) =>
    checkList({ engine: deps.dnsEngine, cache: deps.cache }, list, s, deadline).then((entry) => {
      note(deps, attempts, list, entry);
      return entry;
    });
  const ipLists = (address: string) =>
    enabled.filter((l) => l.kind === (address.includes(':') ? 'ip6' : 'ip4'));

  let lists: ListResult[];
  let mx: BlocklistsResponse['mx'] = null;
  let mxFailure: string | undefined;
  if ('ip' in subject) {
    lists = await mapConcurrent(ipLists(subject.ip), CONCURRENCY, (l) => run(l, subject));
  } else {
    // The MX lookup failing leaves the domain lists' answers standing: the summary says so.
    const hosts = await mxAddresses(deps, subject.domain).catch((err: unknown) => {
      if (!isUpstreamFailed(err)) throw err;
      mxFailure = err.message;
      return [];
    });
    const domainLists = enabled.filter((l) => l.kind === 'domain');
    lists = await mapConcurrent(domainLists, CONCURRENCY, (l) => run(l, subject));
    mx = await mapConcurrent(hosts, 2, async ({ host, addresses }) => ({
      host,
      addresses: await mapConcurrent(addresses, 2, async (address) => {
        const found = await mapConcurrent(ipLists(address), CONCURRENCY, (l) => run(l, { ip: address }));
        return {
          address,
          listed_count: found.filter((e) => e.status === 'listed').length,
          lists: ordered(found),
        };
      }),
    }));
  }
  const listedCount = lists.filter((e) => e.status === 'listed').length;
  return {
    subject: 'ip' in subject ? { kind: 'ip', value: subject.ip } : { kind: 'domain', value: subject.domain },
    listed_count: listedCount,
    lists: ordered(lists),
    mx,
    summary:
      summary(subject, lists, mx) + (mxFailure ? ` Its MX hosts could not be looked up (${mxFailure}).` : ''),
    checked_at: new Date(deps.clock()).toISOString(),
    source: ENGINE_PROVIDER.name,
    source_id: ENGINE_PROVIDER.id,
    providers_tried: [
      { id: ENGINE_PROVIDER.id, name: ENGINE_PROVIDER.name, status: 'ok' },
      ...attempts.values(),
    ],
  };
}

/** The list's runtime status: an error is a failure of it; a refusal or a broken list is its answer. */
function note(
  deps: BlocklistsDeps,
  attempts: Map<string, ProviderAttempt>,
  list: Blocklist,
  entry: ListResult,
): void {
  const id = listProviderId(list);
  if (entry.status === 'error') {
    const error = deps.registry.recordFailure(
      id,
      new ProviderError('upstream_error', entry.meaning ?? 'no answer'),
    );
    attempts.set(id, { id, name: list.name, status: 'failed', error });
  } else {
    deps.registry.recordSuccess(id);
    if (!attempts.has(id)) attempts.set(id, { id, name: list.name, status: 'ok' });
  }
}

const RANK: Record<ListResult['status'], number> = {
  listed: 0,
  refused: 1,
  error: 2,
  broken: 3,
  not_listed: 4,
};
const ordered = (entries: ListResult[]) => [...entries].sort((a, b) => RANK[a.status] - RANK[b.status]);

/** The domain's MX hosts and their addresses (the DNS client's; only list queries avoid it). */
async function mxAddresses(
  deps: BlocklistsDeps,
  domain: string,
): Promise<{ host: string; addresses: string[] }[]> {
  const mx = await deps.dns.resolve(domain, 'MX');
  const hosts = mx.value.answers
    .flatMap((rr) =>
      rr.type === 'MX' ? [{ preference: rr.data.priority, host: rr.data.exchange.toLowerCase() }] : [],
    )
    .filter((h) => h.host !== '' && h.host !== '.')
    .sort((a, b) => a.preference - b.preference)
    .slice(0, MAX_MX_HOSTS);
  return mapConcurrent(hosts, 4, async ({ host }) => {
    const found = await Promise.all(
      (['A', 'AAAA'] as const).map((type) =>
        deps.dns
          .resolve(host, type)
          .then((r) =>
            r.value.answers.flatMap((rr) => (rr.type === 'A' || rr.type === 'AAAA' ? [rr.data.address] : [])),
          )
          .catch(() => [] as string[]),
      ),
    );
    return { host, addresses: found.flat().slice(0, MAX_ADDRESSES) };
  });
}

function summary(subject: Subject, lists: ListResult[], mx: BlocklistsResponse['mx']): string {
  const what = 'ip' in subject ? subject.ip : subject.domain;
  const listed = lists.filter((e) => e.status === 'listed');
  const unusable = lists.filter(
    (e) => e.status === 'refused' || e.status === 'error' || e.status === 'broken',
  );
  const usable = lists.length - unusable.length;
  const mxListed = (mx ?? []).flatMap((h) =>
    h.addresses.filter((a) => a.listed_count > 0).map((a) => `${h.host} (${a.address})`),
  );
  const parts = [
    usable === 0 && lists.length > 0
      ? `No list gave a usable answer about ${what}: none can be said to list it or not.`
      : listed.length > 0
        ? `${what} is listed on ${listed.length} of ${usable} list${usable === 1 ? '' : 's'} that answered: ${listed.map((e) => e.name).join(', ')}. Delisting: ${listed.map((e) => e.delist_url).join(', ')}.`
        : `${what} is listed on none of the ${usable} list${usable === 1 ? '' : 's'} that answered.`,
  ];
  if (unusable.length > 0)
    parts.push(
      `${unusable.length} did not give a usable answer (refused, failed or broken), and are not counted.`,
    );
  if (mx)
    parts.push(
      mxListed.length > 0
        ? `Listed MX addresses: ${mxListed.join(', ')}.`
        : `None of its ${mx.length} MX hosts' addresses is listed.`,
    );
  return parts.join(' ');
}
