/**
 * The email-security check's verdict on a domain's SPF (RFC 7208): it fetches
 * the domain's record, walks its tree and decides the check's status, summary
 * and findings. The SPF logic is features/spf/'s: the record syntax
 * (record.ts), the include/redirect walk with its lookup counts (tree.ts),
 * the limits (spf-types.ts) and where receivers stop (stop.ts).
 */
import { ordinal } from '../spf/check-host.js';
import { type SpfQualifier, spfRecords } from '../spf/record.js';
import { LOOKUP_LIMIT, NAMES_PER_LOOKUP_LIMIT, VOID_LOOKUP_LIMIT } from '../spf/spf-types.js';
import type { SpfPermerrorPoint } from '../spf/stop.js';
import { type SpfNode, type SpfTree, walkSpfTree } from '../spf/tree.js';
import { type CheckStatus, type Finding, finding, type MailDns } from './types.js';

export interface SpfEvaluation {
  /** none: no SPF record at the domain; error: a DNS failure made the result a temperror. */
  state: 'none' | 'evaluated' | 'error';
  /** `v=spf1` records at the domain. */
  recordCount: number;
  /** The domain's record (the first, when several). */
  record: string | null;
  /** One record at the domain and no syntax or structural error anywhere in the tree. */
  valid: boolean;
  /** Lookup, void-lookup and per-mx host limits all respected. */
  withinLimits: boolean;
  /** Receivers return permerror: for every sender, or (see permerrorAt) for those no earlier term matches. */
  permerror: boolean;
  /** DNS-querying terms through the whole tree, counted past the limit. */
  lookupCount: number;
  voidLookupCount: number;
  /** False when an include or redirect was not followed (macros, work cap): the count is then a lower bound. */
  lookupCountComplete: boolean;
  /** False when the void-lookup count is a lower bound. */
  voidLookupCountComplete: boolean;
  /** The term where receivers stop with permerror; null when none does, or the whole record is a permerror. */
  permerrorAt: SpfPermerrorPoint | null;
  /** The `all` that ends evaluation at the top, through redirects; null when there is none. */
  effectiveAll: `${SpfQualifier}all` | null;
  tree: SpfNode[];
  status: CheckStatus;
  summary: string;
  findings: Finding[];
}

/**
 * Evaluates the SPF tree of `domain` statically: every branch is followed
 * (no client address is known), so the counts are what a receiver would
 * reach in the worst case.
 */
export async function evaluateSpf(domain: string, dns: MailDns): Promise<SpfEvaluation> {
  const rootAnswer = await dns.txt(domain);
  if (rootAnswer.kind !== 'answer') return errorResult(domain, rootAnswer.message);
  const rootRecords = spfRecords(rootAnswer);
  const recordCount = rootRecords.length;
  if (recordCount === 0) {
    return {
      state: 'none',
      recordCount: 0,
      record: null,
      valid: false,
      withinLimits: false,
      permerror: false,
      lookupCount: 0,
      voidLookupCount: 0,
      lookupCountComplete: true,
      voidLookupCountComplete: true,
      permerrorAt: null,
      effectiveAll: null,
      tree: [],
      status: 'fail',
      summary: `No SPF record at ${domain}: any host may send mail as this domain.`,
      findings: [finding('error', `${domain} publishes no "v=spf1" TXT record.`, 'RFC 7208 §4.5')],
    };
  }

  const tree = await walkSpfTree(domain, rootAnswer, dns);
  if (tree.temperror) return errorResult(domain, 'a DNS lookup in the SPF tree failed', tree);

  const findings = [...tree.findings, ...limitFindings(tree)];
  const { effectiveAll } = tree;
  const valid = recordCount === 1 && !tree.structural;
  const withinLimits =
    recordCount === 1 && tree.lookups <= LOOKUP_LIMIT && tree.voids <= VOID_LOOKUP_LIMIT && !tree.mxOverLimit;
  const permerror = !valid || !withinLimits;
  if (effectiveAll === '+all') {
    findings.push(
      finding(
        'error',
        '"+all" authorizes every host on the Internet to send as this domain.',
        'RFC 7208 §5.1',
      ),
    );
  } else if (effectiveAll === '?all') {
    findings.push(
      finding(
        'warning',
        '"?all" (neutral) gives receivers no instruction for unlisted hosts.',
        'RFC 7208 §8.2',
      ),
    );
  } else if (effectiveAll === null && recordCount === 1 && tree.nodes[0]!.state === 'ok') {
    findings.push(
      finding(
        'warning',
        'The record ends without "all" or "redirect": unlisted hosts get the default result, neutral.',
        'RFC 7208 §4.7',
      ),
    );
  }

  const status: CheckStatus = permerror
    ? 'fail'
    : effectiveAll === '-all' || effectiveAll === '~all'
      ? findings.some((f) => f.severity !== 'info')
        ? 'warn'
        : 'pass'
      : 'fail';
  return {
    state: 'evaluated',
    recordCount,
    record: rootRecords[0] ?? null,
    valid,
    withinLimits,
    permerror,
    lookupCount: tree.lookups,
    voidLookupCount: tree.voids,
    lookupCountComplete: tree.complete,
    voidLookupCountComplete: tree.voidsComplete,
    permerrorAt: tree.permerrorAt,
    effectiveAll,
    tree: tree.nodes,
    status,
    // Where receivers stop says more than "permerror": who still passes, and what to cut.
    summary: tree.permerrorAt
      ? permerrorText(tree, tree.permerrorAt)
      : summarize(recordCount, permerror, effectiveAll, tree.lookups, tree.complete),
    findings,
  };
}

