/**
 * GET /api/dnssec: validates one name and type with netdiag's own engine (src/dns-engine, from the
 * root) and validator (./validate.ts), and says it link by link. The engine is the provider: its
 * answer carries the usual attribution. Cached by the answer's and the chain's TTLs and by when the
 * first signature that validated it expires; an indeterminate answer (servers or budget gave out)
 * is a failure of the moment and is not cached.
 */

import { type CachedResult, type Freshness, freshness } from '../../cache/cached.js';
import { formatDateTime } from '../../client/words.js';
import type { AppContext } from '../../context.js';
import { ENGINE_PROVIDER } from '../../dns-engine/provider.js';
import {
  algorithmFindings,
  algorithmName,
  digestFindings,
  dnskeyInfo,
  dsMatchesKey,
  dsSupported,
  normalizeName,
  nsec3ParameterFindings,
  rrsigTime,
} from '../../dnssec/index.js';
import type { DnsRecord, Nsec3Record, RrsigRecord } from '../../dnssec/types.js';
import { badInput } from '../../errors.js';
import { presentation } from '../../providers/dns/presentation.js';
import { toDnsRR } from '../../providers/dns/records.js';
import type { DnsRR } from '../../providers/dns/types.js';
import { DNS_API_TYPES, type DnsApiType, parseDnsQuestion } from '../dns/dns-target.js';
import { DNSSEC_TYPES, type DnssecResponse } from './dnssec.schema.js';
import { type Reason, type ValidationResult, validate, type ZoneLink } from './validate.js';

type Finding = DnssecResponse['findings'][number];

/** A signature that validates and expires within this many seconds is a finding. */
const EXPIRY_WARNING_SECONDS = 7 * 24 * 3600;
/** Longest an answer is kept, however long its TTLs. */
const MAX_CACHE_SECONDS = 3600;

function text(rr: DnsRecord): string {
  const typed = toDnsRR(rr as Parameters<typeof toDnsRR>[0]);
  return typed ? presentation(typed) : JSON.stringify(rr.data);
}

/**
 * src/dnssec says a signature's times as RFC 3339 (it is pure, and its texts are for any caller);
 * the sentences this API writes say dates in its one form (client/words' formatDateTime).
 */
function inWords(reason: Reason | null): Reason | null {
  if (!reason) return null;
  return {
    ...reason,
    detail: reason.detail.replace(/\b\d{4}-\d\d-\d\dT\d\d:\d\d(?::\d\d(?:\.\d+)?)?Z\b/g, (iso) =>
      formatDateTime(iso),
    ),
  };
}

function signatures(rrsigs: readonly RrsigRecord[]): DnssecResponse['chain'][number]['signatures'] {
  return rrsigs.map((s) => ({
    owner: normalizeName(s.name),
    covers: s.data.typeCovered,
    key_tag: s.data.keyTag,
    algorithm: s.data.algorithm,
    signer: normalizeName(s.data.signersName),
    inception: rrsigTime(s.data.inception),
    expiration: rrsigTime(s.data.expiration),
  }));
}

