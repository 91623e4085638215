/**
 * What to fix, most valuable first. Pure: built from the check evaluations
 * and their scores. Priority: high when the check caps the grade or leaves
 * 10 or more points on the table, medium for 4 or more, low otherwise;
 * within a priority, a check that caps the grade first (nothing else lifts
 * the score past its cap), then more missing points, then the heavier check.
 */

import { LOOKUP_LIMIT, VOID_LOOKUP_LIMIT } from '../spf/spf-types.js';
import type { BimiEvaluation } from './bimi.js';
import type { DkimEvaluation } from './dkim.js';
import type { DmarcEvaluation } from './dmarc.js';
import type { DnssecEvaluation } from './dnssec.js';
import type { MtaStsEvaluation } from './mta-sts.js';
import type { MxEvaluation } from './mx.js';
import { type ScoreResult, WEIGHTS } from './score.js';
import type { SpfEvaluation } from './spf.js';
import type { TlsRptEvaluation } from './tls-rpt.js';
import type { CheckId } from './types.js';

export type RecommendationPriority = 'high' | 'medium' | 'low';

export interface Recommendation {
  check: CheckId;
  priority: RecommendationPriority;
  text: string;
}

export interface RecommendationInput {
  domain: string;
  exists: boolean;
  score: ScoreResult;
  mx: MxEvaluation;
  spf: SpfEvaluation;
  dmarc: DmarcEvaluation;
  dkim: DkimEvaluation;
  mtaSts: MtaStsEvaluation;
  tlsRpt: TlsRptEvaluation;
  bimi: BimiEvaluation;
  dnssec: DnssecEvaluation;
}

const RANK: Record<RecommendationPriority, number> = { high: 0, medium: 1, low: 2 };

export function recommend(input: RecommendationInput): Recommendation[] {
  const d = input.domain;
  if (!input.exists) {
    return [
      {
        check: 'mx',
        priority: 'high',
        text: `${d} does not exist in the DNS: check the spelling, or register and configure it.`,
      },
    ];
  }
  const texts: { check: CheckId; text: string }[] = [];
  const add = (check: CheckId, text: string) => texts.push({ check, text });

  adviseDmarc(input.dmarc, d, add);
  adviseSpf(input.spf, d, add);
  // A domain that sends no mail needs no signing, transport policy, logo or DANE.
  if (!input.score.nonSending) {
    adviseDkim(input.dkim, add);
    adviseMtaSts(input.mtaSts, d, add);
    adviseTlsRpt(input.tlsRpt, d, add);
    adviseBimi(input.bimi, add);
    adviseDnssec(input.dnssec, d, add);
  }
  adviseMx(input.mx, add);

  const capped = new Set(input.score.caps.map((c) => c.check));
  const missing = (check: CheckId) => input.score.checks[check].max_points - input.score.checks[check].points;
  const priority = (check: CheckId): RecommendationPriority =>
    capped.has(check) || missing(check) >= 10 ? 'high' : missing(check) >= 4 ? 'medium' : 'low';
  return texts
    .map((t, order) => ({ ...t, priority: priority(t.check), order }))
    .sort(
      (a, b) =>
        RANK[a.priority] - RANK[b.priority] ||
        // A cap holds the score whatever else is fixed: lift it first.
        Number(capped.has(b.check)) - Number(capped.has(a.check)) ||
        missing(b.check) - missing(a.check) ||
        WEIGHTS[b.check] - WEIGHTS[a.check] ||
        a.order - b.order,
    )
    .map(({ check, priority: p, text }) => ({ check, priority: p, text }));
}

type Add = (check: CheckId, text: string) => void;

function adviseDmarc(dmarc: DmarcEvaluation, d: string, add: Add): void {
  if (dmarc.state === 'error') return;
  if (dmarc.state === 'none') {
    add(
      'dmarc',
      `Publish a DMARC record: TXT at _dmarc.${d} "v=DMARC1; p=quarantine; rua=mailto:dmarc-reports@${d}", then move to p=reject once the reports show your own mail passes.`,
    );
    return;
  }
  if (dmarc.testing)
    add(
      'dmarc',
      'Remove t=y from the DMARC record: in testing mode receivers apply a weaker policy than the one you publish.',
    );
  if (dmarc.requestedPolicy === 'none') {
    add(
      'dmarc',
      'Move DMARC from p=none to p=quarantine and then p=reject once aggregate reports show your legitimate mail passes SPF or DKIM.',
    );
  } else if (dmarc.requestedPolicy === 'quarantine') {
    add('dmarc', 'Raise the DMARC policy from quarantine to reject.');
  }
  if (!dmarc.subPoliciesNotWeaker)
    add('dmarc', 'Make sp= and np= at least as strict as p= (or remove them so subdomains inherit p=).');
  if (!dmarc.hasRua)
    add('dmarc', `Add rua=mailto:dmarc-reports@${d} to the DMARC record to receive aggregate reports.`);
  for (const dest of dmarc.destinations.filter((x) => x.authorized === false)) {
    add(
      'dmarc',
      `Ask ${dest.domain} to publish TXT "v=DMARC1" at ${dest.authorization_name}, or reports addressed there are not sent.`,
    );
  }
}

