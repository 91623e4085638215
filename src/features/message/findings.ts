/**
 * What a person reads of a message's analysis: the findings (what is wrong or
 * worth knowing, with the rule it rests on) and the verdict sentence. Pure.
 */
import type { MessageAnalysis } from './message.schema.js';

export type AnalysisParts = Pick<
  MessageAnalysis,
  | 'headers_only'
  | 'from'
  | 'envelope'
  | 'dkim'
  | 'arc'
  | 'spf'
  | 'dmarc'
  | 'received'
  | 'authentication_results'
>;
type Finding = MessageAnalysis['findings'][number];

const SEVERITY = ['critical', 'high', 'medium', 'low', 'info'] as const;

export function messageFindings(a: AnalysisParts): Finding[] {
  const out: Finding[] = [];
  const add = (code: string, severity: Finding['severity'], message: string) =>
    out.push({ code, severity, message });

  if (a.dkim.length === 0)
    add(
      'no_dkim_signature',
      'medium',
      'The message carries no DKIM-Signature: only SPF can align for DMARC, and forwarding breaks SPF (RFC 7489 §4.3).',
    );
  for (const s of a.dkim) {
    const who = `the signature of ${s.domain ?? '(no d=)'}${s.selector ? ` (s=${s.selector})` : ''}`;
    if (s.result === 'fail')
      add(
        'dkim_fail',
        'high',
        `DKIM fails for ${who}: ${s.reason ?? 'the signature does not verify'} (RFC 6376 §6.1.3).`,
      );
    else if (s.result !== 'pass')
      add(
        `dkim_${s.result}`,
        s.result === 'temperror' ? 'medium' : 'high',
        `DKIM ${s.result} for ${who}: ${s.reason ?? 'no reason given'}.`,
      );
    if (s.algorithm === 'rsa-sha1')
      add(
        'dkim_rsa_sha1',
        'medium',
        `${who} uses rsa-sha1, which signers must not use and verifiers may reject (RFC 8301 §3.1).`,
      );
    if (s.body_length !== null)
      add(
        'dkim_body_length',
        'medium',
        `${who} signs only the first ${s.body_length} bytes of the body (l=): anything appended after them is not covered (RFC 6376 §8.2).`,
      );
  }
  if (a.headers_only)
    add(
      'headers_only',
      'info',
      'Only headers were given: DKIM body hashes are not checked, and a signature whose headers verify is reported as such.',
    );
  if (a.arc.result === 'fail')
    add(
      'arc_fail',
      'medium',
      `The ARC chain fails${a.arc.broken_at !== null ? ` at instance ${a.arc.broken_at}` : ''}: ${a.arc.reason ?? 'it does not validate'} (RFC 8617 §5.2).`,
    );
  if (!a.spf) add('spf_not_checked', 'info', a.envelope.why);
  else if (a.spf.result === 'fail' || a.spf.result === 'softfail')
    add(
      `spf_${a.spf.result}`,
      a.spf.result === 'fail' ? 'high' : 'medium',
      `SPF ${a.spf.result}: ${a.spf.ip} is not permitted to send for ${a.spf.domain} (RFC 7208 §2.6).`,
    );
  else if (a.spf.result === 'permerror' || a.spf.result === 'temperror')
    add(
      `spf_${a.spf.result}`,
      'medium',
      `SPF ${a.spf.result} for ${a.spf.domain}${a.spf.problem ? `: ${a.spf.problem}` : ''}.`,
    );
  if (a.dmarc.result === 'fail') add('dmarc_fail', 'high', a.dmarc.summary);
  else if (a.dmarc.result === 'none') add('dmarc_none', 'medium', a.dmarc.summary);
  else if (a.dmarc.result !== 'pass') add(`dmarc_${a.dmarc.result}`, 'medium', a.dmarc.summary);
  for (const h of a.authentication_results) {
    for (const d of h.disagreements)
      add('authentication_results_disagree', 'medium', `Authentication-Results of ${h.authserv_id}: ${d}`);
    if (!h.trusted && h.results.some((r) => r.result === 'pass'))
      add(
        'authentication_results_untrusted',
        'info',
        `An Authentication-Results header of ${h.authserv_id} claims a pass, but it was not written by the receiving side (RFC 8601 §5): ${h.why}`,
      );
  }
  for (const hop of a.received) {
    if (hop.delay_seconds !== null && hop.delay_seconds < -60)
      add(
        'received_clock_skew',
        'low',
        `Received header ${hop.index} is dated ${-hop.delay_seconds} s before the hop before it: a clock on the way is wrong.`,
      );
    else if (hop.delay_seconds !== null && hop.delay_seconds > 3600)
      add(
        'received_delay',
        'info',
        `The message waited ${Math.round(hop.delay_seconds / 60)} minutes before Received header ${hop.index}${hop.by ? ` (by ${hop.by})` : ''}.`,
      );
  }
  return out.sort((x, y) => SEVERITY.indexOf(x.severity) - SEVERITY.indexOf(y.severity));
}

export function messageVerdict(a: AnalysisParts): MessageAnalysis['verdict'] {
  const pass = a.dkim.filter((s) => s.result === 'pass');
  const dkimWords =
    a.dkim.length === 0
      ? 'no DKIM signature'
      : `DKIM ${pass.length} of ${a.dkim.length} pass${pass.length > 0 ? ` (${pass.map((s) => s.domain).join(', ')})` : ''}`;
  const spfWords = a.spf ? `SPF ${a.spf.result} for ${a.spf.ip}` : 'SPF not checked (no connecting address)';
  const arcWords =
    a.arc.instances > 0
      ? `; ARC ${a.arc.result} (${a.arc.instances} instance${a.arc.instances === 1 ? '' : 's'})`
      : '';
  const detail = `${dkimWords}; ${spfWords}${arcWords}.`;
  const from = a.from.domain ?? 'the sender';
  if (a.dmarc.result === 'pass')
    return { status: 'authenticated', summary: `${from} is authenticated: DMARC passes. ${capital(detail)}` };
  if (a.dmarc.result === 'fail')
    return {
      status: 'not_authenticated',
      summary: `${from} is not authenticated: DMARC fails (p=${a.dmarc.policy}). ${capital(detail)}`,
    };
  return { status: 'unknown', summary: `${capital(a.dmarc.summary)} ${capital(detail)}` };
}

const capital = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);
