/**
 * RFC 8617 §5.2 chain validation, as mailauth's `arc()` does it (strict), reported set by set.
 *
 * mailauth answers none/pass/fail and one comment. netdiag adds, without second-guessing it:
 * - per instance, the seal's result: all `pass` when the chain passes; otherwise each seal k is
 *   judged by mailauth's verifyASChain over sets 1..k (it checks the newest seal first, so an
 *   error that names instance k, or k's key, is seal k's own);
 * - the newest ARC-Message-Signature's result (§5.2 step 4; older ones are not validated, as
 *   the RFC's step 5 is optional: reported `none`);
 * - headers only: the newest AMS is judged on its header fields (dkim.ts checkHeaders) and
 *   mailauth's chain validation is given that result instead of the body hash mismatch;
 * - the instance where the chain broke, and the reason in words.
 */
import type { Arc } from '../features/message/message.schema.js';
import { asAuthResult, checkHeaders, type DkimContext, keyName } from './dkim.js';
import { arcInstance, compact, type HeaderField, isArcField, parseTags, unfold } from './header-fields.js';
import { type ArcData, type ArcEntry, validateArc, verifySeals } from './mailauth.js';

type ArcInstance = Arc['chain'][number];
type AuthResult = ArcInstance['seal']['result'];

/** RFC 8617 §4.2.1: at most 50 sets. */
export const ARC_MAX_INSTANCES = 50;

/** Groups the ARC fields by instance (netdiag's own read of the tags, for the report). */
export function arcSets(fields: HeaderField[]): Map<number, Partial<Record<string, HeaderField>>> {
  const sets = new Map<number, Partial<Record<string, HeaderField>>>();
  for (const f of fields) {
    if (!isArcField(f.name)) continue;
    const i = arcInstance(f);
    if (i === null) continue;
    const set = sets.get(i) ?? {};
    set[f.name] ??= f;
    sets.set(i, set);
  }
  return sets;
}

const NONE: Arc = { result: 'none', instances: 0, chain: [], broken_at: null, reason: null };

export async function reportArc(
  fields: HeaderField[],
  data: ArcData,
  ctx: DkimContext,
  maxInstances: number,
  notes: string[],
): Promise<Arc> {
  const sets = arcSets(fields);
  if (sets.size === 0 && !data.error) return NONE;
  const numbers = [...sets.keys()].sort((a, b) => a - b);
  const instances = numbers.length;
  const chain: ArcInstance[] = numbers.map((i) => describe(i, sets.get(i) ?? {}));

  if (instances > maxInstances) {
    notes.push(
      `ARC: ${instances} sets, more than the ${maxInstances} this analyzer validates; the chain was not validated.`,
    );
    return {
      result: 'fail',
      instances,
      chain,
      broken_at: null,
      reason:
        instances > ARC_MAX_INSTANCES
          ? `${instances} ARC sets: RFC 8617 allows at most ${ARC_MAX_INSTANCES}`
          : `${instances} ARC sets: more than the ${maxInstances} this analyzer validates`,
    };
  }

  if (data.error || !data.chain) {
    // The structure is wrong (getARChain threw): no seal was verified.
    const err = data.error;
    const at = Number(/i=(\d+)/.exec(err?.message ?? '')?.[1]) || null;
    return { result: 'fail', instances, chain, broken_at: at, reason: structureReason(err) };
  }

  // Headers only: the newest AMS stopped at the body hash; judge it on its header fields.
  const last = data.lastEntry;
  let amsData = data;
  let amsComment: string | undefined = last?.messageSignature?.status.comment;
  if (ctx.headersOnly && last?.messageSignature?.status.comment === 'body hash did not verify') {
    const amsField = sets.get(last.i)?.['arc-message-signature'];
    if (amsField) {
      const check = await checkHeaders(last.messageSignature, parseTags(amsField.value), 'ARC', ctx);
      amsComment = check.comment;
      const patched: ArcEntry = {
        ...last,
        messageSignature: {
          ...last.messageSignature,
          status: { result: check.result, comment: check.comment },
        },
      };
      amsData = { chain: data.chain.map((e) => (e === last ? patched : e)), lastEntry: patched };
    }
  }
  const amsResult: AuthResult = asAuthResult(amsData.lastEntry?.messageSignature?.status.result ?? 'none');
  const newest = chain[chain.length - 1];
  if (newest) newest.message_signature.result = amsResult;

  const outcome = await validateArc(amsData, ctx.resolver);
  if (outcome.status.result === 'pass') {
    for (const c of chain) c.seal.result = 'pass';
    return { result: 'pass', instances, chain, broken_at: null, reason: null };
  }

  // Failing: which seals verify?
  let firstBad: number | null = null;
  let firstError: (Error & { code?: string; queryDomain?: string }) | null = null;
  for (let k = 1; k <= data.chain.length; k++) {
    const entry = chain[k - 1];
    if (!entry) continue;
    try {
      await verifySeals(data.chain, k, ctx.resolver);
      entry.seal.result = 'pass';
    } catch (e) {
      const err = e as Error & { code?: string; queryDomain?: string };
      const own =
        err.message.startsWith(`i=${k} `) ||
        (err.queryDomain !== undefined &&
          err.queryDomain === keyName(entry.seal.domain, entry.seal.selector));
      entry.seal.result = own ? sealResult(err) : 'none';
      if (own && firstBad === null) {
        firstBad = k;
        firstError = err;
      }
    }
  }
  if (firstBad !== null && firstError) {
    const entry = chain[firstBad - 1];
    return {
      result: 'fail',
      instances,
      chain,
      broken_at: firstBad,
      reason: sealReason(firstBad, firstError, entry),
    };
  }
  // The seals verify: the newest message signature is what failed (§5.2 step 4).
  return {
    result: 'fail',
    instances,
    chain,
    broken_at: newest?.instance ?? null,
    reason: `the newest ARC-Message-Signature (i=${newest?.instance}) does not verify: ${amsComment ?? amsResult}`,
  };
}

