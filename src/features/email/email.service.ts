/**
 * GET /api/email-security: normalize the input, run every check with all
 * independent DNS lookups in flight at once (the SPF tree one level at a
 * time), fetch the MTA-STS policy and BIMI assets through outbound safety,
 * validate with netdiag's own DNSSEC validator, score, and shape the answer.
 * The whole answer is cached 300 s, keyed on the normalized domain and the set
 * of selectors (sorted: `a,b` and `b,a` are one question, one entry, one
 * answer); an answer with a failed lookup is not.
 *
 * A domain whose chain of trust is broken is a diagnosis, not an outage:
 * behind a validating resolver its every lookup fails (SERVFAIL), so its
 * records are read as its servers publish them (mail-dns.ts, from netdiag's
 * own resolution), checked as published, and the DNSSEC check says where the
 * chain breaks.
 */
import { type CachedLoader, type Freshness, freshness } from '../../cache/cached.js';
import { badInput } from '../../errors.js';
import { normalizeDomain } from '../../net/names.js';
import type { DnsResolver } from '../../providers/dns/resolver.js';
import { type DnssecValidator, RequestVerdicts } from '../dnssec/verdicts.js';
import { LOOKUP_LIMIT, VOID_LOOKUP_LIMIT } from '../spf/spf-types.js';
import { spfPermerrorView, spfTreeView } from '../spf/tree-view.js';
import { discoverBimi, evaluateBimi, type MarkRoots } from './bimi.js';
import { evaluateDkim } from './dkim.js';
import { parseSelectors, selectorsToTest } from './dkim-selectors.js';
import { evaluateDmarc } from './dmarc.js';
import { evaluateDnssec } from './dnssec.js';
import type {
  EmailCheck,
  EmailCheckDetails,
  EmailSecurityQuery,
  EmailSecurityResponse,
} from './email.schema.js';
import { createMailDns } from './mail-dns.js';
import {
  evaluateMtaSts,
  MTA_STS_MAX_BYTES,
  type MtaStsEvaluation,
  parseMtaStsRecord,
  policyUrl,
} from './mta-sts.js';
import { evaluateMx } from './mx.js';
import { type RecommendationInput, recommend } from './recommendations.js';
import type { ResourceFetcher } from './resource-fetcher.js';
import { type CheckScore, scoreEmailSecurity } from './score.js';
import { evaluateSpf } from './spf.js';
import { evaluateTlsRpt, type TlsRptEvaluation } from './tls-rpt.js';
import type { CheckId, CheckStatus, Finding } from './types.js';

/** Seconds a complete answer is reused. */
export const EMAIL_SECURITY_TTL = 300;

export interface EmailSecurityInput {
  domain: string;
  /** The caller's DKIM selectors, normalized. */
  selectors: string[];
}

export interface EmailSecurityDeps {
  dns: Pick<DnsResolver, 'resolve'>;
  fetcher: ResourceFetcher;
  clock: () => number;
  /** netdiag's own DNSSEC validation (features/dnssec/verdicts.ts). */
  dnssec: DnssecValidator;
  /** The Mark Verifying Authority roots BIMI VMCs must chain to; default the bundled list. */
  markRoots?: MarkRoots;
  /** The MX hosts' blocklist listings (features/blocklists/mx-listings.ts); none asked without it. */
  mxListings?: (hosts: readonly { exchange: string; addresses: readonly string[] }[]) => Promise<Finding[]>;
}

/** Validates `domain` and `selector`, or throws a 400 naming the parameter. */
export function parseEmailSecurityInput(query: EmailSecurityQuery): EmailSecurityInput {
  const domain = normalizeDomain(query.domain, { param: 'domain' });
  const parsed = parseSelectors(query.selector);
  if ('error' in parsed) throw badInput('selector', parsed.error);
  for (const selector of parsed.selectors) {
    // The DKIM owner name must still be a valid DNS name (RFC 1035 §2.3.4: 253 characters).
    if (`${selector}._domainkey.${domain}`.length > 253)
      throw badInput('selector', `"${selector}" is too long for ${domain}`);
  }
  return { domain, selectors: parsed.selectors };
}

