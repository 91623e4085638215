/**
 * The DNSSEC chain as the site and the CLI draw it (client/verdicts.ts): which link holds, which
 * one broke and where (the parent's DS, DS → key, the keys, the key set's signature, or the answer
 * itself), which signatures the reason is about, and the one sentence each view opens with.
 */
import { describe, expect, it } from 'vitest';
import { dnssecAnswer, dnssecChain, dnssecVerdict } from '../../../src/client/verdicts.js';
import { DNSSEC_STATUS, signatureWindow, windowText } from '../../../src/client/words.js';
import type { DnssecResponse } from '../../../src/features/dnssec/dnssec.schema.js';
import { CHECKED_AT, EXPIRED, SECURE, UNSIGNED } from '../../fixtures/dnssec/answers.js';

type Link = DnssecResponse['chain'][number];

/** SECURE with its last zone replaced. */
function withLast(
  body: DnssecResponse,
  last: Partial<Link>,
  top: Partial<DnssecResponse> = {},
): DnssecResponse {
  const chain = body.chain.slice(0, -1);
  const end = body.chain.at(-1) as Link;
  return { ...body, ...top, chain: [...chain, { ...end, ...last }] };
}

describe('the DNSSEC chain of trust, link by link', () => {
  it('a secure chain: every link green, the anchor first, DS → key → signature by that key', () => {
    const zones = dnssecChain(SECURE);
    expect(zones.map((z) => [z.link.zone, z.tone, z.broken])).toEqual([
      ['.', 'ok', null],
      ['test', 'ok', null],
      ['secure.test', 'ok', null],
    ]);
    expect(zones[0]?.entry).toEqual({ tone: 'ok', text: 'the trust anchor names its key', broken: false });
    const leaf = zones[2]!;
    expect(leaf.entry.text).toBe('DS at test, signed by its key 18102');
    expect(leaf.ds.map((d) => d.mark)).toEqual([{ tone: 'ok', text: 'matches key 9522', broken: false }]);
    expect(leaf.dsToKeys).toEqual({ tone: 'ok', text: 'names key 9522', broken: false });
    expect(leaf.keysToSignatures).toEqual({ tone: 'ok', text: 'key 9522 signed the key set', broken: false });
    expect(leaf.keysetSignatures.map((s) => [s.signature.key_tag, s.window.state, s.broken])).toEqual([
      [9522, 'valid', false],
    ]);
    expect(leaf.dsSignatures.map((s) => [s.signature.signer, s.signature.key_tag])).toEqual([
      ['test', 18102],
    ]);
    expect(dnssecAnswer(SECURE)).toMatchObject({ tone: 'ok', broken: null });
    expect(dnssecVerdict(SECURE)).toEqual({
      tone: 'ok',
      text: 'www.secure.test A is secure: every link from the trust anchor down to secure.test verified.',
    });
  });

  it('an expired key set: that zone broken at its signature, the expired one red, the zones above green', () => {
    const zones = dnssecChain(EXPIRED);
    expect(zones.map((z) => z.tone)).toEqual(['ok', 'ok', 'bad']);
    const broken = zones[2]!;
    expect(broken.broken).toEqual({ step: 'keyset', reason: EXPIRED.reason });
    // The DS still names the key: that link holds; the key's signature over its own set does not.
    expect(broken.dsToKeys).toMatchObject({ tone: 'ok', broken: false });
    expect(broken.keysToSignatures).toEqual({ tone: 'bad', text: 'signature_expired', broken: true });
    expect(broken.keysetSignatures.map((s) => [s.window.state, s.broken])).toEqual([['expired', true]]);
    // The parent's signature over the DS is within its window: not what broke.
    expect(broken.dsSignatures.map((s) => s.broken)).toEqual([false]);
    // The chain broke above the answer: the answer's own signature is not the reason.
    expect(dnssecAnswer(EXPIRED).broken).toBeNull();
    expect(dnssecVerdict(EXPIRED)).toEqual({
      tone: 'bad',
      text:
        'www.expired.test A is bogus: the chain breaks at expired.test (signature_expired): the DNSKEY RRset of ' +
        'expired.test is not signed by a key its DS names: the signature expired at 2026-01-30T00:00:00Z. ' +
        'Validating resolvers answer SERVFAIL.',
    });
  });

  it('an unsigned delegation: the chain of trust ends there, grey, with the reason and no broken link', () => {
    const zones = dnssecChain(UNSIGNED);
    const end = zones[2]!;
    expect(end.tone).toBe('muted');
    expect(end.broken).toBeNull();
    expect(end.entry).toEqual({ tone: 'muted', text: 'no DS at test: no_ds', broken: false });
    expect(end.dsToKeys).toBeNull();
    expect(end.keysToSignatures).toBeNull();
    expect(DNSSEC_STATUS.insecure.tone).toBe('muted');
    expect(dnssecVerdict(UNSIGNED).text).toBe(
      'www.unsigned.test A is insecure: the chain of trust ends at unsigned.test (no_ds): unsigned.test is ' +
        'delegated from test without DS (proven by NSEC): the zone is unsigned.',
    );
  });

  it('a DS that names no key served: the DS → DNSKEY link broken, the DS red', () => {
    const reason = { code: 'no_dnskey_matches_ds', zone: 'secure.test', detail: 'no DNSKEY matches' };
    const body = withLast(
      SECURE,
      {
        status: 'bogus',
        reason,
        ds: [{ ...SECURE.chain[2]!.ds[0]!, key_tag: 4242, matches_key: false }],
        dnskeys: [{ ...SECURE.chain[2]!.dnskeys[0]!, matched_by_ds: false, signs_keyset: false }],
      },
      { status: 'bogus', reason },
    );
    const z = dnssecChain(body)[2]!;
    expect(z.broken?.step).toBe('ds');
    expect(z.dsToKeys).toEqual({ tone: 'bad', text: 'no_dnskey_matches_ds', broken: true });
    expect(z.ds[0]?.mark).toEqual({ tone: 'bad', text: 'no key served matches', broken: true });
    expect(z.keysToSignatures?.broken).toBe(false);
  });

  it('a DS RRset whose parent signature fails: broken on the way in, the parent named', () => {
    const reason = {
      code: 'signature_invalid',
      zone: 'test',
      detail: 'the DS RRset for secure.test in test is not validated',
    };
    const body = withLast(SECURE, { status: 'bogus', reason, dnskeys: [] }, { status: 'bogus', reason });
    const z = dnssecChain(body)[2]!;
    expect(z.broken?.step).toBe('parent');
    expect(z.entry).toEqual({ tone: 'bad', text: 'test: signature_invalid', broken: true });
    expect(z.dsSignatures.map((s) => s.broken)).toEqual([true]);
  });

  it('an answer without its RRSIG under a secure chain: the answer is the broken link', () => {
    const reason = {
      code: 'rrsig_missing',
      zone: 'secure.test',
      detail: 'no RRSIG covers www.secure.test/A',
    };
    const body: DnssecResponse = {
      ...SECURE,
      status: 'bogus',
      reason,
      answer: { ...SECURE.answer, signatures: [] },
    };
    expect(dnssecChain(body).every((z) => z.broken === null)).toBe(true);
    expect(dnssecAnswer(body)).toMatchObject({ tone: 'bad', broken: reason });
  });

  it('lists the keys the DS names first, KSKs before ZSKs, and the key set signatures in the same order', () => {
    const tld = SECURE.chain[1]!;
    const reversed = { ...tld, signatures: [...tld.signatures].reverse() };
    const z = dnssecChain({ ...SECURE, chain: [SECURE.chain[0]!, reversed, SECURE.chain[2]!] })[1]!;
    // As served: ZSK 18102, then KSK 1178.
    expect(tld.dnskeys.map((k) => k.key_tag)).toEqual([18102, 1178]);
    expect(z.keys.map((k) => `${k.role} ${k.key_tag}`)).toEqual(['KSK 1178', 'ZSK 18102']);
    expect(z.keysetSignatures.map((v) => v.signature.key_tag)).toEqual([1178, 18102]);
  });

  it('says a secure negative answer with its proof', () => {
    const body: DnssecResponse = {
      ...SECURE,
      target: 'nx.secure.test',
      answer: {
        rcode: 'NXDOMAIN',
        records: [],
        signatures: [],
        denial: { status: 'proven', kind: 'nxdomain', records: [] },
      },
    };
    expect(dnssecVerdict(body).text).toBe(
      'nx.secure.test A is secure: every link from the trust anchor down to secure.test verified, the proof ' +
        'that the name does not exist included.',
    );
  });

  it('reads a signature window against the time of the answer, not the clock', () => {
    const window = { inception: '2026-02-15T00:00:00Z', expiration: '2026-03-04T00:00:00Z' };
    expect(signatureWindow(window, CHECKED_AT)).toEqual({
      state: 'valid',
      tone: 'warn',
      text: 'valid, expires in 2 days',
    });
    expect(signatureWindow(window, '2026-03-10T00:00:00Z')).toMatchObject({ state: 'expired', tone: 'bad' });
    expect(signatureWindow(window, '2026-02-01T00:00:00Z')).toEqual({
      state: 'not_yet_valid',
      tone: 'bad',
      text: 'not valid until 2026-02-15 00:00 UTC',
    });
    expect(windowText(window)).toBe('2026-02-15 → 2026-03-04');
  });
});
