/**
 * The email-security score: one pure function from what the checks found to
 * points, caps, a 0–100 score and a grade. Every rule below is listed in
 * docs/email-security.md, and the response carries each check's points and
 * per-rule breakdown, so anyone can recompute the score from the response:
 *
 *   score = min(round(100 × Σ points / Σ max_points), lowest cap)
 *
 * Weights (issue 5): DMARC 35, SPF 20, DKIM 20, MTA-STS 10, TLS-RPT 5,
 * BIMI 5, MX 5 — 100 in all. DNSSEC (issue 32) weighs 10, by netdiag's own
 * validation, and counts only where it tells domains apart: a signed domain
 * earns it, a broken chain (bogus) loses it and caps the grade at D, an
 * unsigned domain (most are) is left out, so signing is never a penalty and
 * not signing never moves a grade. A check whose DNS lookup failed
 * (status `error`) has max_points 0: its points leave the maximum rather than
 * count as lost. Checks that do not apply to a domain without mail (null MX) are
 * left out the same way, unless the domain is fully non-sending, which
 * earns their points.
 */
import type { BimiEvaluation } from './bimi.js';
import type { DkimEvaluation } from './dkim.js';
import type { DmarcEvaluation } from './dmarc.js';
import type { DnssecEvaluation } from './dnssec.js';
import type { MtaStsEvaluation } from './mta-sts.js';
import type { MxEvaluation } from './mx.js';
import type { SpfEvaluation } from './spf.js';
import type { TlsRptEvaluation } from './tls-rpt.js';
import type { CheckId } from './types.js';

export const WEIGHTS: Readonly<Record<CheckId, number>> = Object.freeze({
  dmarc: 35,
  spf: 20,
  dkim: 20,
  mta_sts: 10,
  tls_rpt: 5,
  bimi: 5,
  mx: 5,
  dnssec: 10,
});

export type Grade = 'A' | 'B' | 'C' | 'D' | 'F';

/** Lowest score of each grade. */
export const GRADE_FLOORS: readonly { grade: Grade; min: number }[] = [
  { grade: 'A', min: 90 },
  { grade: 'B', min: 75 },
  { grade: 'C', min: 60 },
  { grade: 'D', min: 40 },
  { grade: 'F', min: 0 },
];

/** A cap holds the score to the top of a grade: at most C → 74, at most D → 59. */
const CAP_SCORE: Record<'C' | 'D', number> = { C: 74, D: 59 };

export interface ScoreRule {
  rule: string;
  points: number;
  max_points: number;
}

export interface CheckScore {
  points: number;
  max_points: number;
  breakdown: ScoreRule[];
}

export interface Cap {
  check: CheckId;
  max_grade: 'C' | 'D';
  max_score: number;
  reason: string;
}

export interface ScoringFacts {
  /** false: the domain does not exist (NXDOMAIN); it scores 0. */
  exists: boolean;
  mx: Pick<MxEvaluation, 'state' | 'allResolve'>;
  spf: Pick<SpfEvaluation, 'state' | 'valid' | 'withinLimits' | 'permerror' | 'effectiveAll' | 'record'>;
  dmarc: Pick<DmarcEvaluation, 'state' | 'effectivePolicy' | 'testing' | 'subPoliciesNotWeaker' | 'hasRua'>;
  dkim: Pick<DkimEvaluation, 'state' | 'validKey' | 'weakest'>;
  mtaSts: Pick<MtaStsEvaluation, 'state' | 'policy' | 'allMxCovered'>;
  tlsRpt: Pick<TlsRptEvaluation, 'state'>;
  bimi: Pick<BimiEvaluation, 'state' | 'recordValid' | 'svgValid' | 'vmcValid' | 'dmarcEnforced'>;
  dnssec: Pick<DnssecEvaluation, 'state' | 'signed' | 'unknown'> & {
    bogusHosts: readonly string[];
    hosts: readonly unknown[];
  };
}