export async function lookupEmailSecurity(
  deps: EmailSecurityDeps & { loader: Pick<CachedLoader, 'load'> },
  query: EmailSecurityQuery,
): Promise<{ body: EmailSecurityResponse; cache: Freshness }> {
  const parsed = parseEmailSecurityInput(query);
  // The caller's selectors as a set: every order of one set is one cache entry, and the answer
  // (the order selectors are tried and listed in, BIMI's first match) is the same for all of them.
  const input = { ...parsed, selectors: [...parsed.selectors].sort() };
  const key = `email-security:${input.domain}:${input.selectors.join(',')}`;
  const result = await deps.loader.load(key, async () => {
    const body = await checkEmailSecurity(deps, input);
    // A check left out for a DNS failure is a partial failure: never cached (docs/architecture.md §1).
    const partial = body.checks.some((c) => c.status === 'error');
    return { value: body, ttl: partial ? 0 : EMAIL_SECURITY_TTL };
  });
  return { body: result.value, cache: freshness(result) };
}

export async function checkEmailSecurity(
  deps: EmailSecurityDeps,
  input: EmailSecurityInput,
): Promise<EmailSecurityResponse> {
  const { domain } = input;
  const verdicts = new RequestVerdicts(deps.dnssec);
  const dns = createMailDns(deps.dns, { verdicts, readBogus: true });
  const tested = selectorsToTest(input.selectors);
  const bimiSelectors = [...new Set([...input.selectors, 'default'])];
  // Whether the domain takes mail at all decides whether the MTA-STS policy is worth fetching;
  // the MX question is shared (asked once) with the MX check.
  const receivesMail = dns
    .mx(domain)
    .then(
      (mx) =>
        mx.kind !== 'answer' ||
        (mx.rcode === 'NOERROR' && !(mx.records.length === 1 && mx.records[0]!.exchange === '.')),
    );

  const [mx, spf, dmarc, dkim, dnssec, sts, tlsTxt, bimiInput] = await Promise.all([
    evaluateMx(domain, dns),
    evaluateSpf(domain, dns),
    evaluateDmarc(domain, dns),
    evaluateDkim(domain, tested, dns),
    evaluateDnssec(domain, dns, verdicts),
    (async () => {
      const [txt, mail] = await Promise.all([dns.txt(`_mta-sts.${domain}`), receivesMail]);
      const wanted = mail && txt.kind === 'answer' && parseMtaStsRecord(txt.records).state === 'ok';
      const fetched = wanted
        ? await deps.fetcher({ url: policyUrl(domain), maxBytes: MTA_STS_MAX_BYTES })
        : undefined;
      return { txt, fetched };
    })(),
    dns.txt(`_smtp._tls.${domain}`),
    discoverBimi(domain, bimiSelectors, dns, deps.fetcher),
  ]);

  const stats = dns.stats();
  // Nothing answered at all (not even a bogus answer read by netdiag's engine): every resolver is
  // failing, and that is a 502 with providers_tried.
  if (stats.answered === 0 && stats.firstFailure) {
    throw stats.firstFailure;
  }

  const exists = mx.state !== 'nxdomain';
  const nullMx = mx.state === 'null_mx';
  const mxHosts =
    mx.state === 'present' ? mx.hosts.map((h) => h.exchange) : mx.state === 'none' ? [domain] : undefined;
  const mtaSts =
    nullMx || !exists ? notApplicableSts(domain, exists) : evaluateMtaSts({ domain, ...sts, mxHosts });
  const tlsRpt = nullMx || !exists ? notApplicableTlsRpt(exists) : evaluateTlsRpt(domain, tlsTxt);
  const dmarcEnforced =
    dmarc.state === 'found'
      ? dmarc.effectivePolicy === 'quarantine' || dmarc.effectivePolicy === 'reject'
      : dmarc.state === 'none'
        ? false
        : undefined;
  const bimi = evaluateBimi({
    domain,
    ...bimiInput,
    dmarcEnforced,
    now: deps.clock(),
    markRoots: deps.markRoots,
  });

  const score = scoreEmailSecurity({ exists, mx, spf, dmarc, dkim, mtaSts, tlsRpt, bimi, dnssec });
  // Listings are findings of the MX part, outside the score (docs/email-security.md).
  const listings = deps.mxListings && mx.state === 'present' ? await deps.mxListings(mx.hosts) : [];
  const mxWithListings = listings.length > 0 ? { ...mx, findings: [...mx.findings, ...listings] } : mx;
  const { checks, details } = buildChecks({
    domain,
    exists,
    score,
    mx: mxWithListings,
    spf,
    dmarc,
    dkim,
    mtaSts,
    tlsRpt,
    bimi,
    dnssec,
  });
  return {
    domain,
    score: score.score,
    grade: score.grade,
    scoring: {
      earned: score.earned,
      possible: score.possible,
      uncapped_score: score.uncapped,
      caps: score.caps,
      non_sending: score.nonSending,
      formula:
        'score = min(round(100 × Σ points / Σ max_points), every cap’s max_score); grade A ≥ 90, B ≥ 75, C ≥ 60, D ≥ 40, else F',
    },
    checks,
    details,
    mx: mx.hosts.map((h) => ({ priority: h.priority, exchange: h.exchange, addresses: h.addresses })),
    tested_dkim_selectors: dkim.tested,
    recommendations: recommend({ domain, exists, score, mx, spf, dmarc, dkim, mtaSts, tlsRpt, bimi, dnssec }),
    dns_queries: stats.queries,
    checked_at: new Date(deps.clock()).toISOString(),
    ...dns.attribution(),
  };
}

