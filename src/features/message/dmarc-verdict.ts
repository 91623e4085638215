/**
 * DMARC for one message (RFC 7489 §3.1, §6.6; RFC 9989): the From domain's
 * policy from the existing tree walk, SPF and DKIM alignment in the mode the
 * record asks (relaxed: the same organizational domain; strict: the same
 * name), the result and what a receiver following the policy does. Pure: the
 * lookups are the caller's.
 */
import { sameOrganization } from '../../net/organizational-domain.js';
import type { DmarcEvaluation } from '../email/dmarc.js';
import type { MessageAnalysis } from './message.schema.js';

export type DmarcPart = MessageAnalysis['dmarc'];

export interface DmarcInputs {
  fromDomain: string | null;
  /** The tree walk's evaluation of the From domain; null without a From domain. */
  evaluation: DmarcEvaluation | null;
  /** The SPF result and the domain it authenticated (MAIL FROM's, or HELO's for a bounce). */
  spf: { result: string; domain: string } | null;
  dkim: { domain: string | null; result: string }[];
}

const normal = (d: string) => d.toLowerCase().replace(/\.$/, '');

export function aligned(a: string, b: string, mode: 'relaxed' | 'strict'): boolean {
  return mode === 'strict' ? normal(a) === normal(b) : sameOrganization(a, b);
}

function mode(evaluation: DmarcEvaluation | null, tag: 'adkim' | 'aspf'): 'relaxed' | 'strict' {
  const value = evaluation?.parsed?.tags
    .find((t) => t.name === tag)
    ?.value.trim()
    .toLowerCase();
  return value === 's' ? 'strict' : 'relaxed';
}

/** The DMARC part of the answer, and which DKIM signatures align (by position). */
export function dmarcVerdict(input: DmarcInputs): { dmarc: DmarcPart; dkimAligned: boolean[] } {
  const { fromDomain, evaluation } = input;
  const alignment = { spf: mode(evaluation, 'aspf'), dkim: mode(evaluation, 'adkim') };
  const dkimAligned = input.dkim.map((s) =>
    fromDomain !== null && s.domain !== null ? aligned(s.domain, fromDomain, alignment.dkim) : false,
  );
  const spfAligned =
    fromDomain !== null &&
    input.spf !== null &&
    input.spf.result === 'pass' &&
    aligned(input.spf.domain, fromDomain, alignment.spf);
  const dkimPassAligned = input.dkim.some((s, i) => s.result === 'pass' && dkimAligned[i]);
  const base = {
    domain: fromDomain,
    record: evaluation?.record ?? null,
    record_domain: evaluation?.recordDomain ?? null,
    policy: evaluation?.effectivePolicy ?? null,
    alignment,
    spf_aligned: spfAligned,
    dkim_aligned: dkimPassAligned,
  };
  const pass = spfAligned || dkimPassAligned;
  if (fromDomain === null) {
    return {
      dmarc: {
        ...base,
        result: 'permerror',
        disposition: 'none',
        summary: 'The message has no usable From domain: DMARC cannot be applied (RFC 7489 §6.6.1).',
      },
      dkimAligned,
    };
  }
  if (!evaluation || evaluation.state === 'error') {
    return {
      dmarc: {
        ...base,
        result: 'temperror',
        disposition: 'none',
        summary: `The DMARC record of ${fromDomain} could not be looked up${evaluation ? `: ${evaluation.summary}` : ''}.`,
      },
      dkimAligned,
    };
  }
  if (evaluation.state === 'none' || !evaluation.effectivePolicy) {
    return {
      dmarc: {
        ...base,
        result: 'none',
        disposition: 'none',
        summary: `${fromDomain} publishes no DMARC policy: receivers apply their own rules.${pass ? ' It would pass: an aligned identifier authenticated.' : ''}`,
      },
      dkimAligned,
    };
  }
  const how = [spfAligned ? 'SPF' : null, dkimPassAligned ? 'DKIM' : null].filter(Boolean).join(' and ');
  const policy = evaluation.effectivePolicy;
  return {
    dmarc: {
      ...base,
      result: pass ? 'pass' : 'fail',
      disposition: pass ? 'none' : policy,
      summary: pass
        ? `DMARC passes for ${fromDomain}: ${how} authenticated an aligned domain.`
        : `DMARC fails for ${fromDomain}: neither SPF nor DKIM authenticated a domain aligned with it; a receiver following p=${policy} would ${policy === 'reject' ? 'reject the message' : policy === 'quarantine' ? 'deliver it to spam' : 'deliver it anyway (p=none)'}.`,
    },
    dkimAligned,
  };
}
