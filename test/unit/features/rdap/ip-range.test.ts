import { describe, expect, it } from 'vitest';
import { cidrsFromCidr0, rangeToCidrs } from '../../../../src/features/rdap/ip-range.js';

describe('rangeToCidrs', () => {
  it.each([
    ['130.59.0.0', '130.59.255.255', ['130.59.0.0/16']],
    ['1.1.1.0', '1.1.1.255', ['1.1.1.0/24']],
    ['10.0.0.1', '10.0.0.6', ['10.0.0.1/32', '10.0.0.2/31', '10.0.0.4/31', '10.0.0.6/32']],
    ['0.0.0.0', '255.255.255.255', ['0.0.0.0/0']],
    ['2606:4700::', '2606:4700:ffff:ffff:ffff:ffff:ffff:ffff', ['2606:4700::/32']],
    ['2001:db8::', '2001:db8::1', ['2001:db8::/127']],
  ])('%s – %s', (start, end, expected) => {
    expect(rangeToCidrs(start, end)).toEqual(expected);
  });

  it('returns nothing for an invalid or mixed-family range', () => {
    expect(rangeToCidrs('1.2.3.4', '2001:db8::')).toEqual([]);
    expect(rangeToCidrs('x', '1.2.3.4')).toEqual([]);
    expect(rangeToCidrs('1.2.3.5', '1.2.3.4')).toEqual([]);
  });
});

describe('cidrsFromCidr0', () => {
  it('reads v4prefix and v6prefix entries and skips malformed ones', () => {
    expect(
      cidrsFromCidr0([
        { v4prefix: '1.1.1.0', length: 24 },
        { v6prefix: '2606:4700:0:0::', length: 32 },
        { v4prefix: '1.1.1.0' },
        { v4prefix: '1.1.1.0', length: 33 },
        null,
      ]),
    ).toEqual(['1.1.1.0/24', '2606:4700::/32']);
    expect(cidrsFromCidr0(undefined)).toEqual([]);
  });
});
