/**
 * The scoring module, by worked example. Each example is also written out in
 * docs/email-security.md, so a reader can follow the same arithmetic.
 */
import { describe, expect, it } from 'vitest';
import {
  gradeFor,
  type ScoringFacts,
  scoreEmailSecurity,
  WEIGHTS,
} from '../../../../src/features/email/score.js';

const perfect: ScoringFacts = {
  exists: true,
  mx: { state: 'present', allResolve: true },
  spf: {
    state: 'evaluated',
    valid: true,
    withinLimits: true,
    permerror: false,
    effectiveAll: '-all',
    record: 'v=spf1 mx -all',
  },
  dmarc: {
    state: 'found',
    effectivePolicy: 'reject',
    testing: false,
    subPoliciesNotWeaker: true,
    hasRua: true,
  },
  dkim: { state: 'found', validKey: true, weakest: 'strong' },
  mtaSts: {
    state: 'policy',
    policy: { version: 'STSv1', mode: 'enforce', max_age: 604800, mx: ['*.x.test'] },
    allMxCovered: true,
  },
  tlsRpt: { state: 'valid' },
  bimi: { state: 'record', recordValid: true, svgValid: true, vmcValid: true, dmarcEnforced: true },
  // Unsigned, as most domains are: DNSSEC is then left out, so the examples below add up as before it counted.
  dnssec: { state: 'insecure', signed: false, bogusHosts: [], hosts: ['mx.x.test'], unknown: false },
};

/** The DNSSEC facts of a signed domain, of a broken chain, of a broken MX host. */
const SIGNED = {
  state: 'secure',
  signed: true,
  bogusHosts: [],
  hosts: ['mx.x.test'],
  unknown: false,
} as const;
const BOGUS = {
  state: 'bogus',
  signed: false,
  bogusHosts: [],
  hosts: ['mx.x.test'],
  unknown: false,
} as const;

function facts(overrides: Partial<{ [K in keyof ScoringFacts]: Partial<ScoringFacts[K]> }>): ScoringFacts {
  const out = { ...perfect } as Record<string, unknown>;
  for (const [key, value] of Object.entries(overrides)) {
    const base = perfect[key as keyof ScoringFacts];
    out[key] = typeof base === 'object' ? { ...base, ...(value as object) } : value;
  }
  return out as unknown as ScoringFacts;
}

const points = (r: ReturnType<typeof scoreEmailSecurity>) =>
  Object.fromEntries(Object.entries(r.checks).map(([id, c]) => [id, `${c.points}/${c.max_points}`]));

describe('weights', () => {
  it('total 100 (issue 5), and DNSSEC 10 where it counts (issue 32)', () => {
    const { dnssec, ...rest } = WEIGHTS;
    expect(Object.values(rest).reduce((a, b) => a + b, 0)).toBe(100);
    expect(WEIGHTS).toEqual({
      dmarc: 35,
      spf: 20,
      dkim: 20,
      mta_sts: 10,
      tls_rpt: 5,
      bimi: 5,
      mx: 5,
      dnssec: 10,
    });
    expect(dnssec).toBe(10);
  });

  it('DNSSEC, by netdiag’s own verdict: signed earns 10, bogus loses 10, unsigned or not checked is left out', () => {
    const dnssec = (d: Partial<ScoringFacts['dnssec']>) =>
      scoreEmailSecurity(facts({ dnssec: d })).checks.dnssec;
    expect(dnssec(SIGNED)).toEqual({
      points: 10,
      max_points: 10,
      breakdown: [
        {
          rule: 'the domain is signed and its MX, SPF and DMARC answers validate: secure 6, bogus 0',
          points: 6,
          max_points: 6,
        },
        {
          rule: 'validating senders can route mail: the MX answer and every MX host’s address and TLSA answers are not bogus',
          points: 4,
          max_points: 4,
        },
      ],
    });
    expect(dnssec(BOGUS)).toMatchObject({ points: 0, max_points: 10 });
    expect(dnssec({})).toEqual({
      points: 0,
      max_points: 0,
      breakdown: [{ rule: 'not signed: left out (see the recommendation)', points: 0, max_points: 0 }],
    });
    expect(dnssec({ state: 'not_checked', unknown: true })).toMatchObject({ points: 0, max_points: 0 });
    expect(dnssec({ state: 'indeterminate', unknown: true })).toMatchObject({ points: 0, max_points: 0 });
    // A signed domain whose MX host list is unknown (MX lookup failed): the routing rule leaves the maximum.
    expect(dnssec({ ...SIGNED, unknown: true })).toMatchObject({ points: 6, max_points: 6 });
  });
});

