/**
 * The one way the rest of the service asks DNS questions: a resolver facade
 * over the provider chain (cache, primary, fallback on operational failure).
 * Services take a DnsResolver as an argument and never import node:dns.
 */
import { badInput } from '../../errors.js';
import type { ChainResult, ProviderChain } from '../chain.js';
import { normalizeDnsName } from './names.js';
import { type DnsAnswer, type DnsRecordType, type DnsTransportProvider, isDnsRecordType } from './types.js';

/** RFC 2308 §5 lets negative answers live up to the SOA's values; we hold them at most 5 minutes. */
export const MAX_NEGATIVE_TTL = 300;
/** Upper bound on reuse of a positive answer, as resolvers cap it (unbound's cache-max-ttl default). */
export const MAX_POSITIVE_TTL = 86_400;

export interface ResolveOptions {
  signal?: AbortSignal;
}

export class DnsResolver {
  readonly #chain: ProviderChain;
  readonly #providers: readonly DnsTransportProvider[];

  constructor(chain: ProviderChain, providers: DnsTransportProvider[]) {
    this.#chain = chain;
    this.#providers = [...providers];
  }

  /** The resolvers in chain order (first is primary). */
  get providers(): readonly DnsTransportProvider[] {
    return this.#providers;
  }

  /**
   * Resolves `name` (any case, trailing dot allowed, A-labels) for `type`.
   * Resolves with NOERROR/NXDOMAIN answers; rejects with a 502 AppError
   * carrying providers_tried when every resolver failed, or with
   * InvalidDnsNameError (400) for a name that cannot be asked.
   */
  resolve(name: string, type: DnsRecordType, opts: ResolveOptions = {}): Promise<ChainResult<DnsAnswer>> {
    if (!isDnsRecordType(type))
      return Promise.reject(badInput('type', `${String(type)} is not a supported record type`));
    let qname: string;
    try {
      qname = normalizeDnsName(name);
    } catch (err) {
      return Promise.reject(err);
    }
    return this.#chain.run({
      capability: 'dns',
      providers: this.#providers,
      call: (provider, signal) => provider.query(qname, type, signal),
      key: `${qname}:${type}`,
      ttl: (answer) => answerTtl(answer, type),
      signal: opts.signal,
    });
  }

  /** Closes every resolver's pooled connections. */
  async close(): Promise<void> {
    await Promise.all(this.#providers.map((p) => p.close()));
  }
}

/**
 * Seconds an answer may be reused: the smallest TTL in the answer section;
 * for a negative answer (NXDOMAIN, or no record of the asked type) the SOA's
 * negative TTL, min(SOA TTL, SOA minimum) per RFC 2308 §5, capped at
 * MAX_NEGATIVE_TTL and never longer than a CNAME that led there; 0 (not
 * stored) when nothing in the answer says how long.
 */
export function answerTtl(answer: DnsAnswer, type: DnsRecordType): number {
  const answerMin = answer.answers.length > 0 ? Math.min(...answer.answers.map((rr) => rr.ttl)) : undefined;
  const positive = answer.rcode === 'NOERROR' && answer.answers.some((rr) => rr.type === type);
  if (positive) return Math.min(answerMin ?? 0, MAX_POSITIVE_TTL);
  const soa = answer.authorities.find((rr) => rr.type === 'SOA');
  if (soa?.type !== 'SOA') return 0;
  const negative = Math.min(soa.ttl, soa.data.minimum, MAX_NEGATIVE_TTL);
  return answerMin === undefined ? negative : Math.min(negative, answerMin);
}