function linkView(link: ZoneLink, now: Date): DnssecResponse['chain'][number] {
  const findings: Finding[] = [];
  for (const sig of [...link.dsRrsigs, ...link.dnskeyRrsigs]) {
    const left = Date.parse(rrsigTime(sig.data.expiration, now)) - now.getTime();
    if (left > 0 && left < EXPIRY_WARNING_SECONDS * 1000)
      findings.push({
        severity: 'warning',
        code: 'signature_expires_soon',
        message: `The signature over ${link.zone}'s ${sig.data.typeCovered} RRset (key ${sig.data.keyTag}) expires in ${Math.floor(left / 3_600_000)} hours.`,
      });
  }
  const dnskeys = link.dnskeys.map((k) => {
    const info = dnskeyInfo(k.data);
    for (const f of algorithmFindings(k.data.algorithm, info.bits))
      findings.push({
        severity: 'warning',
        code: f.code,
        message: `${link.zone} key ${info.keyTag}: ${f.detail}`,
      });
    return {
      key_tag: info.keyTag,
      flags: k.data.flags,
      role: info.sep ? ('KSK' as const) : ('ZSK' as const),
      algorithm: k.data.algorithm,
      algorithm_name: algorithmName(k.data.algorithm),
      bits: info.bits ?? null,
      revoked: info.revoked,
      supported: info.supported,
      matched_by_ds: link.matchedKeyTags.includes(info.keyTag),
      signs_keyset: link.signingKeyTag === info.keyTag,
    };
  });
  const ds = link.ds.map((d) => {
    for (const f of digestFindings(d.data.digestType))
      findings.push({
        severity: 'warning',
        code: f.code,
        message: `DS ${d.data.keyTag} for ${link.zone}: ${f.detail}`,
      });
    return {
      key_tag: d.data.keyTag,
      algorithm: d.data.algorithm,
      algorithm_name: algorithmName(d.data.algorithm),
      digest_type: d.data.digestType,
      digest: d.data.digest.toString('hex').toUpperCase(),
      supported: dsSupported(d.data),
      matches_key: link.dnskeys.some((k) => dsMatchesKey(d.data, link.zone, k.data).ok),
    };
  });
  return {
    zone: link.zone,
    status: link.status,
    reason: inWords(link.reason),
    anchored: link.anchored,
    ds,
    dnskeys,
    signatures: signatures([...link.dsRrsigs, ...link.dnskeyRrsigs]),
    findings,
  };
}

export function shapeDnssec(
  target: string,
  type: string,
  result: ValidationResult,
  checkedAt: Date,
): DnssecResponse {
  const { resolution } = result;
  const records = resolution.answer.filter((r) => r.type !== 'RRSIG') as DnsRecord[];
  const rrsigs = resolution.answer.filter((r) => r.type === 'RRSIG') as unknown as RrsigRecord[];
  const findings: Finding[] = [];
  for (const s of result.answerSignatures) {
    if (s.expiresIn < EXPIRY_WARNING_SECONDS)
      findings.push({
        severity: 'warning',
        code: 'signature_expires_soon',
        message: `The signature over ${s.owner}/${s.type} expires in ${Math.max(0, Math.floor(s.expiresIn / 3600))} hours: re-signing must happen before then, or validating resolvers answer SERVFAIL.`,
      });
  }
  // The NSEC3 parameters the denial rests on (RFC 9276): iterations, salt, opt-out.
  const nsec3 = result.denial?.records.find((r) => r.type === 'NSEC3') as Nsec3Record | undefined;
  if (nsec3)
    for (const f of nsec3ParameterFindings(nsec3.data).findings)
      findings.push({
        severity: f.code === 'nsec3_iterations_insecure' ? 'error' : 'warning',
        code: f.code,
        message: `${f.detail}.`,
      });
  for (const f of result.engineFindings)
    if (f.severity === 'warning' || f.code !== 'no_usable_servers')
      findings.push({ severity: f.severity, code: f.code, message: f.detail });
  const denial = result.denial;
  return {
    target,
    type,
    status: result.status,
    reason: inWords(result.reason),
    chain: result.chain.map((link) => linkView(link, checkedAt)),
    answer: {
      rcode: resolution.rcode,
      records: records.map((r) => ({
        name: normalizeName(r.name),
        type: r.type,
        ttl: r.ttl ?? 0,
        data: text(r),
      })),
      signatures: signatures(rrsigs),
      denial: denial
        ? {
            status: denial.status,
            kind: denial.status === 'failed' ? null : (denial.kind ?? null),
            records: denial.records.map((r) => ({
              name: normalizeName(r.name),
              type: r.type,
              data: text(r),
            })),
          }
        : null,
    },
    findings,
    queries: result.queries.length,
    checked_at: checkedAt.toISOString(),
    source: ENGINE_PROVIDER.name,
    source_id: ENGINE_PROVIDER.id,
    providers_tried: [{ id: ENGINE_PROVIDER.id, name: ENGINE_PROVIDER.name, status: 'ok' }],
  };
}