export interface ScoreResult {
  checks: Record<CheckId, CheckScore>;
  earned: number;
  possible: number;
  /** round(100 × earned / possible), before caps. */
  uncapped: number;
  caps: Cap[];
  score: number;
  grade: Grade;
  /** Null MX, `v=spf1 -all` and DMARC reject: DKIM, MTA-STS and TLS-RPT are then not applicable and earn full points. */
  nonSending: boolean;
}

/** The domain sends and receives no mail and says so in all three places (RFC 7505, RFC 7208, RFC 9989). */
export function isNonSending(facts: Pick<ScoringFacts, 'mx' | 'spf' | 'dmarc'>): boolean {
  return (
    facts.mx.state === 'null_mx' &&
    facts.spf.state === 'evaluated' &&
    facts.spf.valid &&
    /^v=spf1 +-all *$/i.test(facts.spf.record ?? '') &&
    facts.dmarc.state === 'found' &&
    facts.dmarc.effectivePolicy === 'reject'
  );
}

export function gradeFor(score: number): Grade {
  return GRADE_FLOORS.find((g) => score >= g.min)!.grade;
}

export function scoreEmailSecurity(facts: ScoringFacts): ScoreResult {
  const nonSending = facts.exists && isNonSending(facts);
  const checks: Record<CheckId, CheckScore> = facts.exists
    ? {
        mx: scoreMx(facts.mx),
        spf: scoreSpf(facts.spf),
        dmarc: scoreDmarc(facts.dmarc),
        dkim: nonSending ? full('dkim', 'non-sending domain: DKIM not applicable') : scoreDkim(facts.dkim),
        mta_sts: nonSending
          ? full('mta_sts', 'non-sending domain: MTA-STS not applicable')
          : scoreMtaSts(facts.mtaSts),
        tls_rpt: nonSending
          ? full('tls_rpt', 'non-sending domain: TLS-RPT not applicable')
          : scoreTlsRpt(facts.tlsRpt),
        bimi: scoreBimi(facts.bimi),
        dnssec: scoreDnssec(facts.dnssec),
      }
    : nonexistent();
  const all = Object.values(checks);
  const earned = all.reduce((n, c) => n + c.points, 0);
  const possible = all.reduce((n, c) => n + c.max_points, 0);
  const uncapped = possible > 0 ? Math.round((100 * earned) / possible) : 0;
  const caps = facts.exists ? capsFor(facts) : [];
  const score = Math.min(uncapped, ...caps.map((c) => c.max_score));
  return { checks, earned, possible, uncapped, caps, score, grade: gradeFor(score), nonSending };
}

function capsFor(facts: ScoringFacts): Cap[] {
  const caps: Cap[] = [];
  const cap = (check: CheckId, grade: 'C' | 'D', reason: string) =>
    caps.push({ check, max_grade: grade, max_score: CAP_SCORE[grade], reason });
  if (facts.dmarc.state === 'none') cap('dmarc', 'D', 'no valid DMARC policy');
  if (facts.dmarc.state === 'found' && (facts.dmarc.effectivePolicy === 'none' || facts.dmarc.testing)) {
    cap('dmarc', 'C', facts.dmarc.testing ? 'DMARC in testing mode (t=y)' : 'DMARC policy none');
  }
  if (facts.spf.state === 'evaluated' && facts.spf.permerror) cap('spf', 'C', 'SPF permerror');
  else if (facts.spf.state === 'evaluated' && facts.spf.effectiveAll === '+all') cap('spf', 'C', 'SPF +all');
  const { dnssec } = facts;
  if (dnssec.state === 'bogus') {
    cap('dnssec', 'D', 'DNSSEC bogus: validating resolvers refuse the domain’s MX, SPF or DMARC answers');
  } else if (dnssec.hosts.length > 0 && dnssec.bogusHosts.length === dnssec.hosts.length) {
    cap('dnssec', 'D', 'DNSSEC bogus for every MX host: validating senders cannot deliver');
  }
  return caps;
}