function describe(i: number, set: Partial<Record<string, HeaderField>>): ArcInstance {
  const seal = set['arc-seal'] ? parseTags(set['arc-seal'].value) : new Map<string, string>();
  const ams = set['arc-message-signature']
    ? parseTags(set['arc-message-signature'].value)
    : new Map<string, string>();
  const aar = set['arc-authentication-results'];
  return {
    instance: i,
    seal: {
      result: 'none',
      domain: compact(seal.get('d')) || null,
      selector: compact(seal.get('s')) || null,
      cv: compact(seal.get('cv'))?.toLowerCase() ?? null,
    },
    message_signature: {
      result: 'none',
      domain: compact(ams.get('d')) || null,
      selector: compact(ams.get('s')) || null,
    },
    authentication_results: aar
      ? unfold(aar.value.replace(/^i\s*=\s*\d+\s*;/, '')).replace(/\s+/g, ' ')
      : null,
  };
}

const KEY_CODES = [
  'ENOTFOUND',
  'ENODATA',
  'EINVALIDVER',
  'EINVALIDTYPE',
  'EINVALIDVAL',
  'EINVALIDHASH',
  'EINVALIDSERVICE',
];
const CHAIN_CODES = [
  'invalid_arc_seal',
  'failing_arc_seal',
  'multiple_arc_keys',
  'invalid_arc_count',
  'invalid_arc_instance',
  'missing_arc_header',
  'invalid_cv_value',
  'unexpected_as_h_value',
  'invalid_ams_h_value',
  'invalid_arc_tags',
  'missing_a_value',
  'invalid_a_value',
];

function sealResult(err: Error & { code?: string }): AuthResult {
  const code = err.code ?? '';
  if (KEY_CODES.includes(code) || code === 'EINVALIDKEYALGO') return 'neutral';
  if (code === 'ESHORTKEY') return 'policy';
  if (CHAIN_CODES.includes(code)) return 'fail';
  return 'temperror'; // anything else came from the resolver: a DNS failure
}

function sealReason(
  k: number,
  err: Error & { code?: string; queryDomain?: string },
  entry?: ArcInstance,
): string {
  const who = `the ARC-Seal of i=${k}${entry?.seal.domain ? ` (d=${entry.seal.domain}, s=${entry.seal.selector})` : ''}`;
  const code = err.code ?? '';
  if (code === 'failing_arc_seal') return `${who} does not verify: a sealed header field was changed`;
  if (code === 'ENOTFOUND' || code === 'ENODATA') return `${who}: no key at ${err.queryDomain}`;
  if (code === 'ESHORTKEY') return `${who}: the RSA key at ${err.queryDomain} is shorter than 1024 bits`;
  if (KEY_CODES.includes(code) || code === 'EINVALIDKEYALGO')
    return `${who}: the key record ${err.queryDomain} is not usable (${err.message})`;
  if (CHAIN_CODES.includes(code)) return `${who}: ${err.message}`;
  return `${who}: DNS failure fetching ${err.queryDomain ?? 'its key'} (${code || err.message}); ARC has no temporary result, so the chain fails, and a retry may pass`;
}

function structureReason(err: (Error & { code?: string }) | undefined): string {
  if (!err) return 'the ARC header fields do not form a chain';
  const m = err.message;
  switch (err.code) {
    case 'invalid_cv_value':
      return /cv=fail/i.test(m)
        ? `${m}: a sealer recorded that the chain had already failed when it arrived (RFC 8617 §5.2 step 2)`
        : `${m}: the first seal must say cv=none and every later one cv=pass (RFC 8617 §5.2 step 3)`;
    case 'invalid_arc_instance':
      return `${m}: instances must run 1, 2, ... without gaps, each from 1 to 50 (RFC 8617 §4.2.1)`;
    case 'missing_arc_header':
      return `${m}: every instance needs an ARC-Seal, an ARC-Message-Signature and an ARC-Authentication-Results`;
    case 'multiple_arc_keys':
      return `${m}: an instance has the same ARC header field twice (RFC 8617 §4.2.1)`;
    case 'unexpected_as_h_value':
      return `${m}: an ARC-Seal must not have h= (RFC 8617 §4.1.3)`;
    case 'invalid_ams_h_value':
      return `${m}: an ARC-Message-Signature must not sign ARC-Seal (RFC 8617 §4.1.2)`;
    case 'invalid_arc_count':
      return `${m}: more than 50 ARC sets (RFC 8617 §4.2.1)`;
    default:
      return `the ARC header fields are not valid: ${m}`;
  }
}