function adviseSpf(spf: SpfEvaluation, d: string, add: Add): void {
  if (spf.state === 'error') return;
  if (spf.state === 'none') {
    add(
      'spf',
      `Publish one SPF record at ${d} listing every service that sends as ${d} and ending in -all, for example "v=spf1 mx -all".`,
    );
    return;
  }
  if (spf.recordCount > 1) {
    add(
      'spf',
      `Merge the ${spf.recordCount} SPF records into one: with several, receivers treat SPF as a permerror.`,
    );
    return;
  }
  if (!spf.valid)
    add('spf', 'Fix the SPF errors listed in the findings: as published, the record is a permerror.');
  if (spf.lookupCount > LOOKUP_LIMIT) {
    add(
      'spf',
      `Cut the SPF record to ${LOOKUP_LIMIT} DNS-querying terms or fewer (it has ${spf.lookupCountComplete ? '' : 'at least '}${spf.lookupCount}, ${spf.lookupCount - LOOKUP_LIMIT} too many): drop unused includes and replace a/mx with ip4/ip6 where the addresses are stable.`,
    );
  }
  if (spf.voidLookupCount > VOID_LOOKUP_LIMIT) {
    add(
      'spf',
      `Remove SPF terms that point at names with no records (${spf.voidLookupCount} void lookups; at most ${VOID_LOOKUP_LIMIT} are allowed).`,
    );
  }
  if (spf.effectiveAll !== '-all' && spf.effectiveAll !== '~all') {
    add('spf', 'End the SPF record with -all (or ~all) so mail from unlisted hosts fails SPF.');
  }
}

function adviseDkim(dkim: DkimEvaluation, add: Add): void {
  if (dkim.state === 'error') return;
  if (dkim.state === 'none') {
    add(
      'dkim',
      "Sign outgoing mail with DKIM (2048-bit RSA or Ed25519) and publish the key; if you already sign, name your selector (the site's DKIM selector box, the API's selector parameter, the CLI's --selector) so it can be checked.",
    );
    return;
  }
  if (!dkim.validKey)
    add('dkim', 'Publish a usable DKIM key: none of the records found holds one (see findings).');
  if (dkim.weakest === 'too_short')
    add('dkim', 'Replace the DKIM key shorter than 1024 bits now: receivers must ignore its signatures.');
  else if (dkim.weakest === 'weak')
    add('dkim', 'Rotate the 1024-bit DKIM key to a 2048-bit RSA key (or add an Ed25519 key).');
}

function adviseMtaSts(sts: MtaStsEvaluation, d: string, add: Add): void {
  if (sts.state === 'error' || sts.state === 'not_applicable') return;
  if (sts.state === 'none') {
    add(
      'mta_sts',
      `Publish MTA-STS: TXT at _mta-sts.${d} "v=STSv1; id=<version>" and a policy at ${sts.policy_url}; start in testing mode, then enforce.`,
    );
    return;
  }
  if (sts.state === 'invalid') {
    add('mta_sts', 'Fix the MTA-STS record or policy (see findings): as published, senders ignore it.');
    return;
  }
  if (sts.uncovered_mx.length > 0) {
    add(
      'mta_sts',
      `Add mx patterns for ${sts.uncovered_mx.join(', ')} to the MTA-STS policy (and change its id), or senders that enforce it cannot deliver there.`,
    );
  }
  if (sts.policy?.mode === 'testing')
    add(
      'mta_sts',
      'Switch the MTA-STS policy from testing to enforce once TLS-RPT reports show no failures.',
    );
  if (sts.policy?.mode === 'none') add('mta_sts', 'Set the MTA-STS policy mode to testing, then enforce.');
}

function adviseTlsRpt(rpt: TlsRptEvaluation, d: string, add: Add): void {
  if (rpt.state === 'none') {
    add(
      'tls_rpt',
      `Publish TXT at _smtp._tls.${d} "v=TLSRPTv1; rua=mailto:tls-reports@${d}" to learn about failed TLS deliveries.`,
    );
  } else if (rpt.state === 'invalid') {
    add('tls_rpt', 'Fix the TLS-RPT record (see findings): as published, senders send no reports.');
  }
}

