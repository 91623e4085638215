/**
 * One result per requested country, in the order requested: the probe the
 * provider placed there, or a `no_probe` entry when it had none (providers
 * skip such countries rather than fail the measurement). Pure.
 */
import type { GlobalDnsProbeResult } from '../../providers/global-dns/index.js';

export type CountryStatus = GlobalDnsProbeResult['status'] | 'no_probe';

export interface CountryResult extends Omit<GlobalDnsProbeResult, 'status'> {
  status: CountryStatus;
}

export function resultsByCountry(
  requested: readonly string[],
  probes: readonly GlobalDnsProbeResult[],
): CountryResult[] {
  const unused = [...probes];
  return requested.map((country) => {
    const i = unused.findIndex((p) => p.country === country);
    // A probe outside the requested countries (or a second one in a country) is not reported:
    // the answer is about the configured ten, one vantage point each.
    if (i >= 0) return unused.splice(i, 1)[0] as GlobalDnsProbeResult;
    return {
      country,
      city: null,
      continent: null,
      asn: null,
      network: null,
      resolver: null,
      status: 'no_probe',
      rcode: null,
      answers: [],
      time_ms: null,
    };
  });
}