/**
 * The lookup and void-lookup limits over the whole tree (RFC 7208 §4.6.4):
 * one finding saying how far over the record is, where receivers stop and
 * what still passes, and how much to cut.
 */
function limitFindings(tree: SpfTree): Finding[] {
  if (tree.lookups <= LOOKUP_LIMIT && tree.voids <= VOID_LOOKUP_LIMIT) return [];
  const at = tree.permerrorAt;
  const limitStop = at && (at.reason === 'lookup_limit' || at.reason === 'void_lookup_limit') ? at : null;
  return [finding('error', permerrorText(tree, limitStop), 'RFC 7208 §4.6.4')];
}

/**
 * What exceeds a limit and where receivers stop, e.g. "The record needs 15 DNS
 * lookups (...); the limit is 10. Receivers stop at the 11th lookup
 * (include:b.example in include:a.example) with permerror, so mail from
 * senders authorized before that term still passes and everything else fails
 * SPF with permerror. Cut 5 lookups."
 */
function permerrorText(tree: SpfTree, at: SpfPermerrorPoint | null): string {
  const lookups = `${tree.complete ? '' : 'at least '}${tree.lookups}`;
  const voids = `${tree.voidsComplete ? '' : 'at least '}${tree.voids}`;
  const overLookups = tree.lookups > LOOKUP_LIMIT;
  const overVoids = tree.voids > VOID_LOOKUP_LIMIT;
  return [
    overLookups &&
      `The record needs ${lookups} DNS lookups (include, a, mx, ptr, exists and redirect terms, through every include); the limit is ${LOOKUP_LIMIT}.`,
    overVoids &&
      `The record makes ${voids} void lookups (names with no records); the limit is ${VOID_LOOKUP_LIMIT}.`,
    at && stopText(at),
    overLookups && `Cut ${tree.lookups - LOOKUP_LIMIT} ${plural(tree.lookups - LOOKUP_LIMIT, 'lookup')}.`,
    overVoids && `Remove ${tree.voids - VOID_LOOKUP_LIMIT} of the terms whose names have no records.`,
  ]
    .filter(Boolean)
    .join(' ');
}

const STOP_CAUSE: Record<SpfPermerrorPoint['reason'], (at: SpfPermerrorPoint) => string> = {
  lookup_limit: (at) => `the ${ordinal(at.lookups)} lookup`,
  void_lookup_limit: (at) => `the ${ordinal(at.void_lookups)} void lookup`,
  mx_host_limit: () => `an mx term with more than ${NAMES_PER_LOOKUP_LIMIT} hosts`,
  no_record: () => 'a target without an SPF record',
  multiple_records: () => 'a target with several SPF records',
  syntax_error: () => 'a target whose record has a syntax error',
};

/** Where receivers stop (RFC 7208 §4.6.4: evaluation ends with permerror there) and who still passes. */
function stopText(at: SpfPermerrorPoint): string {
  const record = at.path.at(-1) ?? at.domain;
  const authorized = at.evaluated_before.some((t) => t.result === 'pass');
  const outcome = authorized
    ? 'so mail from senders authorized before that term still passes and everything else fails SPF with permerror'
    : 'before any term authorizes a sender, so all mail fails SPF with permerror';
  return `Receivers stop at ${STOP_CAUSE[at.reason](at)} (${at.term} in ${record}) with permerror, ${outcome}.`;
}

function plural(n: number, word: string): string {
  return n === 1 ? word : `${word}s`;
}

function summarize(
  count: number,
  permerror: boolean,
  all: string | null,
  lookups: number,
  complete: boolean,
): string {
  const lookupText = `${lookups}${complete ? '' : '+'}/${LOOKUP_LIMIT} lookups`;
  if (count > 1) return `${count} SPF records: receivers treat this as a permerror (no SPF at all).`;
  if (permerror)
    return `SPF is a permerror (${lookupText}): receivers treat the domain as having no usable SPF.`;
  if (all === '-all' || all === '~all') return `One valid SPF record ending in "${all}" (${lookupText}).`;
  if (all === null)
    return `One valid SPF record without "all" (${lookupText}): unlisted senders are not refused.`;
  return `One valid SPF record ending in "${all}" (${lookupText}): unlisted senders are not refused.`;
}

/** A temperror (RFC 7208 §2.6.6): the tree walked so far, when there is one, is still shown. */
function errorResult(domain: string, message: string, tree?: SpfTree): SpfEvaluation {
  return {
    state: 'error',
    recordCount: 0,
    record: tree?.nodes[0]?.record ?? null,
    valid: false,
    withinLimits: false,
    permerror: false,
    lookupCount: 0,
    voidLookupCount: 0,
    lookupCountComplete: false,
    voidLookupCountComplete: false,
    permerrorAt: null,
    effectiveAll: null,
    tree: tree?.nodes ?? [],
    status: 'error',
    summary: `SPF for ${domain} could not be evaluated (${message}): a temperror; this check is left out of the score.`,
    findings: [finding('warning', `Temporary DNS failure: ${message}.`, 'RFC 7208 §2.6.6')],
  };
}
