/**
 * `netdiag dnssec` draws the chain of trust as an indented tree (zone, DS → the key it names →
 * that key's signature over the key set), in the site's words, the broken link in red.
 */
import { stripVTControlCharacters } from 'node:util';
import { describe, expect, it } from 'vitest';
import { dnssec } from '../../../../src/cli/render/dnssec.js';
import { createStyle } from '../../../../src/cli/style.js';
import { EXPIRED, SECURE, UNSIGNED } from '../../../fixtures/dnssec/answers.js';

const plain = (body: unknown) => dnssec(body, createStyle(false));
/** SGR 31 (the `bad` tone) opened before `text` and not closed before it. */
const red = (text: string) =>
  new RegExp(`\\u001b\\[31m(?:(?!\\u001b\\[39m).)*${text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`);

describe('netdiag dnssec', () => {
  it('opens with the verdict, then each zone with DS → key → signature one step further in', () => {
    const lines = plain(SECURE);
    expect(lines[0]).toBe(
      'SECURE  www.secure.test A is secure: every link from the trust anchor down to secure.test verified.',
    );
    const at = (text: string) => lines.findIndex((l) => l.trimStart().startsWith(text));
    const indent = (text: string) =>
      (lines[at(text)] ?? '').length - (lines[at(text)] ?? '').trimStart().length;
    // The zones in order from the anchor down, at the left edge.
    const zones = ['. (root)  secure  trust anchor', 'test  secure', 'secure.test  secure'].map(at);
    expect(zones[0]).toBeGreaterThan(0);
    expect(zones).toEqual([...zones].sort((a, b) => a - b));
    expect(indent('secure.test  secure')).toBe(0);
    const ds = at('DS 9522 ');
    expect(lines[ds]).toBe('  DS 9522  ECDSAP256SHA256 · SHA-256  → matches key 9522');
    expect(lines[ds + 1]).toBe(
      '    KSK 9522  ECDSAP256SHA256 · 256 bits  named by the DS · signed the key set',
    );
    expect(lines[ds + 2]).toBe(
      '      RRSIG DNSKEY by key 9522 of secure.test  2026-02-15 → 2026-03-31  valid, expires in 29 days',
    );
    // How the zone is reached: the parent's signed DS.
    expect(lines[at('↓ DS at test')]).toBe('  ↓ DS at test, signed by its key 18102');
    // The zone-signing key no DS names, with the signature it made, under the zone.
    expect(lines[at('ZSK 18102')]).toBe('  ZSK 18102  ECDSAP256SHA256 · 256 bits');
    expect(lines).toContain(
      'Validated by netdiag itself, from the trust anchor down: 9 upstream queries · checked 2026-03-01 12:00 UTC.',
    );
    expect(lines.join('\n')).toMatch(/\nwww\.secure\.test\s+A\s+5 min\s+192\.0\.2\.10\n/);
  });

  it('marks the broken link with its reason, in red, and only that one', () => {
    const text = plain(EXPIRED).join('\n');
    expect(text).toMatch(
      /^BOGUS {2}www\.expired\.test A is bogus: the chain breaks at expired\.test \(signature_expired\)/,
    );
    expect(text).toContain('expired.test  bogus\n  ✕ signature_expired: the DNSKEY RRset of expired.test');
    expect(text).toContain(
      '    KSK 56803  ECDSAP256SHA256 · 256 bits  named by the DS\n' +
        '      ✕ RRSIG DNSKEY by key 56803 of expired.test  2026-01-01 → 2026-01-30  expired 31 days ago',
    );
    expect(text.match(/✕/g)).toHaveLength(2);

    const lines = dnssec(EXPIRED, createStyle(true));
    const coloured = lines.join('\n');
    expect(coloured).toMatch(red('✕ RRSIG DNSKEY by key 56803'));
    expect(coloured).toMatch(red('✕ signature_expired'));
    // The zones above it hold: between the chain's heading and that zone, nothing is red.
    const from = lines.findIndex((l) => stripVTControlCharacters(l) === 'Chain of trust');
    const to = lines.findIndex((l) => stripVTControlCharacters(l).startsWith('expired.test  bogus'));
    expect(to).toBeGreaterThan(from);
    expect(lines.slice(from, to).join('\n')).not.toContain('\u001b[31m');
    expect(lines.slice(from, to).join('\n')).toContain('\u001b[32m');
    expect(stripVTControlCharacters(coloured)).toBe(text);
  });

  it('draws an insecure zone grey, with where the chain of trust ends and no broken link', () => {
    const text = plain(UNSIGNED).join('\n');
    expect(text).toContain(
      '  ↓ no DS at test: no_ds\nunsigned.test  insecure\n  no_ds: unsigned.test is delegated',
    );
    expect(text).not.toContain('✕');
    const coloured = dnssec(UNSIGNED, createStyle(true)).join('\n');
    // Dim (SGR 2), not red.
    expect(coloured).toContain('\u001b[2munsigned.test\u001b[22m');
    expect(coloured).not.toContain('\u001b[31m');
  });

  it('says a parent whose signature over the DS fails as the broken link on the way into the zone', () => {
    const reason = {
      code: 'signature_invalid',
      zone: 'test',
      detail: 'the DS RRset for secure.test in test is not validated',
    };
    const last = { ...SECURE.chain[2]!, status: 'bogus' as const, reason, dnskeys: [] };
    const body = { ...SECURE, status: 'bogus' as const, reason, chain: [...SECURE.chain.slice(0, 2), last] };
    const text = plain(body).join('\n');
    expect(text).toContain(
      '\n  ✕ test: signature_invalid\nsecure.test  bogus\n  ✕ signature_invalid: the DS RRset',
    );
    expect(text).toMatch(/\n {2}✕ DS signed by key 18102 of test {2}2026-02-15 → 2026-03-31 /);
  });
});
