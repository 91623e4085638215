/**
 * SPF record syntax (RFC 7208): record selection and term syntax, checked
 * without DNS.
 */
import { describe, expect, it } from 'vitest';
import {
  domainSpecError,
  isSpfRecord,
  macroStringError,
  parseSpfRecord,
} from '../../../../src/features/spf/record.js';

const messages = (text: string) => {
  const parsed = parseSpfRecord(text);
  return {
    errors: parsed.errors.map((f) => f.message),
    warnings: parsed.warnings.map((f) => f.message),
    terms: parsed.terms,
  };
};

describe('SPF record selection (RFC 7208 §4.5)', () => {
  it.each([
    ['v=spf1 -all', true],
    ['v=spf1', true],
    ['V=SPF1 mx -all', true],
    ['v=spf10 -all', false],
    ['v=spf1-all', false],
    [' v=spf1 -all', false],
    ['spf1 -all', false],
  ])('%s → %s', (text, expected) => {
    expect(isSpfRecord(text)).toBe(expected);
  });
});

describe('SPF term syntax (RFC 7208 §4.6, §5, §6, §7)', () => {
  it('accepts every mechanism and modifier in its valid forms', () => {
    const { errors, terms } = messages(
      'v=spf1 +all -include:_spf.example.com ~a ?a:mail.example.com a/24 a:x.example.com/24//64 a//64 mx mx:example.com/28 ' +
        'ptr ptr:example.com ip4:192.0.2.0/24 ip4:192.0.2.1 ip6:2001:db8::/32 ip6:::1 exists:%{i}._spf.%{d} ' +
        'redirect=_spf.example.com exp=explain.%{d2} custom-mod=anything.%{l}',
    );
    expect(errors).toEqual([]);
    expect(terms.map((t) => (t.kind === 'mechanism' ? `${t.qualifier}${t.name}` : `${t.name}=`))).toEqual([
      '+all',
      '-include',
      '~a',
      '?a',
      '+a',
      '+a',
      '+a',
      '+mx',
      '+mx',
      '+ptr',
      '+ptr',
      '+ip4',
      '+ip4',
      '+ip6',
      '+ip6',
      '+exists',
      'redirect=',
      'exp=',
      'custom-mod=',
    ]);
    expect(terms[4]).toMatchObject({ name: 'a', cidr4: 24 });
    expect(terms[5]).toMatchObject({ name: 'a', domainSpec: 'x.example.com', cidr4: 24, cidr6: 64 });
    expect(terms[6]).toMatchObject({ name: 'a', cidr6: 64 });
    expect(terms[6]).not.toHaveProperty('cidr4');
  });

  it.each([
    ['v=spf1 foo:bar -all', '"foo:bar": unknown mechanism "foo".'],
    ['v=spf1 all:x', '"all:x": "all" takes no argument.'],
    ['v=spf1 include -all', '"include": "include" needs ":domain".'],
    ['v=spf1 include: -all', '"include:": "include" needs ":domain".'],
    ['v=spf1 ip4:192.0.2.0/33 -all', '"ip4:192.0.2.0/33": invalid prefix length "/33".'],
    ['v=spf1 ip4:192.0.2.0/024 -all', '"ip4:192.0.2.0/024": invalid prefix length "/024".'],
    ['v=spf1 ip4:192.0.02.1 -all', '"ip4:192.0.02.1": "192.0.02.1" is not an IPv4 address.'],
    ['v=spf1 ip6:2001:db8::/129 -all', '"ip6:2001:db8::/129": invalid prefix length "/129".'],
    ['v=spf1 ip6:192.0.2.1 -all', '"ip6:192.0.2.1": "192.0.2.1" is not an IPv6 address.'],
    ['v=spf1 a/33 -all', '"a/33": invalid IPv4 prefix length "33".'],
    ['v=spf1 mx//129 -all', '"mx//129": invalid IPv6 prefix length "129".'],
    ['v=spf1 a:localhost -all', '"a:localhost": a target "localhost" is not a fully qualified domain name.'],
    [
      'v=spf1 include:example.123 -all',
      '"include:example.123": include target "example.123" does not end in a valid top-level label.',
    ],
    [
      'v=spf1 exists:%{z}.example.com -all',
      '"exists:%{z}.example.com": exists target has an invalid macro "%{z}".',
    ],
    [
      'v=spf1 exists:%{c}.example.com -all',
      '"exists:%{c}.example.com": exists target uses macro letter "c", allowed only in explanation text.',
    ],
    [
      'v=spf1 exists:%{i0}.example.com -all',
      '"exists:%{i0}.example.com": exists target has a zero digit transformer in "%{i0}".',
    ],
    [
      'v=spf1 exists:%{i.example.com -all',
      '"exists:%{i.example.com": exists target has an unterminated macro.',
    ],
    [
      'v=spf1 exists:100%.example.com -all',
      '"exists:100%.example.com": exists target has a "%" that does not start a macro (%{x}, %%, %_ or %-).',
    ],
    ['v=spf1 -redirect=example.com', '"-redirect=example.com": unknown mechanism "redirect=example.com".'],
  ])('%s is a permerror', (record, error) => {
    expect(messages(record).errors).toEqual([error]);
  });

  it('rejects a second redirect or exp (RFC 7208 §6)', () => {
    expect(messages('v=spf1 redirect=a.example.com redirect=b.example.com').errors).toEqual([
      'The "redirect" modifier appears more than once.',
    ]);
    expect(messages('v=spf1 exp=a.example.com exp=b.example.com -all').errors).toEqual([
      'The "exp" modifier appears more than once.',
    ]);
  });

  it('rejects tabs and non-ASCII between terms', () => {
    expect(messages('v=spf1 mx\t-all').errors).toContain(
      'The record contains characters other than printable ASCII and spaces.',
    );
  });

  it('warns about ptr, terms after all, a second all, redirect next to all, huge ranges and unknown modifiers', () => {
    expect(
      messages('v=spf1 ptr ip4:10.0.0.0/7 -all mx ~all redirect=x.example.com foo=bar').warnings,
    ).toEqual([
      '"all" appears more than once; only the first can ever match.',
      'Mechanisms after "all" are never evaluated: mx ~all.',
      '"redirect" is ignored because the record contains "all".',
      '"ptr": the ptr mechanism is slow and unreliable and should not be used.',
      '"ip4:10.0.0.0/7" authorizes more than 16 million addresses.',
      'Unknown modifier "foo" is ignored.',
    ]);
  });

  it('warns when the record is over 450 octets (RFC 7208 §3.4)', () => {
    const record = `v=spf1 ${Array.from({ length: 30 }, (_, i) => `ip4:192.0.2.${i}`).join(' ')} -all`;
    expect(record.length).toBeGreaterThan(450);
    expect(messages(record).warnings).toEqual([
      `The record is ${record.length} octets; above 450 the DNS answer may not fit a 512-octet UDP message.`,
    ]);
  });

  it('checks macro strings without expanding them', () => {
    expect(macroStringError('%{ir}.%{v}._spf.%{d2}')).toBeUndefined();
    expect(macroStringError('%%%_%-')).toBeUndefined();
    expect(macroStringError('%{l1r+-}')).toBeUndefined();
    expect(domainSpecError('%{d}')).toBeUndefined();
    expect(domainSpecError('example.com.')).toBeUndefined();
    expect(domainSpecError(`${'a'.repeat(64)}.example.com`)).toBe(
      `"${'a'.repeat(64)}.example.com" has an empty or overlong label`,
    );
  });
});
