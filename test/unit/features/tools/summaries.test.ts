/**
 * The summaries' branches the fixture-backed MCP test does not reach: negative DNS
 * answers, no registration data, a failed fetch, an address in no relay list.
 */
import { describe, expect, it } from 'vitest';
import { recordText, summaries } from '../../../../src/features/tools/summaries.js';
import { EXPIRED, SECURE } from '../../../fixtures/dnssec/answers.js';

const attribution = { source: 'DNS over HTTPS (test)', source_id: 'doh-test', providers_tried: [] };

describe('tool summaries', () => {
  it('says NXDOMAIN and an empty answer apart, and names the AD bit', () => {
    const base = { target: 'x.test', query_name: 'x.test', type: 'A', answers: [], ...attribution };
    expect(summaries.dns_lookup({ ...base, rcode: 'NXDOMAIN', authenticated_data: true, records: [] })).toBe(
      'x.test A: NXDOMAIN, DNSSEC-validated by the resolver (AD); no records (via DNS over HTTPS (test)).',
    );
    expect(summaries.dns_lookup({ ...base, rcode: 'NOERROR', authenticated_data: false, records: [] })).toBe(
      'x.test A: no records (NOERROR, empty) (via DNS over HTTPS (test)).',
    );
  });

  it('writes each record type as a zone file would, most significant field first', () => {
    expect(recordText({ ttl: 1, priority: 10, exchange: 'mx.x.test' })).toBe('10 mx.x.test');
    expect(recordText({ ttl: 1, text: 'v=spf1 -all', strings: ['v=spf1 -all'] })).toBe('"v=spf1 -all"');
    expect(recordText({ ttl: 1, flags: 0, tag: 'issue', value: 'letsencrypt.org', critical: false })).toBe(
      '0 issue "letsencrypt.org"',
    );
    expect(recordText({ ttl: 1, priority: 0, weight: 5, port: 443, target: 'h.x.test' })).toBe(
      '0 5 443 h.x.test',
    );
    expect(recordText({ ttl: 1, host: 'ns1.x.test' })).toBe('ns1.x.test');
    expect(recordText({ ttl: 1, target: 'alias.x.test' })).toBe('alias.x.test');
  });

  it('names more than five records as "and N more"', () => {
    const records = Array.from({ length: 7 }, (_, i) => ({ ttl: 1, address: `192.0.2.${i}` }));
    const text = summaries.dns_lookup({
      target: 'x.test',
      query_name: 'x.test',
      type: 'A',
      rcode: 'NOERROR',
      authenticated_data: false,
      answers: [],
      records,
      ...attribution,
    });
    expect(text).toContain('192.0.2.4 and 2 more');
  });

  it('reports no registration data with the notes that say why', () => {
    expect(
      summaries.rdap_lookup({
        target: 'x.test',
        type: 'domain',
        registry: null,
        registrar: null,
        notes: ['no RDAP service for .test'],
        ...attribution,
      }),
    ).toBe('x.test: no registration data. no RDAP service for .test');
  });

  it('says an address is in no relay list, naming the lists', () => {
    expect(
      summaries.ip_privacy({
        ip: '192.0.2.1',
        is_relay: false,
        relay: null,
        lists: [{ provider: 'iCloud Private Relay' }, { provider: 'Tor' }],
      }),
    ).toBe('192.0.2.1 is not in the published relay egress lists (iCloud Private Relay, Tor).');
  });

  it('says a DNSSEC verdict as the site opens with it, then the chain zone by zone and the cost', () => {
    expect(summaries.dnssec_validate(SECURE)).toBe(
      'www.secure.test A is secure: every link from the trust anchor down to secure.test verified. ' +
        'Chain: . secure, test secure, secure.test secure. Answer: 192.0.2.10; 9 upstream queries ' +
        '(via netdiag iterative resolver (from the root)).',
    );
    expect(summaries.dnssec_validate(EXPIRED)).toMatch(
      /^www\.expired\.test A is bogus: the chain breaks at expired\.test \(signature_expired\): .+ Validating resolvers answer SERVFAIL\. Chain: \. secure, test secure, expired\.test bogus\./,
    );
  });
});
