/**
 * The SPF evaluation tree (RFC 7208 §4.6.4, §5.2, §6.1) with its lookup and
 * void-lookup counts, and where receivers stop, read through the
 * email-security check that reports them, against zones answered by the fake
 * DNS server's own lookup logic.
 */
import { describe, expect, it } from 'vitest';
import { createMailDns } from '../../../../src/features/email/mail-dns.js';
import { evaluateSpf } from '../../../../src/features/email/spf.js';
import { startFakeDnsServer } from '../../../fakes/dns-server.js';
import type { FakeZone } from '../../../fakes/dns-zones.js';
import { makeZone, RoundGate, TLD_ZONE, zoneResolver } from '../email/zone-resolver.js';
import { mailauthSpf } from './mailauth-spf-peer.js';

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
    expect(result.permerrorAt).toMatchObject({ reason: 'mx_host_limit', term: 'mx:many.spf.test', path: [] });
    expect(result.summary).toBe(
      'Receivers stop at an mx term with more than 10 hosts (mx:many.spf.test in spf.test) with permerror, ' +
        'before any term authorizes a sender, so all mail fails SPF with permerror.',
    );
  });

  it('does not expand macros or resolve ptr, but still counts them as lookups', async () => {
    const result = await evaluate([
      [Z, 'TXT', 'v=spf1 exists:%{i}.x.spf.test include:%{d}.y.spf.test ptr -all'],
    ]);
    // The macro include's own record is unknown, so the total is a lower bound.
    expect(result).toMatchObject({ lookupCount: 3, lookupCountComplete: false });
    expect(result.tree[0]!.terms.map((t) => t.note)).toEqual([
      'has macros; expanded per message, not resolved here',
      'has macros; expanded per message, not followed',
      'needs the sending address; not resolved here',
      undefined,
    ]);
    expect(result.tree[1]).toMatchObject({ state: 'macro', domain: '%{d}.y.spf.test' });
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

type Rows = [string, string, unknown][];
/** `count` hosts h<from>.spf.test … with one address each, 192.0.2.<from> … (in 192.0.2.0/24, so ip4 terms elsewhere avoid it). */
const hosts = (from: number, count: number): Rows =>
  Array.from({ length: count }, (_, i) => [`h${from + i}.spf.test`, 'A', `192.0.2.${from + i}`]);

function zonesOf(rows: Rows, vendor: Rows = []): FakeZone[] {
  return [TLD_ZONE, makeZone(Z, rows), makeZone('vendor.test', vendor)];
}

async function evaluateZones(zones: FakeZone[]) {
  return evaluateSpf(Z, createMailDns(zoneResolver(zones)));
}

/** mailauth, the peer evaluator, on the same zones (served by the fake DNS server): its result for each address. */
async function peer(zones: FakeZone[], ...ips: string[]) {
  const server = await startFakeDnsServer({ zones });
  try {
    const out: { result: string; lookups: number | undefined }[] = [];
    for (const ip of ips) {
      const { result, lookups } = await mailauthSpf(server.udp, {
        ip,
        sender: `user@${Z}`,
        helo: 'mta.example',
      });
      out.push({ result, lookups });
    }
    return out;
  } finally {
    await server.close();
  }
}

describe('SPF lookup totals past the limit, and where receivers stop (RFC 7208 §4.6.4)', () => {
  // 15 lookups, three includes deep; depth-first order puts the 11th in the middle of the tree,
  // where a level-by-level count would not: _spf's include:_spf.vendor.test comes after all of _a's subtree.
  const fifteen = zonesOf(
    [
      [Z, 'TXT', 'v=spf1 ip4:198.51.100.0/28 mx include:_spf.spf.test a:h20.spf.test -all'],
      [Z, 'MX', { preference: 10, exchange: 'h1.spf.test' }],
      [
        '_spf.spf.test',
        'TXT',
        'v=spf1 include:_a.spf.test ip4:198.51.100.16/28 include:_spf.vendor.test -all',
      ],
      [
        '_a.spf.test',
        'TXT',
        'v=spf1 a:h2.spf.test a:h3.spf.test a:h4.spf.test a:h5.spf.test include:_b.spf.test -all',
      ],
      ['_b.spf.test', 'TXT', 'v=spf1 a:h6.spf.test a:h7.spf.test ip4:198.51.100.32/28 -all'],
      ...hosts(1, 9),
      ...hosts(20, 1),
    ],
    [
      ['_spf.vendor.test', 'TXT', 'v=spf1 include:_c.vendor.test a:h8.spf.test -all'],
      ['_c.vendor.test', 'TXT', 'v=spf1 a:h9.spf.test ip4:203.0.113.0/24 -all'],
    ],
  );

  it('counts all 15 lookups of a nested tree and names the 11th: the include in include:_spf.spf.test', async () => {
    const result = await evaluateZones(fifteen);
    expect(result).toMatchObject({
      lookupCount: 15,
      lookupCountComplete: true,
      voidLookupCount: 0,
      voidLookupCountComplete: true,
      valid: true,
      withinLimits: false,
      permerror: true,
      status: 'fail',
    });
    // Every record was followed, past the limit too.
    expect(result.tree.map((n) => [n.domain, n.state, n.lookups])).toEqual([
      ['spf.test', 'ok', 3],
      ['_spf.spf.test', 'ok', 2],
      ['_a.spf.test', 'ok', 5],
      ['_b.spf.test', 'ok', 2],
      ['_spf.vendor.test', 'ok', 2],
      ['_c.vendor.test', 'ok', 1],
    ]);
    expect(result.permerrorAt).toEqual({
      reason: 'lookup_limit',
      term: 'include:_spf.vendor.test',
      domain: '_spf.spf.test',
      path: ['include:_spf.spf.test'],
      node: 1,
      term_index: 2,
      lookups: 11,
      void_lookups: 0,
      evaluated_before: [
        { term: 'ip4:198.51.100.0/28', domain: 'spf.test', result: 'pass' },
        { term: 'mx', domain: 'spf.test', result: 'pass' },
        { term: 'a:h2.spf.test', domain: '_a.spf.test', result: 'pass' },
        { term: 'a:h3.spf.test', domain: '_a.spf.test', result: 'pass' },
        { term: 'a:h4.spf.test', domain: '_a.spf.test', result: 'pass' },
        { term: 'a:h5.spf.test', domain: '_a.spf.test', result: 'pass' },
        { term: 'a:h6.spf.test', domain: '_b.spf.test', result: 'pass' },
        { term: 'a:h7.spf.test', domain: '_b.spf.test', result: 'pass' },
        { term: 'ip4:198.51.100.32/28', domain: '_b.spf.test', result: 'pass' },
        { term: 'ip4:198.51.100.16/28', domain: '_spf.spf.test', result: 'pass' },
      ],
    });
    const text =
      'The record needs 15 DNS lookups (include, a, mx, ptr, exists and redirect terms, through every include); ' +
      'the limit is 10. Receivers stop at the 11th lookup (include:_spf.vendor.test in include:_spf.spf.test) ' +
      'with permerror, so mail from senders authorized before that term still passes and everything else fails ' +
      'SPF with permerror. Cut 5 lookups.';
    expect(result.summary).toBe(text);
    expect(result.findings).toEqual([{ severity: 'error', message: text, rfc: 'RFC 7208 §4.6.4' }]);
  });

  it('mailauth on the same zones: pass before the 11th lookup, permerror from it on, and it counts only to 11', async () => {
    const cases: [string, string][] = [
      ['198.51.100.1', 'pass'], // ip4 in the root, first term
      ['192.0.2.1', 'pass'], // the root's mx host
      ['192.0.2.7', 'pass'], // a:h7 in _b, the 10th lookup
      ['198.51.100.33', 'pass'], // ip4 in _b, after the 10th lookup and before the 11th
      ['198.51.100.17', 'pass'], // ip4 in _spf, just before include:_spf.vendor.test
      ['192.0.2.9', 'permerror'], // a:h9 inside the 11th lookup's include
      ['203.0.113.5', 'permerror'], // ip4 inside it
      ['192.0.2.20', 'permerror'], // the root's last a term
      ['233.252.0.1', 'permerror'], // listed nowhere
    ];
    const results = await peer(fifteen, ...cases.map(([ip]) => ip));
    expect(results.map((r, i) => [cases[i]![0], r.result])).toEqual(cases);
    // It stops counting where it stops evaluating.
    for (const r of results.filter((x) => x.result === 'permerror')) expect(r.lookups).toBe(11);
  });

  it('a redirect counts, and is evaluated after the mechanisms wherever it is written', async () => {
    const zones = zonesOf([
      [Z, 'TXT', 'v=spf1 redirect=_r.spf.test a:h1.spf.test include:_i.spf.test'],
      [
        '_i.spf.test',
        'TXT',
        `v=spf1 ${Array.from({ length: 7 }, (_, i) => `a:h${i + 2}.spf.test`).join(' ')} -all`,
      ],
      ['_r.spf.test', 'TXT', 'v=spf1 a:h9.spf.test ip4:198.51.100.0/24 -all'],
      ...hosts(1, 9),
    ]);
    const result = await evaluateZones(zones);
    expect(result).toMatchObject({ lookupCount: 11, effectiveAll: '-all', permerror: true });
    expect(result.tree.map((n) => `${n.via}:${n.domain}`)).toEqual([
      'root:spf.test',
      'include:_i.spf.test',
      'redirect:_r.spf.test',
    ]);
    // 1 a + 1 include + 7 a + the redirect (10th): the redirect target's first term is the 11th.
    expect(result.permerrorAt).toMatchObject({
      reason: 'lookup_limit',
      term: 'a:h9.spf.test',
      domain: '_r.spf.test',
      path: ['redirect=_r.spf.test'],
      node: 2,
      term_index: 0,
      lookups: 11,
    });
    expect(result.summary).toContain(
      'Receivers stop at the 11th lookup (a:h9.spf.test in redirect=_r.spf.test) with permerror',
    );
    expect(result.summary).toMatch(/Cut 1 lookup\.$/);
    expect(await peer(zones, '192.0.2.8', '198.51.100.1')).toMatchObject([
      { result: 'pass' },
      { result: 'permerror', lookups: 11 },
    ]);
  });

  it('an include reached twice counts twice, as receivers evaluate it (checkdmarc counts its subtree once: 6)', async () => {
    const zones = zonesOf([
      [Z, 'TXT', 'v=spf1 include:_a.spf.test include:_b.spf.test -all'],
      ['_a.spf.test', 'TXT', 'v=spf1 include:_c.spf.test -all'],
      ['_b.spf.test', 'TXT', 'v=spf1 include:_c.spf.test -all'],
      ['_c.spf.test', 'TXT', 'v=spf1 a:h1.spf.test a:h2.spf.test -all'],
      ...hosts(1, 2),
    ]);
    const result = await evaluateZones(zones);
    expect(result).toMatchObject({ lookupCount: 8, permerror: false, permerrorAt: null, status: 'pass' });
    expect(await peer(zones, '233.252.0.1')).toEqual([{ result: 'fail', lookups: 8 }]);
  });

  it('the 3rd void lookup: named with its record, void terms left out of what still passes', async () => {
    const zones = zonesOf([
      [Z, 'TXT', 'v=spf1 ip4:198.51.100.0/24 a:gone1.spf.test include:_i.spf.test -all'],
      ['_i.spf.test', 'TXT', 'v=spf1 mx:gone2.spf.test a:gone3.spf.test ip4:203.0.113.0/24 -all'],
    ]);
    const result = await evaluateZones(zones);
    expect(result).toMatchObject({
      lookupCount: 4,
      voidLookupCount: 3,
      withinLimits: false,
      permerror: true,
    });
    expect(result.permerrorAt).toEqual({
      reason: 'void_lookup_limit',
      term: 'a:gone3.spf.test',
      domain: '_i.spf.test',
      path: ['include:_i.spf.test'],
      node: 1,
      term_index: 1,
      lookups: 4,
      void_lookups: 3,
      evaluated_before: [{ term: 'ip4:198.51.100.0/24', domain: 'spf.test', result: 'pass' }],
    });
    expect(result.summary).toBe(
      'The record makes 3 void lookups (names with no records); the limit is 2. Receivers stop at the 3rd void lookup ' +
        '(a:gone3.spf.test in include:_i.spf.test) with permerror, so mail from senders authorized before that ' +
        'term still passes and everything else fails SPF with permerror. Remove 1 of the terms whose names have ' +
        'no records.',
    );
    expect((await peer(zones, '198.51.100.1', '203.0.113.1')).map((r) => r.result)).toEqual([
      'pass',
      'permerror',
    ]);
  });

  it('an include target without a record stops receivers there; nothing before it authorizes anyone', async () => {
    const result = await evaluateZones(
      zonesOf([[Z, 'TXT', 'v=spf1 -ip4:198.51.100.0/24 include:none.spf.test -all']]),
    );
    expect(result.permerrorAt).toMatchObject({
      reason: 'no_record',
      term: 'include:none.spf.test',
      void_lookups: 1,
    });
    expect(result.tree[0]!.terms[1]).toEqual({ term: 'include:none.spf.test', lookups: 1, void: true });
    expect(result.summary).toBe(
      'Receivers stop at a target without an SPF record (include:none.spf.test in spf.test) with permerror, ' +
        'before any term authorizes a sender, so all mail fails SPF with permerror.',
    );
  });

  it('what still gets its result before the stop follows the qualifiers through includes (RFC 7208 §5.2)', async () => {
    const zones = zonesOf([
      [Z, 'TXT', 'v=spf1 ~ip4:198.51.100.0/24 -include:_j.spf.test include:_i.spf.test -all'],
      ['_j.spf.test', 'TXT', 'v=spf1 ip4:203.0.113.0/25 -all'],
      ['_i.spf.test', 'TXT', 'v=spf1 -ip4:203.0.113.128/25 ip4:192.0.2.0/24 include:none.spf.test -all'],
    ]);
    const result = await evaluateZones(zones);
    expect(result.permerrorAt).toMatchObject({
      reason: 'no_record',
      term: 'include:none.spf.test',
      path: ['include:_i.spf.test'],
      evaluated_before: [
        { term: '~ip4:198.51.100.0/24', domain: 'spf.test', result: 'softfail' },
        { term: 'ip4:203.0.113.0/25', domain: '_j.spf.test', result: 'fail' },
        { term: 'ip4:192.0.2.0/24', domain: '_i.spf.test', result: 'pass' },
      ],
    });
    const peerResults = (
      await peer(zones, '198.51.100.1', '203.0.113.1', '192.0.2.1', '203.0.113.129', '233.252.0.1')
    ).map((r) => r.result);
    // _i's -ip4 is left out: its match only makes include:_i not match, and the root's -all follows.
    expect(peerResults).toEqual(['softfail', 'fail', 'pass', 'fail', 'permerror']);
  });

  it('a loop: receivers evaluate it again and again until the 11th lookup', async () => {
    const zones = zonesOf([
      [Z, 'TXT', 'v=spf1 ip4:198.51.100.0/24 include:_a.spf.test -all'],
      ['_a.spf.test', 'TXT', 'v=spf1 include:spf.test -all'],
    ]);
    const result = await evaluateZones(zones);
    expect(result).toMatchObject({ lookupCount: 2, permerror: true, valid: false });
    // Odd lookups are the root's include, even ones _a's: the 11th is the root's, reached for the 6th time.
    expect(result.permerrorAt).toMatchObject({
      reason: 'lookup_limit',
      term: 'include:_a.spf.test',
      domain: 'spf.test',
      node: 0,
      lookups: 11,
    });
    expect(result.permerrorAt!.path).toHaveLength(10);
    expect(result.permerrorAt!.evaluated_before).toEqual([
      { term: 'ip4:198.51.100.0/24', domain: 'spf.test', result: 'pass' },
    ]);
    expect(await peer(zones, '198.51.100.1', '192.0.2.1')).toMatchObject([
      { result: 'pass' },
      { result: 'permerror', lookups: 11 },
    ]);
  });

  it.each([
    ['an include target ending in "+all"', 'include:open.spf.test'],
    ['an exists without macros whose name resolves', 'exists:h1.spf.test'],
  ])('%s matches every sender: no receiver reaches a limit after it', async (_, first) => {
    const tenMore = Array.from({ length: 10 }, (_, i) => `a:h${i + 1}.spf.test`).join(' ');
    const zones = zonesOf([
      [Z, 'TXT', `v=spf1 ${first} ${tenMore} -all`],
      ['open.spf.test', 'TXT', 'v=spf1 +all'],
      ...hosts(1, 10),
    ]);
    const result = await evaluateZones(zones);
    // Counted as written (as checkdmarc counts too), but no sender gets past the first term.
    expect(result.lookupCount).toBe(11);
    expect(result.permerrorAt).toBeNull();
    expect((await peer(zones, '233.252.0.1'))[0]!.result).toBe('pass');
  });

  it('past our own work cap of 40 records the count is a lower bound, and says so', async () => {
    const includes = Array.from({ length: 45 }, (_, i) => `include:i${i}.spf.test`).join(' ');
    const rows: Rows = Array.from({ length: 45 }, (_, i) => [`i${i}.spf.test`, 'TXT', 'v=spf1 -all']);
    const result = await evaluateZones(zonesOf([[Z, 'TXT', `v=spf1 ${includes} -all`], ...rows]));
    expect(result).toMatchObject({
      lookupCount: 45,
      lookupCountComplete: false,
      voidLookupCountComplete: false,
    });
    expect(result.tree.filter((n) => n.state === 'not_followed').map((n) => n.domain)).toEqual([
      'i40.spf.test',
      'i41.spf.test',
      'i42.spf.test',
      'i43.spf.test',
      'i44.spf.test',
    ]);
    expect(result.permerrorAt).toMatchObject({ term: 'include:i10.spf.test', lookups: 11 });
    expect(result.summary).toMatch(/^The record needs at least 45 DNS lookups .* Cut 35 lookups\.$/);
  });

  it('past 15 levels deep the count is a lower bound too; the 11th lookup is still found', async () => {
    const chain: Rows = Array.from({ length: 20 }, (_, i) => [
      `i${i + 1}.spf.test`,
      'TXT',
      i + 1 < 20 ? `v=spf1 include:i${i + 2}.spf.test -all` : 'v=spf1 -all',
    ]);
    const result = await evaluateZones(zonesOf([[Z, 'TXT', 'v=spf1 include:i1.spf.test -all'], ...chain]));
    // The root and i1 … i15 are read (16 include terms); i16 is at depth 16.
    expect(result).toMatchObject({ lookupCount: 16, lookupCountComplete: false });
    expect(result.tree.at(-1)).toMatchObject({
      domain: 'i16.spf.test',
      depth: 16,
      state: 'not_followed',
      problem: 'not followed (work cap: 40 records, 15 deep)',
    });
    expect(result.permerrorAt).toMatchObject({
      term: 'include:i11.spf.test',
      domain: 'i10.spf.test',
      lookups: 11,
    });
    expect(result.permerrorAt!.path).toHaveLength(10);
  });
});