const rule = (name: string, points: number, max: number): ScoreRule => ({
  rule: name,
  points,
  max_points: max,
});

function total(breakdown: ScoreRule[]): CheckScore {
  return {
    points: breakdown.reduce((n, r) => n + r.points, 0),
    max_points: breakdown.reduce((n, r) => n + r.max_points, 0),
    breakdown,
  };
}

/** Left out of the score: a DNS failure (status error) or not applicable. */
function excluded(reason: string): CheckScore {
  return { points: 0, max_points: 0, breakdown: [rule(reason, 0, 0)] };
}

function full(check: CheckId, reason: string): CheckScore {
  return total([rule(reason, WEIGHTS[check], WEIGHTS[check])]);
}

/** NXDOMAIN: nothing can be earned; MTA-STS, TLS-RPT, BIMI and DNSSEC are not applicable to a name that does not exist. */
function nonexistent(): Record<CheckId, CheckScore> {
  const zero = (check: CheckId) => total([rule('the domain does not exist', 0, WEIGHTS[check])]);
  const na = () => excluded('the domain does not exist: not applicable');
  return {
    mx: zero('mx'),
    spf: zero('spf'),
    dmarc: zero('dmarc'),
    dkim: zero('dkim'),
    mta_sts: na(),
    tls_rpt: na(),
    bimi: na(),
    dnssec: na(),
  };
}

const DNS_ERROR = 'DNS lookup failed: left out of the maximum';

export function scoreMx(mx: ScoringFacts['mx']): CheckScore {
  switch (mx.state) {
    case 'error':
      return excluded(DNS_ERROR);
    case 'null_mx':
      return total([rule('null MX: the domain declares it takes no mail', 5, 5)]);
    case 'invalid_null_mx':
      return total([rule('null MX mixed with other MX records (invalid)', 0, 5)]);
    case 'present': {
      const resolves =
        mx.allResolve === undefined
          ? rule('every exchange resolves (unknown: DNS failure, left out)', 0, 0)
          : rule('every exchange resolves to an address', mx.allResolve ? 2 : 0, 2);
      return total([rule('MX records published', 3, 3), resolves]);
    }
    default:
      return total([rule('MX records published', 0, 3), rule('every exchange resolves to an address', 0, 2)]);
  }
}

export function scoreSpf(spf: ScoringFacts['spf']): CheckScore {
  if (spf.state === 'error') return excluded(DNS_ERROR);
  const strictAll = !spf.permerror && (spf.effectiveAll === '-all' || spf.effectiveAll === '~all');
  return total([
    rule('exactly one valid SPF record', spf.state === 'evaluated' && spf.valid ? 8 : 0, 8),
    rule(
      'within the 10-lookup and 2-void-lookup limits',
      spf.state === 'evaluated' && spf.withinLimits ? 4 : 0,
      4,
    ),
    rule('ends in -all or ~all', strictAll ? 8 : 0, 8),
  ]);
}

export function scoreDmarc(dmarc: ScoringFacts['dmarc']): CheckScore {
  if (dmarc.state === 'error') return excluded(DNS_ERROR);
  const found = dmarc.state === 'found';
  const policyPoints = !found
    ? 0
    : dmarc.testing
      ? 3
      : { reject: 15, quarantine: 12, none: 3 }[dmarc.effectivePolicy ?? 'none'];
  return total([
    rule('one valid DMARC record applies', found ? 10 : 0, 10),
    rule('effective policy: reject 15, quarantine 12, none or t=y 3', policyPoints, 15),
    rule('sp and np not weaker than p', found && dmarc.subPoliciesNotWeaker ? 5 : 0, 5),
    rule('aggregate reports (rua) requested', found && dmarc.hasRua ? 5 : 0, 5),
  ]);
}

export function scoreDkim(dkim: ScoringFacts['dkim']): CheckScore {
  if (dkim.state === 'error') return excluded(DNS_ERROR);
  const strength = dkim.weakest === 'strong' ? 5 : dkim.weakest === 'weak' ? 2 : 0;
  return total([
    rule('a valid DKIM key found', dkim.validKey ? 15 : 0, 15),
    rule('key strength (weakest key): ≥2048-bit RSA or Ed25519 5, 1024-bit 2', strength, 5),
  ]);
}

