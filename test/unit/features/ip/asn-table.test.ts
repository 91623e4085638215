import { describe, expect, it } from 'vitest';
import { AsnTableBuilder } from '../../../../src/providers/ip/asn-table.js';
import { ListFormatError } from '../../../../src/providers/ip/csv.js';
import { parseIpNumber } from '../../../../src/providers/ip/ip-number.js';
import { fixtureText } from '../../../fakes/https-upstream.js';

function table(...files: [string, string][]) {
  const builder = new AsnTableBuilder();
  for (const [text, name] of files) builder.add(text, name);
  return builder.build();
}

describe('AsnTable (ip-location-db asn CSV)', () => {
  const t = table(
    [fixtureText('ip/asn-ipv4.csv'), 'asn-ipv4.csv'],
    [fixtureText('ip/asn-ipv6.csv'), 'asn-ipv6.csv'],
  );

  it('answers IPv4 and IPv6 from one table, range ends inclusive', () => {
    expect(t.lookup(parseIpNumber('1.0.0.0')!)).toEqual({ asn: 13335, org: 'Cloudflare, Inc.' });
    expect(t.lookup(parseIpNumber('1.0.0.255')!)).toEqual({ asn: 13335, org: 'Cloudflare, Inc.' });
    expect(t.lookup(parseIpNumber('1.0.1.0')!)).toBeUndefined();
    expect(t.lookup(parseIpNumber('2.26.200.7')!)).toEqual({ asn: 201907, org: 'LLC "SPUTNIK"' });
    expect(t.lookup(parseIpNumber('2001:200:1ba::1')!)).toEqual({
      asn: 24047,
      org: 'Internet Systems Consortium, Inc.',
    });
    expect(t.lookup(parseIpNumber('2001:200:1b9:ffff:ffff:ffff:ffff:ffff')!)).toEqual({
      asn: 2500,
      org: 'WIDE Project',
    });
    expect(t.lookup(parseIpNumber('2001:4:112::53')!)?.org).toBe('DNS-OARC');
  });

  it('reports and resolves the overlap the real IPv4 file has (the later-starting range wins)', () => {
    // 214.95.0.0-215.0.255.255 AS749 overlaps 215.0.0.0-215.1.3.255 AS721 in the 2026-06 data.
    expect(t.report).toMatchObject({ overlaps: 1, outOfOrder: 0, skipped: 0 });
    expect(t.lookup(parseIpNumber('214.255.255.255')!)?.asn).toBe(749);
    expect(t.lookup(parseIpNumber('215.0.0.0')!)?.asn).toBe(721);
    expect(t.lookup(parseIpNumber('215.0.255.255')!)?.asn).toBe(721);
    expect(t.lookup(parseIpNumber('215.1.3.255')!)?.asn).toBe(721);
    expect(t.lookup(parseIpNumber('215.1.4.0')!)).toBeUndefined();
  });

  it('sorts rows out of order and says so; an empty organization is null', () => {
    const unsorted = table(['5.0.0.0,5.0.0.255,3,Three\n4.0.0.0,4.0.0.255,2,\n', 'x.csv']);
    expect(unsorted.report.outOfOrder).toBe(1);
    expect(unsorted.lookup(parseIpNumber('4.0.0.9')!)).toEqual({ asn: 2, org: null });
    expect(unsorted.lookup(parseIpNumber('5.0.0.9')!)).toEqual({ asn: 3, org: 'Three' });
  });

  it('refuses a file that is not ASN ranges', () => {
    expect(() => table(['<html>nope</html>\n', 'x.csv'])).toThrow(ListFormatError);
    expect(() => table(['2.0.0.0,1.0.0.0,5,Backwards\n', 'x.csv'])).toThrow(/range ends before it starts/);
    expect(() => table(['1.0.0.0,::1,5,Mixed\n', 'x.csv'])).toThrow(/bad range/);
  });
});