/** Seconds the answer may be kept: its TTLs, the chain's, and the first validating signature's expiry. */
export function cacheSeconds(result: ValidationResult): number {
  if (result.status === 'indeterminate') return 0;
  const ttls = [
    ...result.resolution.answer.map((r) => r.ttl ?? 0),
    ...result.resolution.authority.map((r) => r.ttl ?? 0),
    ...result.chain.flatMap((l) => [...l.ds, ...l.dnskeys].map((r) => r.ttl ?? MAX_CACHE_SECONDS)),
    ...result.answerSignatures.map((s) => s.expiresIn),
  ].filter((t) => t > 0);
  return Math.min(MAX_CACHE_SECONDS, ...ttls);
}

export type DnssecDeps = Pick<AppContext, 'clock' | 'loader' | 'dnsEngine' | 'trustAnchors' | 'registry'>;

/** The question as asked: the type in upper case, one of DNSSEC_TYPES; the name normalized (IDN, URL, PTR rules of /api/dns). */
export function dnssecQuestion(target: string, type: string | undefined): { name: string; type: string } {
  const upper = (type ?? 'A').toUpperCase();
  if (!(DNSSEC_TYPES as readonly string[]).includes(upper))
    throw badInput('type', `must be one of ${DNSSEC_TYPES.join(', ')}`);
  // DS, DNSKEY and TLSA are not /api/dns types.
  // TXT's name rules allow the underscore labels a TLSA name has (_25._tcp.mx.example).
  const asDns = (DNS_API_TYPES as readonly string[]).includes(upper) ? (upper as DnsApiType) : 'TXT';
  return { name: parseDnsQuestion(target, asDns).name, type: upper };
}

/**
 * A validation as the features read it (verdicts.ts): the verdict, and the answer as the
 * authoritative servers serve it (netdiag's engine read it whether or not it validates), in the
 * DNS client's record shapes; null when the resolution failed.
 */
export interface ValidatedAnswer {
  status: ValidationResult['status'];
  reason: ValidationResult['reason'];
  answer: { rcode: 'NOERROR' | 'NXDOMAIN'; records: DnsRR[] } | null;
}

function validatedAnswer(result: ValidationResult): ValidatedAnswer {
  const { resolution } = result;
  const records = resolution.answer
    .filter((r) => r.type !== 'RRSIG')
    .flatMap((r) => toDnsRR(r as Parameters<typeof toDnsRR>[0]) ?? []);
  return {
    status: result.status,
    reason: result.reason,
    answer:
      resolution.status === 'failed'
        ? null
        : { rcode: resolution.status === 'nxdomain' ? 'NXDOMAIN' : 'NOERROR', records },
  };
}

/**
 * One validation, cached (and shared by concurrent askers) under one key for GET /api/dnssec
 * and for the features that act on the verdict, so neither validates what the other just did.
 */
export async function validatedQuestion(
  deps: DnssecDeps,
  question: { name: string; type: string },
  signal?: AbortSignal,
): Promise<CachedResult<{ body: DnssecResponse; verdict: ValidatedAnswer }>> {
  return deps.loader.load(`dnssec:${question.type}:${question.name}`, async () => {
    const now = new Date(deps.clock());
    const result = await validate(deps.dnsEngine, question.name, question.type, {
      anchors: deps.trustAnchors,
      now,
      ...(signal ? { signal } : {}),
    });
    deps.registry.recordSuccess(ENGINE_PROVIDER.id);
    return {
      value: {
        body: shapeDnssec(question.name, question.type, result, now),
        verdict: validatedAnswer(result),
      },
      ttl: cacheSeconds(result),
    };
  });
}

export async function lookupDnssec(
  deps: DnssecDeps,
  target: string,
  type: string | undefined,
  signal?: AbortSignal,
): Promise<{ body: DnssecResponse; cache: Freshness }> {
  const loaded = await validatedQuestion(deps, dnssecQuestion(target, type), signal);
  return { body: loaded.value.body, cache: freshness(loaded) };
}