function notApplicableSts(domain: string, exists: boolean): MtaStsEvaluation {
  return {
    state: 'not_applicable',
    record: null,
    id: null,
    policy_url: policyUrl(domain),
    http_status: null,
    policy: null,
    policy_text: null,
    allMxCovered: undefined,
    uncovered_mx: [],
    status: 'not_applicable',
    summary: exists
      ? 'Null MX: the domain receives no mail, so MTA-STS does not apply.'
      : 'The domain does not exist, so MTA-STS does not apply.',
    findings: [],
  };
}

function notApplicableTlsRpt(exists: boolean): TlsRptEvaluation {
  return {
    state: 'not_applicable',
    record: null,
    rua: [],
    status: 'not_applicable',
    summary: exists
      ? 'Null MX: the domain receives no mail, so TLS-RPT does not apply.'
      : 'The domain does not exist, so TLS-RPT does not apply.',
    findings: [],
  };
}

/** Every evaluation the response is built from: the same facts the recommendations are drawn from. */
type CheckParts = RecommendationInput;

interface Presented {
  status: CheckStatus;
  summary: string;
  findings: Finding[];
}

/**
 * What a check says, after the two domain-wide overrides: a domain that does
 * not exist (every check fails or does not apply), and a non-sending domain
 * (DKIM, MTA-STS and TLS-RPT do not apply and earn their points).
 */
function presented(id: CheckId, own: Presented, parts: CheckParts): Presented {
  if (!parts.exists && id !== 'mx') {
    const na = id === 'mta_sts' || id === 'tls_rpt' || id === 'bimi' || id === 'dnssec';
    return {
      status: na ? 'not_applicable' : 'fail',
      summary: `${parts.domain} does not exist (NXDOMAIN)${na ? ', so this does not apply' : ''}.`,
      findings: [],
    };
  }
  if (parts.score.nonSending && (id === 'dkim' || id === 'mta_sts' || id === 'tls_rpt')) {
    return {
      status: 'not_applicable',
      summary: 'Non-sending domain (null MX, "v=spf1 -all", DMARC reject): not applicable, full points.',
      findings: [
        {
          severity: 'info',
          message: 'The domain neither sends nor receives mail and says so in MX, SPF and DMARC.',
          rfc: 'RFC 7505, RFC 7208, RFC 9989',
        },
      ],
    };
  }
  return { status: own.status, summary: own.summary, findings: own.findings };
}