function adviseBimi(bimi: BimiEvaluation, add: Add): void {
  if (bimi.state === 'error' || bimi.state === 'declined') return;
  if (bimi.state === 'none') {
    add(
      'bimi',
      'Optional: publish a BIMI record with an SVG Tiny PS logo (and a VMC) to show your brand in supporting inboxes; it needs DMARC at quarantine or reject.',
    );
    return;
  }
  if (bimi.state === 'invalid') {
    add('bimi', 'Fix the BIMI record (see findings).');
    return;
  }
  if (bimi.dmarcEnforced === false)
    add('bimi', 'BIMI logos are shown only with DMARC at quarantine or reject: fix DMARC first.');
  if (bimi.svgValid === false) {
    add(
      'bimi',
      'Fix the BIMI logo: SVG Tiny PS (version 1.2, baseProfile tiny-ps), a <title>, at most 32 KB, no scripts or external references.',
    );
  }
  if (bimi.vmcValid === false)
    add(
      'bimi',
      bimi.vmc
        ? 'Fix the VMC at a= (see findings): receivers accept one that chains to a Mark Verifying Authority and carries the same SVG as l=.'
        : 'Obtain a Verified Mark Certificate and publish it at a= so Gmail and Apple Mail show the logo.',
    );
}

function adviseMx(mx: MxEvaluation, add: Add): void {
  if (mx.state === 'none')
    add('mx', 'Publish MX records, or a null MX ("0 .") if the domain receives no mail.');
  if (mx.state === 'invalid_null_mx')
    add('mx', 'Remove either the null MX or the other MX records: they contradict each other.');
  if (mx.state === 'present' && mx.allResolve === false) {
    const broken = mx.hosts.filter((h) => h.addresses.length === 0).map((h) => h.exchange);
    add('mx', `Give every MX exchange an A or AAAA record (missing: ${broken.join(', ')}).`);
  }
}

/**
 * A broken chain first (its cap makes it high priority); signing an unsigned domain is optional
 * advice, low priority, as it costs no points; then what DANE needs.
 */
function adviseDnssec(dnssec: DnssecEvaluation, d: string, add: Add): void {
  if (dnssec.state === 'not_checked') return;
  const broken = dnssec.answers.find((a) => a.status === 'bogus');
  if (broken?.reason) {
    add(
      'dnssec',
      `Repair DNSSEC for ${d} now: its chain of trust is broken at ${broken.reason.zone} (${broken.reason.detail}). Re-sign the zone, or correct the DS record at the registrar (remove it if the zone is no longer signed); until then validating resolvers refuse ${d}'s MX, SPF and DMARC answers.`,
    );
  }
  for (const h of dnssec.hosts) {
    const reason = h.addresses === 'bogus' ? h.addresses_reason : h.tlsa === 'bogus' ? h.tlsa_reason : null;
    // Broken where the domain is: repairing the domain repairs it.
    if (!reason || reason.zone === broken?.reason?.zone) continue;
    add(
      'dnssec',
      `Have DNSSEC repaired for MX host ${h.host} (broken at ${reason.zone}: ${reason.detail}): validating senders ${h.addresses === 'bogus' ? 'cannot resolve it' : 'defer mail to it (DANE)'}.`,
    );
  }
  if (dnssec.state === 'insecure') {
    add(
      'dnssec',
      `Optional: sign ${d} with DNSSEC (your DNS host signs the zone, your registrar publishes its DS record), so validating receivers can trust your MX, SPF and DMARC answers and DANE becomes possible.`,
    );
  }
  const names = (pick: (h: DnssecEvaluation['hosts'][number]) => boolean) =>
    dnssec.hosts.filter(pick).map((h) => h.tlsa_name);
  const unsigned = names((h) => h.tlsa === 'insecure');
  if (unsigned.length > 0) {
    add(
      'dnssec',
      `Sign the zone holding ${unsigned.join(', ')}, or remove those TLSA records: without DNSSEC every sender ignores them.`,
    );
  }
  const unusable = names((h) => h.tlsa === 'secure' && h.records.every((r) => !r.usable));
  if (unusable.length > 0) {
    add(
      'dnssec',
      `Replace the TLSA records at ${unusable.join(', ')} with DANE-EE(3) or DANE-TA(2) records, for example "3 1 1" and the SHA-256 digest of the server's public key.`,
    );
  }
  // DANE is possible only where the MX and address answers are secure: hosts in the domain's own signed zones.
  const possible = dnssec.signed ? names((h) => h.addresses === 'secure' && h.tlsa === 'none') : [];
  if (possible.length > 0) {
    add(
      'dnssec',
      `Optional: publish TLSA records at ${possible.join(', ')} (for example "3 1 1" and the SHA-256 digest of each server's public key), so DANE-aware senders insist on authenticated TLS to your MX hosts.`,
    );
  }
}