describe('worked examples', () => {
  it('1. everything right: 100/100 → 100, A', () => {
    const r = scoreEmailSecurity(perfect);
    expect(r).toMatchObject({ earned: 100, possible: 100, uncapped: 100, caps: [], score: 100, grade: 'A' });
  });

  it('2. a typical small business: ~all, quarantine, a 1024-bit key, nothing else: 74/100 → 74, C', () => {
    const r = scoreEmailSecurity(
      facts({
        spf: { effectiveAll: '~all' },
        dmarc: { effectivePolicy: 'quarantine' },
        dkim: { weakest: 'weak' },
        mtaSts: { state: 'none', policy: null, allMxCovered: undefined },
        tlsRpt: { state: 'none' },
        bimi: { state: 'none', recordValid: false, svgValid: undefined, vmcValid: undefined },
      }),
    );
    expect(points(r)).toEqual({
      mx: '5/5',
      spf: '20/20',
      dmarc: '32/35',
      dkim: '17/20',
      mta_sts: '0/10',
      tls_rpt: '0/5',
      bimi: '0/5',
      dnssec: '0/0',
    });
    expect(r).toMatchObject({ earned: 74, possible: 100, score: 74, grade: 'C', caps: [] });
    expect(r.checks.dkim.breakdown).toEqual([
      { rule: 'a valid DKIM key found', points: 15, max_points: 15 },
      {
        rule: 'key strength (weakest key): ≥2048-bit RSA or Ed25519 5, 1024-bit 2',
        points: 2,
        max_points: 5,
      },
    ]);
  });

  it('3. DMARC p=none on an otherwise perfect domain: 88 before the cap, capped at C → 74', () => {
    const r = scoreEmailSecurity(facts({ dmarc: { effectivePolicy: 'none' } }));
    expect(r.checks.dmarc.points).toBe(23);
    expect(r).toMatchObject({ earned: 88, uncapped: 88, score: 74, grade: 'C' });
    expect(r.caps).toEqual([{ check: 'dmarc', max_grade: 'C', max_score: 74, reason: 'DMARC policy none' }]);
  });

  it('4. t=y counts as none for points and caps, even on p=reject', () => {
    const r = scoreEmailSecurity(facts({ dmarc: { effectivePolicy: 'quarantine', testing: true } }));
    expect(r.checks.dmarc.breakdown[1]).toEqual({
      rule: 'effective policy: reject 15, quarantine 12, none or t=y 3',
      points: 3,
      max_points: 15,
    });
    expect(r.caps.map((c) => c.reason)).toEqual(['DMARC in testing mode (t=y)']);
    expect(r.score).toBe(74);
  });

  it('5. a failed DNS lookup leaves the maximum: DKIM error and no MTA-STS → 70/80 = 87.5, rounded half up to 88, B', () => {
    const r = scoreEmailSecurity(
      facts({
        dkim: { state: 'error', validKey: false, weakest: null },
        mtaSts: { state: 'none', policy: null },
      }),
    );
    expect(r.checks.dkim).toEqual({
      points: 0,
      max_points: 0,
      breakdown: [{ rule: 'DNS lookup failed: left out of the maximum', points: 0, max_points: 0 }],
    });
    expect(r).toMatchObject({ earned: 70, possible: 80, uncapped: 88, score: 88, grade: 'B' });
  });

  it('6. no DMARC at all: at most D, even with everything else right (65 → 59)', () => {
    const r = scoreEmailSecurity(
      facts({ dmarc: { state: 'none', effectivePolicy: null, subPoliciesNotWeaker: false, hasRua: false } }),
    );
    expect(r).toMatchObject({ earned: 65, uncapped: 65, score: 59, grade: 'D' });
  });

  it('7. SPF +all: 12 of 20 and capped at C; a permerror and no DMARC together: the lower cap wins', () => {
    const plusAll = scoreEmailSecurity(facts({ spf: { effectiveAll: '+all' } }));
    expect(plusAll).toMatchObject({ earned: 92, score: 74, grade: 'C' });
    expect(plusAll.caps).toEqual([{ check: 'spf', max_grade: 'C', max_score: 74, reason: 'SPF +all' }]);
    const both = scoreEmailSecurity(
      facts({
        spf: { permerror: true, withinLimits: false },
        dmarc: { state: 'none', effectivePolicy: null, subPoliciesNotWeaker: false, hasRua: false },
      }),
    );
    expect(both.caps.map((c) => c.max_score)).toEqual([59, 74]);
    expect(both).toMatchObject({ earned: 53, score: 53, grade: 'D' });
  });

  it('8. a non-sending domain (null MX, v=spf1 -all, DMARC reject without rua): 90/100 → A', () => {
    const r = scoreEmailSecurity(
      facts({
        mx: { state: 'null_mx', allResolve: true },
        spf: { record: 'v=spf1 -all' },
        dmarc: { hasRua: false },
        dkim: { state: 'none', validKey: false, weakest: null },
        mtaSts: { state: 'not_applicable', policy: null },
        tlsRpt: { state: 'not_applicable' },
        bimi: { state: 'none', recordValid: false },
      }),
    );
    expect(r.nonSending).toBe(true);
    expect(points(r)).toEqual({
      mx: '5/5',
      spf: '20/20',
      dmarc: '30/35',
      dkim: '20/20',
      mta_sts: '10/10',
      tls_rpt: '5/5',
      bimi: '0/5',
      dnssec: '0/0',
    });
    expect(r).toMatchObject({ score: 90, grade: 'A' });
  });

  it('9. null MX on a domain that still sends (its SPF lists hosts): MTA-STS and TLS-RPT leave the maximum', () => {
    const r = scoreEmailSecurity(
      facts({
        mx: { state: 'null_mx' },
        mtaSts: { state: 'not_applicable', policy: null },
        tlsRpt: { state: 'not_applicable' },
      }),
    );
    expect(r.nonSending).toBe(false);
    expect(r).toMatchObject({ earned: 85, possible: 85, score: 100 });
  });

  it('10. a domain that does not exist scores 0 of 80 (MTA-STS, TLS-RPT and BIMI do not apply)', () => {
    const r = scoreEmailSecurity(facts({ exists: false }));
    expect(r).toMatchObject({ earned: 0, possible: 80, score: 0, grade: 'F', caps: [] });
  });

  it('11. BIMI without DMARC enforcement earns nothing; an MTA-STS enforce policy with an uncovered MX earns nothing', () => {
    const r = scoreEmailSecurity(facts({ bimi: { dmarcEnforced: false }, mtaSts: { allMxCovered: false } }));
    expect(r.checks.bimi.points).toBe(0);
    expect(r.checks.bimi.breakdown.map((b) => b.rule)).toEqual([
      'BIMI record with a logo (0: DMARC not at enforcement)',
      'SVG logo passes the checks (0: DMARC not at enforcement)',
      'valid VMC (verifies to a Mark Verifying Authority, carries the l= logo) (0: DMARC not at enforcement)',
    ]);
    expect(r.checks.mta_sts.points).toBe(0);
    expect(r.score).toBe(85);
  });

  it('12. MTA-STS testing 6, none 2', () => {
    const mode = (m: 'testing' | 'none') =>
      scoreEmailSecurity(facts({ mtaSts: { policy: { version: 'STSv1', mode: m, max_age: 1, mx: [] } } }))
        .checks.mta_sts.points;
    expect([mode('testing'), mode('none')]).toEqual([6, 2]);
  });
});