export function scoreMtaSts(sts: ScoringFacts['mtaSts']): CheckScore {
  if (sts.state === 'error') return excluded(DNS_ERROR);
  if (sts.state === 'not_applicable') return excluded('null MX: MTA-STS not applicable');
  const name = 'policy: enforce covering every MX 10, testing 6, none 2';
  if (sts.state !== 'policy') return total([rule(name, 0, 10)]);
  const mode = sts.policy?.mode;
  if (mode === 'enforce' && sts.allMxCovered === undefined)
    return excluded('MX hosts unknown (DNS failure): left out');
  const points =
    mode === 'enforce' ? (sts.allMxCovered ? 10 : 0) : mode === 'testing' ? 6 : mode === 'none' ? 2 : 0;
  return total([rule(name, points, 10)]);
}

export function scoreTlsRpt(rpt: ScoringFacts['tlsRpt']): CheckScore {
  if (rpt.state === 'error') return excluded(DNS_ERROR);
  if (rpt.state === 'not_applicable') return excluded('null MX: TLS-RPT not applicable');
  return total([rule('one valid TLS-RPT record', rpt.state === 'valid' ? 5 : 0, 5)]);
}

const SIGNED = 'the domain is signed and its MX, SPF and DMARC answers validate: secure 6, bogus 0';
const ROUTABLE =
  'validating senders can route mail: the MX answer and every MX host’s address and TLSA answers are not bogus';

/**
 * Counted only where DNSSEC tells domains apart: a signed domain (the MX answer secure) earns
 * 10, a broken chain loses what it touches; an unsigned domain with nothing broken is left out
 * (0 of 0), so its score is what it would be without this check.
 */
export function scoreDnssec(dnssec: ScoringFacts['dnssec']): CheckScore {
  if (dnssec.state === 'not_checked') return excluded('DNSSEC not checked on this instance: left out');
  if (dnssec.state === 'bogus') return total([rule(SIGNED, 0, 6), rule(ROUTABLE, 0, 4)]);
  const bogusHosts = dnssec.bogusHosts.length > 0;
  if (dnssec.state === 'indeterminate' && !bogusHosts)
    return excluded('DNSSEC validation did not complete: left out');
  if (!dnssec.signed && !bogusHosts) return excluded('not signed: left out (see the recommendation)');
  return total([
    dnssec.signed ? rule(SIGNED, 6, 6) : rule(`${SIGNED} (not signed: left out)`, 0, 0),
    bogusHosts
      ? rule(ROUTABLE, 0, 4)
      : dnssec.unknown
        ? rule(`${ROUTABLE} (unknown: left out)`, 0, 0)
        : rule(ROUTABLE, 4, 4),
  ]);
}

export function scoreBimi(bimi: ScoringFacts['bimi']): CheckScore {
  if (bimi.state === 'error') return excluded(DNS_ERROR);
  const counted = bimi.state === 'record' && bimi.dmarcEnforced !== false;
  const prerequisite =
    bimi.state === 'record' && bimi.dmarcEnforced === false ? ' (0: DMARC not at enforcement)' : '';
  const part = (name: string, value: boolean | undefined, max: number) =>
    counted && value === undefined
      ? rule(`${name} (unknown: DNS failure, left out)`, 0, 0)
      : rule(`${name}${prerequisite}`, counted && value ? max : 0, max);
  return total([
    part('BIMI record with a logo', bimi.recordValid, 2),
    part('SVG logo passes the checks', bimi.svgValid, 2),
    // Valid as receivers judge it (bimi-vmc.ts): chained to a Mark Verifying Authority root, carrying the l= logo.
    part('valid VMC (verifies to a Mark Verifying Authority, carries the l= logo)', bimi.vmcValid, 1),
  ]);
}
