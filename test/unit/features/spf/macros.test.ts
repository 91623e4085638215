/**
 * The SPF macro language (RFC 7208 §7): the RFC's own examples of §7.4, the
 * escapes, URL-escaping of upper-case macros, the syntax errors, truncation,
 * and the bounds that keep a hostile record's expansion small (issue 29 F1).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  expandDomainName,
  expandMacros,
  type MacroValues,
  parseSpfIp,
  tokenizeMacroString,
  truncateExpandedName,
} from '../../../../src/features/spf/macros.js';

function values(ip: string, overrides: Partial<MacroValues> = {}): MacroValues {
  return {
    sender: 'strong-bad@email.example.com',
    local: 'strong-bad',
    senderDomain: 'email.example.com',
    domain: 'email.example.com',
    ip: parseSpfIp(ip)!,
    helo: 'mx.example.org',
    receiver: 'receiver.example.net',
    now: 1_700_000_000.9,
    validatedName: async () => 'mx.example.org',
    ...overrides,
  };
}

async function expand(text: string, ip = '192.0.2.3', explanation = false): Promise<string> {
  const tokens = tokenizeMacroString(text, explanation);
  if (typeof tokens === 'string') throw new Error(tokens);
  return expandMacros(tokens, values(ip));
}

describe('RFC 7208 §7.4 examples', () => {
  it.each([
    ['%{s}', 'strong-bad@email.example.com'],
    ['%{o}', 'email.example.com'],
    ['%{d}', 'email.example.com'],
    ['%{d4}', 'email.example.com'],
    ['%{d3}', 'email.example.com'],
    ['%{d2}', 'example.com'],
    ['%{d1}', 'com'],
    ['%{dr}', 'com.example.email'],
    ['%{d2r}', 'example.email'],
    ['%{l}', 'strong-bad'],
    ['%{l-}', 'strong.bad'],
    ['%{lr}', 'strong-bad'],
    ['%{lr-}', 'bad.strong'],
    ['%{l1r-}', 'strong'],
    ['%{ir}.%{v}._spf.%{d2}', '3.2.0.192.in-addr._spf.example.com'],
    ['%{lr-}.lp._spf.%{d2}', 'bad.strong.lp._spf.example.com'],
    ['%{lr-}.lp.%{ir}.%{v}._spf.%{d2}', 'bad.strong.lp.3.2.0.192.in-addr._spf.example.com'],
    ['%{ir}.%{v}.%{l1r-}.lp._spf.%{d2}', '3.2.0.192.in-addr.strong.lp._spf.example.com'],
    ['%{d2}.trusted-domains.example.net', 'example.com.trusted-domains.example.net'],
  ])('%s → %s', async (text, expected) => {
    expect(await expand(text)).toBe(expected);
  });

  it('writes an IPv6 %{i} as nibbles (upper-case hex, as pyspf and the openspf suite do; DNS ignores case)', async () => {
    expect(await expand('%{ir}.%{v}._spf.%{d2}', '2001:db8::cb01')).toBe(
      '1.0.B.C.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.8.B.D.0.1.0.0.2.ip6._spf.example.com',
    );
  });
});

describe('the rest of the language', () => {
  it('expands the escapes %%, %_ and %-', async () => {
    expect(await expand('a%%b%_c%-d')).toBe('a%b c%20d');
  });

  it('URL-escapes an upper-case macro; only unreserved characters stay (§7.3)', async () => {
    const tokens = tokenizeMacroString('%{L}') as never;
    expect(await expandMacros(tokens, values('192.0.2.3', { local: '~jack&jill=up-a_b3.c' }))).toBe(
      '~jack%26jill%3Dup-a_b3.c',
    );
  });

  it('keeps every part when the digit transformer is larger than the count', async () => {
    expect(await expand('%{d99}')).toBe('email.example.com');
  });

  it('splits on several delimiters at once and joins with dots', async () => {
    const tokens = tokenizeMacroString('%{l2r+-}') as never;
    expect(await expandMacros(tokens, values('192.0.2.3', { local: 'foo-bar+zip+quux' }))).toBe('bar.foo');
  });

  it('expands c, r and t in explanation text only, and %{p} through its lookup', async () => {
    expect(await expand('%{c} via %{r} at %{t} from %{p}', '2001:DB8::CB01', true)).toBe(
      '2001:db8::cb01 via receiver.example.net at 1700000000 from mx.example.org',
    );
    expect(tokenizeMacroString('%{c}.example.com')).toBe(
      'uses macro letter "c", allowed only in explanation text',
    );
  });

  it.each([
    ['%', 'has a "%" that does not start a macro (%{x}, %%, %_ or %-)'],
    ['foo%(ir).example.com', 'has a "%" that does not start a macro (%{x}, %%, %_ or %-)'],
    ['%{ir', 'has an unterminated macro'],
    ['%{a}.example.com', 'has an invalid macro "%{a}"'],
    ['%{d0}', 'has a zero digit transformer in "%{d0}"'],
    ['%{d2x}', 'has an invalid macro "%{d2x}"'],
    ['with space', 'contains the invalid character " "'],
  ])('%j is not a macro-string: %s', (text, why) => {
    expect(tokenizeMacroString(text)).toBe(why);
  });

  it('allows spaces in explanation text', () => {
    expect(tokenizeMacroString('with space', true)).toEqual([{ kind: 'literal', text: 'with space' }]);
  });
});

describe('parseSpfIp', () => {
  it.each([
    ['192.0.2.1', '192.0.2.1', 4],
    ['::ffff:192.0.2.1', '192.0.2.1', 4],
    ['::FFFF:C000:0201', '192.0.2.1', 4],
    ['::1.1.1.1', '::101:101', 6],
    ['2001:DB8::1', '2001:db8::1', 6],
  ])('%s → %s (IPv%d)', (text, address, family) => {
    expect(parseSpfIp(text)).toMatchObject({ address, family });
  });

  it.each(['192.0.2', '01.2.3.4', '1.2.3.4.5', 'fe80::1%eth0', 'example.com', ''])('refuses %j', (text) => {
    expect(parseSpfIp(text)).toBeUndefined();
  });
});

describe('truncateExpandedName (RFC 7208 §4.8)', () => {
  it('drops labels from the left until the name fits 253 characters', () => {
    const long = `${'a'.repeat(60)}.${'b'.repeat(60)}.${'c'.repeat(60)}.${'d'.repeat(60)}.example.com`;
    expect(long.length).toBeGreaterThan(253);
    expect(truncateExpandedName(long)).toBe(
      `${'b'.repeat(60)}.${'c'.repeat(60)}.${'d'.repeat(60)}.example.com`,
    );
    expect(truncateExpandedName('short.example.com.')).toBe('short.example.com');
  });
});

describe('F1: expansion stays linear in what it keeps', () => {
  const sender = `${'x'.repeat(490)}@email.example.com`;
  const big = values('192.0.2.3', { sender, local: 'x'.repeat(490) });

  it('expandMacros stops at the first token past maxLength', async () => {
    const tokens = tokenizeMacroString('%{S}'.repeat(15_000), true);
    if (typeof tokens === 'string') throw new Error(tokens);
    const out = await expandMacros(tokens, big, 512);
    expect(out.length).toBeGreaterThan(512);
    // One token past the limit at most: never the 15 000 copies.
    expect(out.length).toBeLessThanOrEqual(512 + sender.length);
  });

  it('expandDomainName asks %{p} nothing for tokens the 253-character name drops', async () => {
    let asked = 0;
    const counting = values('192.0.2.3', {
      validatedName: async () => {
        asked += 1;
        return 'mx.example.org';
      },
    });
    const tokens = tokenizeMacroString(`${'%{p}.'.repeat(2000)}%{d}`);
    if (typeof tokens === 'string') throw new Error(tokens);
    const name = await expandDomainName(tokens, counting);
    expect(name.length).toBeLessThanOrEqual(253);
    expect(name.endsWith('.email.example.com')).toBe(true);
    expect(asked).toBeLessThan(30);
  });

  it('expandDomainName is truncateExpandedName of the whole expansion, for any domain-spec', async () => {
    const piece = fc.constantFrom(
      '%{s}',
      '%{l}',
      '%{o}',
      '%{d}',
      '%{i}',
      '%{ir}',
      '%{d2}',
      '%{l-}',
      'a.',
      '.',
      'bb',
      '-',
    );
    await fc.assert(
      fc.asyncProperty(fc.array(piece, { minLength: 1, maxLength: 120 }), async (pieces) => {
        const tokens = tokenizeMacroString(pieces.join(''));
        if (typeof tokens === 'string') throw new Error(tokens);
        const whole = truncateExpandedName(await expandMacros(tokens, big));
        const bounded = await expandDomainName(tokens, big);
        // Equal wherever truncation finds a dot; a name with no dot in its last 254 characters
        // is no usable name either way, and the bounded one is then its tail.
        if (whole.length <= 253) expect(bounded).toBe(whole);
        else expect(bounded.length).toBeLessThanOrEqual(255);
      }),
      { numRuns: 300 },
    );
  });
});
