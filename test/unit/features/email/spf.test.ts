/**
 * SPF (RFC 7208): term syntax, record selection, and the evaluation tree
 * with its lookup and void-lookup counts, against zones answered by the fake
 * DNS server's own lookup logic.
 */
import { describe, expect, it } from 'vitest';
import { createMailDns } from '../../../../src/features/email/mail-dns.js';
import {
  domainSpecError,
  evaluateSpf,
  isSpfRecord,
  macroStringError,
  parseSpfRecord,
} from '../../../../src/features/email/spf.js';
import { makeZone, RoundGate, TLD_ZONE, zoneResolver } from './zone-resolver.js';

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

const Z = 'spf.test';
function evaluate(rows: [string, string, unknown][], domain = Z, fail?: (name: string) => boolean) {
  const dns = createMailDns(zoneResolver([TLD_ZONE, makeZone(Z, rows)], { fail: fail && ((n) => fail(n)) }));
  return evaluateSpf(domain, dns);
}

describe('SPF evaluation tree (RFC 7208 §4.6.4, §5.2, §6.1)', () => {
  it('follows includes and redirects, counting lookups per record and choosing the all reached through redirect', async () => {
    const result = await evaluate([
      [Z, 'TXT', 'v=spf1 a include:inc.spf.test redirect=red.spf.test'],
      [Z, 'A', '192.0.2.1'],
      ['inc.spf.test', 'TXT', 'v=spf1 mx:spf.test -all'],
      ['red.spf.test', 'TXT', 'v=spf1 ip4:192.0.2.0/24 ~all'],
      [Z, 'MX', { preference: 10, exchange: 'mx.spf.test' }],
    ]);
    expect(result).toMatchObject({
      state: 'evaluated',
      valid: true,
      withinLimits: true,
      permerror: false,
      lookupCount: 4,
      voidLookupCount: 0,
      effectiveAll: '~all',
      status: 'pass',
    });
    expect(result.tree.map((n) => [n.domain, n.via, n.depth, n.parent, n.lookups, n.state])).toEqual([
      ['spf.test', 'root', 0, null, 3, 'ok'],
      ['inc.spf.test', 'include', 1, 0, 1, 'ok'],
      ['red.spf.test', 'redirect', 1, 0, 0, 'ok'],
    ]);
  });

  it('an include target without SPF is a permerror (RFC 7208 §5.2)', async () => {
    const result = await evaluate([[Z, 'TXT', 'v=spf1 include:nothing.spf.test -all']]);
    expect(result).toMatchObject({ valid: false, permerror: true, status: 'fail', voidLookupCount: 1 });
    expect(result.findings.map((f) => f.message)).toEqual([
      'include:nothing.spf.test has no SPF record, which makes the whole evaluation a permerror.',
    ]);
  });

  it('detects an include loop and does not follow it again', async () => {
    const result = await evaluate([
      [Z, 'TXT', 'v=spf1 include:a.spf.test -all'],
      ['a.spf.test', 'TXT', 'v=spf1 include:spf.test -all'],
    ]);
    expect(result.permerror).toBe(true);
    expect(result.findings.map((f) => f.message)).toEqual([
      'SPF include loop: spf.test → a.spf.test → spf.test.',
    ]);
    expect(result.tree.map((n) => n.state)).toEqual(['ok', 'ok', 'loop']);
  });

  it('an mx term with more than 10 hosts is a permerror', async () => {
    const hosts: [string, string, unknown][] = Array.from({ length: 11 }, (_, i) => [
      'many.spf.test',
      'MX',
      { preference: i, exchange: `mx${i}.spf.test` },
    ]);
    const result = await evaluate([[Z, 'TXT', 'v=spf1 mx:many.spf.test -all'], ...hosts]);
    expect(result).toMatchObject({ withinLimits: false, permerror: true });
    expect(result.findings.map((f) => f.message)).toEqual([
      'spf.test: "mx:many.spf.test" returns 11 MX hosts; more than 10 is a permerror.',
    ]);
  });

  it('does not expand macros or resolve ptr, but still counts them as lookups', async () => {
    const result = await evaluate([
      [Z, 'TXT', 'v=spf1 exists:%{i}.x.spf.test include:%{d}.y.spf.test ptr -all'],
    ]);
    expect(result.lookupCount).toBe(3);
    expect(result.tree[0]!.terms.map((t) => t.note)).toEqual([
      'has macros; expanded per message, not resolved here',
      'has macros; expanded per message, not followed',
      'needs the sending address; not resolved here',
      undefined,
    ]);
    expect(result.tree[1]).toMatchObject({ state: 'macro', domain: '%{d}.y.spf.test' });
  });

  it('stops following once the 10-lookup limit is passed, and says the count is a lower bound', async () => {
    const includes = Array.from({ length: 11 }, (_, i) => `include:i${i}.spf.test`).join(' ');
    const rows: [string, string, unknown][] = Array.from({ length: 11 }, (_, i) => [
      `i${i}.spf.test`,
      'TXT',
      'v=spf1 a -all',
    ]);
    const result = await evaluate([[Z, 'TXT', `v=spf1 ${includes} -all`], ...rows]);
    expect(result).toMatchObject({ lookupCount: 11, lookupCountComplete: false, permerror: true });
    expect(result.tree.slice(1).every((n) => n.state === 'not_followed')).toBe(true);
    expect(result.summary).toBe(
      'SPF is a permerror (11+/10 lookups): receivers treat the domain as having no usable SPF.',
    );
  });

  it.each([
    [
      'v=spf1 mx',
      null,
      'warning',
      'The record ends without "all" or "redirect": unlisted hosts get the default result, neutral.',
    ],
    [
      'v=spf1 mx ?all',
      '?all',
      'warning',
      '"?all" (neutral) gives receivers no instruction for unlisted hosts.',
    ],
    ['v=spf1 +all', '+all', 'error', '"+all" authorizes every host on the Internet to send as this domain.'],
  ])('%s fails: %s', async (record, all, severity, message) => {
    const result = await evaluate([
      [Z, 'TXT', record],
      [Z, 'MX', { preference: 10, exchange: 'mx.spf.test' }],
    ]);
    expect(result).toMatchObject({ effectiveAll: all, status: 'fail', permerror: false });
    expect(result.findings).toContainEqual(expect.objectContaining({ severity, message }));
  });

  it('no SPF record: state none, fail', async () => {
    const result = await evaluate([[Z, 'TXT', 'google-site-verification=abc']]);
    expect(result).toMatchObject({ state: 'none', recordCount: 0, status: 'fail', tree: [] });
  });

  it('a DNS failure anywhere in the tree is a temperror: status error', async () => {
    const result = await evaluate(
      [
        [Z, 'TXT', 'v=spf1 include:slow.spf.test -all'],
        ['slow.spf.test', 'TXT', 'v=spf1 -all'],
      ],
      Z,
      (name) => name === 'slow.spf.test',
    );
    expect(result).toMatchObject({ state: 'error', status: 'error', permerror: false });
    expect(result.tree[1]).toMatchObject({
      state: 'error',
      problem: 'DNS lookup failed: timeout: no answer within 5000 ms',
    });
  });

  it('asks each level of the tree in one round trip: rounds = depth + 1, not the number of queries', async () => {
    const gate = new RoundGate();
    const rows: [string, string, unknown][] = [
      [Z, 'TXT', 'v=spf1 include:a.spf.test include:b.spf.test a mx -all'],
      [Z, 'A', '192.0.2.1'],
      [Z, 'MX', { preference: 1, exchange: 'mx.spf.test' }],
      ['a.spf.test', 'TXT', 'v=spf1 include:c.spf.test a:x.spf.test -all'],
      ['b.spf.test', 'TXT', 'v=spf1 include:d.spf.test exists:y.spf.test -all'],
      ['c.spf.test', 'TXT', 'v=spf1 ip4:192.0.2.0/24 -all'],
      ['d.spf.test', 'TXT', 'v=spf1 ip6:2001:db8::/32 -all'],
      ['x.spf.test', 'A', '192.0.2.2'],
      ['y.spf.test', 'A', '192.0.2.3'],
    ];
    const dns = createMailDns(zoneResolver([TLD_ZONE, makeZone(Z, rows)], { gate }));
    const result = await gate.run(evaluateSpf(Z, dns));
    expect(result.lookupCount).toBe(8);
    // Depth 2 (root → a → c): three rounds of TXT; the a/mx/exists lookups ride along with the next level.
    expect(gate.rounds).toBe(3);
    expect(dns.stats().queries).toBe(11);
  });
});
