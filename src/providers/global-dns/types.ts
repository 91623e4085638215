/**
 * The contract every distributed-DNS measurement provider implements
 * (Globalping today; RIPE Atlas, behind a key, could be a second one). The
 * shapes are ours, not any vendor's: an adapter asks "this question from
 * these countries" and returns what each probe saw, normalized.
 *
 * Operational failures (creation refused with 429/5xx, timeout, unparseable
 * body) are thrown as ProviderError so the chain can move on. Countries
 * without a probe are not a failure: they are simply absent from `probes`.
 */
import { recordTypesThrough } from '../dns/types.js';
import type { ProviderQuota } from '../registry.js';
import type { Provider } from '../types.js';
import type { QuotaRefusal } from './quota.js';

export type { QuotaRefusal } from './quota.js';

/** Record types a global measurement may ask for (the public API's list): the DNS client's list through CAA. */
export const GLOBAL_DNS_TYPES = recordTypesThrough('CAA');
export type GlobalDnsType = (typeof GLOBAL_DNS_TYPES)[number];

export interface GlobalDnsQuestion {
  /** A normalized domain name (A-labels, no trailing dot). */
  target: string;
  type: GlobalDnsType;
  /** ISO 3166-1 alpha-2 codes, one probe wanted in each. */
  countries: readonly string[];
}

/** One record as a probe's resolver returned it, names without the trailing dot. */
export interface GlobalDnsAnswer {
  name: string;
  type: string;
  ttl: number;
  /** Presentation format (as dig prints it), domain names without the trailing dot. */
  value: string;
}

/**
 * What became of one probe's query: `finished` (the resolver answered, with
 * any rcode), `failed` (no DNS answer: resolver unreachable, probe went
 * offline), `timeout` (still running when the measurement deadline passed).
 */
export type ProbeOutcome = 'finished' | 'failed' | 'timeout';

export interface GlobalDnsProbeResult {
  /** Where the probe is, as the provider locates it. */
  country: string;
  city: string | null;
  /** Two-letter continent code (AF, AN, AS, EU, NA, OC, SA). */
  continent: string | null;
  asn: number | null;
  network: string | null;
  /** The resolver the probe asked (an address, or "private" for a LAN resolver). */
  resolver: string | null;
  status: ProbeOutcome;
  /** DNS response code name (NOERROR, NXDOMAIN, SERVFAIL, ...) when the resolver answered. */
  rcode: string | null;
  answers: GlobalDnsAnswer[];
  time_ms: number | null;
}

export interface GlobalDnsMeasurement {
  /** The provider's id for the measurement; null when none was created (no probe anywhere). */
  id: string | null;
  /** False when the deadline passed before every probe reported. */
  complete: boolean;
  /** One entry per probe that took part, in the provider's order. */
  probes: GlobalDnsProbeResult[];
}

export interface GlobalDnsProvider extends Provider {
  /**
   * The longest measure() can take, creation and polling included; the chain's
   * per-attempt timeout for this capability is set from it.
   */
  readonly maxDurationMs: number;
  measure(question: GlobalDnsQuestion, signal: AbortSignal): Promise<GlobalDnsMeasurement>;
  /**
   * Set while the provider's own quota is known to refuse a measurement from this many
   * countries (measure() then fails at once, rate_limited, without asking): why, and until when.
   */
  quotaRefusal?(countries: number): QuotaRefusal | undefined;
  /** The provider's last report of the quota, listed by /api/providers. */
  quota?(): ProviderQuota | undefined;
}