describe('DNSSEC worked examples (issue 32)', () => {
  const smallBusiness = {
    spf: { effectiveAll: '~all' as const },
    dmarc: { effectivePolicy: 'quarantine' as const },
    dkim: { weakest: 'weak' as const },
    mtaSts: { state: 'none' as const, policy: null, allMxCovered: undefined },
    tlsRpt: { state: 'none' as const },
    bimi: { state: 'none' as const, recordValid: false, svgValid: undefined, vmcValid: undefined },
  };

  it('13. the small business of example 2, unsigned: DNSSEC 0/0, still 74 of 100 → 74, C (no grade change)', () => {
    const r = scoreEmailSecurity(facts(smallBusiness));
    expect(r.checks.dnssec).toMatchObject({ points: 0, max_points: 0 });
    expect(r).toMatchObject({ earned: 74, possible: 100, score: 74, grade: 'C', caps: [] });
  });

  it('14. the same domain signed: 84 of 110 = 76.4 → 76, B (a strength)', () => {
    const r = scoreEmailSecurity(facts({ ...smallBusiness, dnssec: SIGNED }));
    expect(r).toMatchObject({ earned: 84, possible: 110, uncapped: 76, score: 76, grade: 'B', caps: [] });
  });

  it('15. a perfect domain whose chain of trust is broken: 100 of 110 = 91, capped at D → 59', () => {
    const r = scoreEmailSecurity(facts({ dnssec: BOGUS }));
    expect(r).toMatchObject({ earned: 100, possible: 110, uncapped: 91, score: 59, grade: 'D' });
    expect(r.caps).toEqual([
      {
        check: 'dnssec',
        max_grade: 'D',
        max_score: 59,
        reason: 'DNSSEC bogus: validating resolvers refuse the domain’s MX, SPF or DMARC answers',
      },
    ]);
  });

  it('16. a signed perfect domain with one of two MX hosts bogus: 106 of 110 → 96, A; every host bogus: capped at D', () => {
    const one = scoreEmailSecurity(
      facts({ dnssec: { ...SIGNED, hosts: ['mx1.x.test', 'mx2.x.test'], bogusHosts: ['mx2.x.test'] } }),
    );
    expect(one).toMatchObject({ earned: 106, possible: 110, score: 96, grade: 'A', caps: [] });
    const all = scoreEmailSecurity(facts({ dnssec: { ...SIGNED, bogusHosts: ['mx.x.test'] } }));
    expect(all).toMatchObject({ earned: 106, score: 59, grade: 'D' });
    expect(all.caps.map((c) => c.reason)).toEqual([
      'DNSSEC bogus for every MX host: validating senders cannot deliver',
    ]);
  });

  it('17. an unsigned domain whose only MX host (at a provider) is bogus: 0 of 4, capped at D', () => {
    const r = scoreEmailSecurity(facts({ dnssec: { ...perfect.dnssec, bogusHosts: ['mx.x.test'] } }));
    expect(points(r).dnssec).toBe('0/4');
    expect(r).toMatchObject({ earned: 100, possible: 104, score: 59, grade: 'D' });
  });
});

describe('grades', () => {
  it.each([
    [100, 'A'],
    [90, 'A'],
    [89, 'B'],
    [75, 'B'],
    [74, 'C'],
    [60, 'C'],
    [59, 'D'],
    [40, 'D'],
    [39, 'F'],
    [0, 'F'],
  ])('%i → %s', (score, grade) => {
    expect(gradeFor(score)).toBe(grade);
  });
});