function common(id: CheckId, own: Presented, record: string | null, parts: CheckParts) {
  const score: CheckScore = parts.score.checks[id];
  return {
    ...presented(id, own, parts),
    points: score.points,
    max_points: score.max_points,
    breakdown: score.breakdown,
    ...(record !== null ? { record } : {}),
  };
}

function buildChecks(parts: CheckParts): { checks: EmailCheck[]; details: EmailCheckDetails } {
  const { mx, spf, dmarc, dkim, mtaSts, tlsRpt, bimi, dnssec } = parts;
  const checks: EmailCheck[] = [
    { id: 'mx', ...common('mx', mx, null, parts) },
    { id: 'spf', ...common('spf', spf, spf.record, parts) },
    { id: 'dmarc', ...common('dmarc', dmarc, dmarc.record, parts) },
    { id: 'dkim', ...common('dkim', dkim, dkim.record, parts) },
    { id: 'mta_sts', ...common('mta_sts', mtaSts, mtaSts.record, parts) },
    { id: 'tls_rpt', ...common('tls_rpt', tlsRpt, tlsRpt.record, parts) },
    { id: 'bimi', ...common('bimi', bimi, bimi.record, parts) },
    { id: 'dnssec', ...common('dnssec', dnssec, null, parts) },
  ];
  const details: EmailCheckDetails = {
    mx: { state: mx.state, implicit_mx_addresses: mx.implicitAddresses },
    spf: {
      state: spf.state,
      record_count: spf.recordCount,
      valid: spf.valid,
      within_limits: spf.withinLimits,
      permerror: spf.permerror,
      lookup_count: spf.lookupCount,
      lookup_limit: LOOKUP_LIMIT,
      lookup_count_complete: spf.lookupCountComplete,
      void_lookup_count: spf.voidLookupCount,
      void_lookup_limit: VOID_LOOKUP_LIMIT,
      void_lookup_count_complete: spf.voidLookupCountComplete,
      permerror_at: spfPermerrorView(spf.permerrorAt),
      effective_all: spf.effectiveAll,
      tree: spfTreeView(spf.tree),
    },
    dmarc: {
      state: dmarc.state,
      record_domain: dmarc.recordDomain,
      inherited: dmarc.inherited,
      policy_tag: dmarc.policyTag,
      requested_policy: dmarc.requestedPolicy,
      effective_policy: dmarc.effectivePolicy,
      testing: dmarc.testing,
      sub_policies_not_weaker: dmarc.subPoliciesNotWeaker,
      has_rua: dmarc.hasRua,
      tags: dmarc.parsed?.tags ?? [],
      destinations: dmarc.destinations,
      lookups: dmarc.lookups,
    },
    dkim: { state: dkim.state, weakest: dkim.weakest, selectors: dkim.selectors },
    mta_sts: {
      state: mtaSts.state,
      id: mtaSts.id,
      policy_url: mtaSts.policy_url,
      http_status: mtaSts.http_status,
      policy: mtaSts.policy,
      policy_text: mtaSts.policy_text,
      all_mx_covered: mtaSts.allMxCovered ?? null,
      uncovered_mx: mtaSts.uncovered_mx,
    },
    tls_rpt: { state: tlsRpt.state, rua: tlsRpt.rua },
    bimi: {
      state: bimi.state,
      selector: bimi.selector,
      record_domain: bimi.recordDomain,
      inherited: bimi.recordDomain !== null && bimi.recordDomain !== parts.domain,
      location: bimi.location,
      authority: bimi.authority,
      dmarc_enforced: bimi.dmarcEnforced ?? null,
      svg: bimi.svg,
      vmc: bimi.vmc,
    },
    dnssec: {
      state: dnssec.state,
      reason: dnssec.reason,
      answers: dnssec.answers,
      mx_hosts: dnssec.hosts,
      dane: dnssec.dane,
    },
  };
  return { checks, details };
}
