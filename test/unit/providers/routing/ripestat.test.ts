/** RIPEstat routing answers, read from the real samples in test/fixtures/ripestat/. */
import { describe, expect, it } from 'vitest';
import { ProviderError } from '../../../../src/errors.js';
import {
  asNumber,
  parsePrefixOverview,
  parseRoutingStatus,
} from '../../../../src/providers/routing/ripestat.js';
import { fixture } from '../../../fakes/https-upstream.js';

const data = (name: string) => (fixture(`ripestat/${name}.json`) as { data: Record<string, unknown> }).data;

describe('parsePrefixOverview', () => {
  it('reads the covering prefix, origin and holder of the real sample', () => {
    expect(parsePrefixOverview(data('prefix-overview'))).toEqual({
      announced: true,
      prefix: '193.0.0.0/21',
      origins: [
        { asn: 3333, holder: 'RIPE-NCC-AS - Reseaux IP Europeens Network Coordination Centre (RIPE NCC)' },
      ],
    });
  });

  it('treats "not announced" as an answer, without echoing the address as a prefix', () => {
    expect(parsePrefixOverview({ announced: false, resource: '192.0.2.1', asns: [] })).toEqual({
      announced: false,
      prefix: null,
      origins: [],
    });
  });

  it('keeps every origin of a multi-origin prefix and drops malformed ones', () => {
    const parsed = parsePrefixOverview({
      announced: true,
      resource: '2001:db8::/32',
      asns: [{ asn: 64500, holder: 'A' }, { asn: '64501', holder: '' }, { asn: 'bogus' }],
    });
    expect(parsed.origins).toEqual([
      { asn: 64500, holder: 'A' },
      { asn: 64501, holder: null },
    ]);
  });

  it('fails on an answer without `announced`', () => {
    expect(() => parsePrefixOverview({ resource: '193.0.0.0/21' })).toThrow(ProviderError);
  });
});

describe('parseRoutingStatus', () => {
  it('reads visibility and first/last seen of the real (AS) sample, times in UTC', () => {
    const status = parseRoutingStatus(data('routing-status'));
    expect(status.first_seen).toEqual({
      time: '2000-08-18T08:00:00.000Z',
      prefix: '193.0.0.0/22',
      origin: 3333,
    });
    expect(status.last_seen).toEqual({
      time: '2025-06-11T08:00:00.000Z',
      prefix: '193.0.20.0/23',
      origin: 3333,
    });
    expect(status.visibility).toEqual({
      v4: { ris_peers_seeing: 343, total_ris_peers: 344 },
      v6: { ris_peers_seeing: 340, total_ris_peers: 341 },
    });
    expect(status.query_time).toBe('2025-06-11T08:00:00.000Z');
  });

  it('reads origins and specifics of a prefix answer (shape per the routing-status docs)', () => {
    const sample = data('routing-status');
    const status = parseRoutingStatus({
      ...sample,
      resource: '193.0.0.0/21',
      origins: [{ origin: 3333, route_objects: ['RIPE'] }, { origin: '3333' }],
      less_specifics: [{ prefix: '193.0.0.0/8', origin: '1234' }, { prefix: 'junk' }],
      more_specifics: [{ prefix: '193.0.6.0/24', origin: 3333 }],
    });
    expect(status).toMatchObject({
      prefix: '193.0.0.0/21',
      origins: [3333],
      less_specifics: [{ prefix: '193.0.0.0/8', origin: 1234 }],
      more_specifics: [{ prefix: '193.0.6.0/24', origin: 3333 }],
    });
  });

  it('has no prefix and no sightings for an address never seen in BGP', () => {
    expect(parseRoutingStatus({ resource: '192.0.2.1', visibility: {} })).toMatchObject({
      prefix: null,
      origins: [],
      first_seen: null,
      last_seen: null,
      visibility: { v4: null, v6: null },
    });
  });
});

describe('asNumber', () => {
  it.each([
    [3333, 3333],
    ['3333', 3333],
    ['AS3333', 3333],
    ['as4200000000', 4200000000],
    ['4294967296', null],
    ['3333x', null],
    [null, null],
  ])('%j → %j', (input, expected) => {
    expect(asNumber(input)).toBe(expected);
  });
});
