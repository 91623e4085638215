/**
 * POST /api/global-dns: normalize the question, run one measurement through
 * the provider chain, shape it per country and summarize it.
 *
 * A measurement spends upstream credits and takes seconds, so identical ones
 * are shared: concurrent callers join the one in flight, and a complete
 * result is reused for 60 s (through the chain's cache, so with Redis every
 * instance shares it). Either way the answer says `reused: true`. A partial
 * result (deadline passed) is not kept: the next caller deserves a new try.
 * Failures are never kept (the chain's rule).
 *
 * While the provider's own quota is spent (Globalping's tests per hour), the
 * answer is a 503 with Retry-After at the reset, not a 502: nothing is broken and
 * the time is known. Not a 429 either: the quota is this service's, spent by all
 * its users together, not the caller's, and a 429 would tell the caller to slow
 * down when slowing down changes nothing; 503 is the status for a server that
 * cannot serve for a while and says when to come back (RFC 9110 §15.6.4).
 * A reusable measurement still answers from the cache meanwhile.
 */
import { formatDateTime } from '../../client/words.js';
import { AppError } from '../../errors.js';
import type { ProviderChain } from '../../providers/chain.js';
import type {
  GlobalDnsMeasurement,
  GlobalDnsProvider,
  GlobalDnsType,
} from '../../providers/global-dns/index.js';
import { resultsByCountry } from './country-results.js';
import type { GlobalDnsResponse } from './global-dns.schema.js';
import { parseGlobalDnsTarget } from './global-dns-target.js';
import { summarizeAnswers } from './summary.js';

/** Seconds an identical, complete measurement is reused. */
export const REUSE_SECONDS = 60;
/** Headroom over the adapter's own worst case, so its deadline (partial answer) wins over the chain's timeout. */
const CHAIN_SLACK_MS = 1_000;

export interface GlobalDnsServiceDeps {
  chain: Pick<ProviderChain, 'run'>;
  providers: readonly GlobalDnsProvider[];
  /** GLOBAL_DNS_COUNTRIES, in order. */
  countries: readonly string[];
  clock: () => number;
}

type Measured = GlobalDnsMeasurement & { measuredAt: number };

export interface GlobalDnsService {
  measure(target: string, type: GlobalDnsType): Promise<GlobalDnsResponse>;
}

export function createGlobalDnsService(deps: GlobalDnsServiceDeps): GlobalDnsService {
  const { chain, providers, countries, clock } = deps;
  const timeoutMs = Math.max(...providers.map((p) => p.maxDurationMs)) + CHAIN_SLACK_MS;
  // Keys whose measurement is running for some caller: a second caller joins it (the chain's
  // loader shares the promise) and is told its answer is reused.
  const running = new Set<string>();

  return {
    async measure(rawTarget, type) {
      const target = parseGlobalDnsTarget(rawTarget, type);
      const question = { target, type, countries };
      const key = `${type}:${target}:${countries.join(',')}`;
      const joined = running.has(key);
      if (!joined) running.add(key);
      let result: Awaited<ReturnType<typeof chain.run<GlobalDnsProvider, Measured>>>;
      try {
        result = await chain.run<GlobalDnsProvider, Measured>({
          capability: 'global-dns',
          providers,
          key,
          timeoutMs,
          // No client signal: the measurement may be shared with other callers, and once
          // created upstream it is paid for, so it runs to its end and stays reusable.
          call: async (provider, signal) => ({
            ...(await provider.measure(question, signal)),
            measuredAt: clock(),
          }),
          ttl: (m) => (m.complete ? REUSE_SECONDS : 0),
        });
      } catch (err) {
        throw quotaSpent(err, providers, countries.length) ?? err;
      } finally {
        if (!joined) running.delete(key);
      }
      const m = result.value;
      const results = resultsByCountry(countries, m.probes);
      return {
        target,
        type,
        measurement_id: m.id,
        measured_at: new Date(m.measuredAt).toISOString(),
        reused: result.cache.hit || joined,
        complete: m.complete,
        countries_requested: [...countries],
        results,
        summary: summarizeAnswers(results, type),
        source: result.source,
        source_id: result.source_id,
        providers_tried: result.providers_tried,
      };
    },
  };
}

/**
 * The 503 for a chain that failed only because every provider's quota is spent (each
 * failed attempt rate_limited, and its provider still reporting the quota spent);
 * undefined for any other failure, which stays the chain's 502.
 */
function quotaSpent(
  err: unknown,
  providers: readonly GlobalDnsProvider[],
  countries: number,
): AppError | undefined {
  if (!(err instanceof AppError) || err.code !== 'upstream_failed' || !err.providersTried?.length) {
    return undefined;
  }
  const refusals = err.providersTried.map((attempt) => {
    if (attempt.status !== 'failed' || !attempt.error?.startsWith('rate_limited:')) return undefined;
    const provider = providers.find((p) => p.info.id === attempt.id);
    const refusal = provider?.quotaRefusal?.(countries);
    return refusal && provider ? { name: provider.info.name, ...refusal } : undefined;
  });
  if (refusals.some((r) => r === undefined)) return undefined;
  const known = refusals as NonNullable<(typeof refusals)[number]>[];
  // The first provider back is the earliest a measurement can be made again.
  const first = known.reduce((a, b) => (b.resetAt < a.resetAt ? b : a));
  const why = known.map((r) => `${r.name}: ${r.reason}`).join('; ');
  return new AppError(
    503,
    'unavailable',
    `global DNS measurements are paused until ${formatDateTime(new Date(first.resetAt))}: ` +
      `the measurement quota of this service is spent (${why})`,
    { headers: { 'retry-after': String(first.retryAfterSeconds) }, providersTried: err.providersTried },
  );
}
