import { describe, expect, it } from 'vitest';
import { resultsByCountry } from '../../../../src/features/global-dns/country-results.js';
import type { GlobalDnsProbeResult } from '../../../../src/providers/global-dns/index.js';

const probe = (country: string, city = 'Somewhere'): GlobalDnsProbeResult => ({
  country,
  city,
  continent: 'EU',
  asn: 64500,
  network: 'Example Net',
  resolver: '192.0.2.53',
  status: 'finished',
  rcode: 'NOERROR',
  answers: [],
  time_ms: 12,
});

describe('resultsByCountry', () => {
  it('gives one result per requested country, in the requested order, whatever order the probes came in', () => {
    const out = resultsByCountry(['US', 'DE', 'JP'], [probe('JP'), probe('US'), probe('DE')]);
    expect(out.map((r) => r.country)).toEqual(['US', 'DE', 'JP']);
    expect(out.every((r) => r.status === 'finished')).toBe(true);
  });

  it('reports a country without a probe as no_probe with nothing measured', () => {
    const out = resultsByCountry(['US', 'ZA'], [probe('US')]);
    expect(out[1]).toEqual({
      country: 'ZA',
      city: null,
      continent: null,
      asn: null,
      network: null,
      resolver: null,
      status: 'no_probe',
      rcode: null,
      answers: [],
      time_ms: null,
    });
  });

  it('ignores probes outside the requested countries and second probes in one country', () => {
    const out = resultsByCountry(['US'], [probe('FR'), probe('US', 'Ashburn'), probe('US', 'Dallas')]);
    expect(out).toHaveLength(1);
    expect(out[0]?.city).toBe('Ashburn');
  });
});
