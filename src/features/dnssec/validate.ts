/**
 * netdiag's own DNSSEC validation (RFC 4033–4035, 5155, 6840): the chain of trust from a trust
 * anchor down to the zone of each RRset in an answer, link by link, on what the authoritative
 * servers themselves serve (src/dns-engine) and checked with src/dnssec's primitives. Nobody's
 * AD bit is taken on trust.
 *
 * The chain of trust is walked top down (chain.ts), as DNSViz and delv show it, to the zone that
 * signed each RRset of the answer (a CNAME chain's too); each RRset is checked with that zone's keys,
 * a wildcard expansion with its proof that the name itself does not exist, and a negative answer
 * with its NSEC or NSEC3 proof, signed by the zone whose SOA it carries.
 *
 * Verdicts (RFC 4033 §5): secure, insecure (with the zone where the chain of trust ends), bogus
 * (with the first broken link), indeterminate (no anchor covers the name, or the servers or the
 * query budget gave out before a verdict).
 */
import type { EngineRecord, ResolveResult } from '../../dns-engine/index.js';
import {
  isBelow,
  normalizeName,
  proveNsec3Nodata,
  proveNsec3Nxdomain,
  proveNsec3WildcardAnswer,
  proveNsecNodata,
  proveNsecNxdomain,
  proveNsecWildcardAnswer,
  verifyRRset,
} from '../../dnssec/index.js';
import type { DenialResult, RrsigRecord } from '../../dnssec/types.js';
import {
  BudgetSpent,
  insecureCode,
  type Reason,
  rrsigsOf,
  VALIDATION_QUERY_BUDGET,
  type ValidateOptions,
  Validation,
  type ValidationEngine,
  type ValidationResult,
  type ValidationStatus,
} from './chain.js';

export type {
  Reason,
  ValidateOptions,
  ValidationEngine,
  ValidationResult,
  ValidationStatus,
  ZoneLink,
} from './chain.js';
export { VALIDATION_QUERY_BUDGET } from './chain.js';

/**
 * The zone whose keys must have signed an RRset: its RRSIG's signer when that is the owner or an
 * ancestor of it (a DS is signed by the parent: never the owner), else the owner itself. Names
 * between the signer and the owner need no DS question: the signer's signature covers them
 * unless there is a cut, and a cut's data would be signed by the child.
 */
function signerZone(owner: string, type: string, rrsigs: readonly RrsigRecord[]): string {
  const signer = rrsigs.find((s) => normalizeName(s.name) === owner && s.data.typeCovered === type)?.data
    .signersName;
  if (signer !== undefined) {
    const zone = normalizeName(signer);
    if (zone === owner ? type !== 'DS' : isBelow(owner, zone) || zone === '.') return zone;
  }
  return type === 'DS' ? (parentOf(owner) ?? owner) : owner;
}

function isAtOrAbove(zone: string, name: string): boolean {
  const z = normalizeName(zone);
  return z === '.' || z === normalizeName(name) || isBelow(name, z);
}

function parentOf(name: string): string | undefined {
  const n = normalizeName(name);
  if (n === '.') return undefined;
  const dot = n.indexOf('.');
  return dot < 0 ? '.' : n.slice(dot + 1);
}

const RANK: Record<ValidationStatus, number> = { secure: 0, insecure: 1, indeterminate: 2, bogus: 3 };

/** The verdict of a whole answer, worst first: bogus, then indeterminate, then insecure. */
export function worst(
  a: { status: ValidationStatus; reason: Reason | null },
  b: { status: ValidationStatus; reason: Reason | null },
) {
  return RANK[b.status] > RANK[a.status] ? b : a;
}

/** Validates `name`/`type`: resolves it from the root, then the chain of every RRset in the answer. */
export async function validate(
  engine: ValidationEngine,
  name: string,
  type: string,
  opts: ValidateOptions,
): Promise<ValidationResult> {
  const v = new Validation(engine, opts);
  const now = opts.now ?? new Date();
  let resolution: ResolveResult | undefined;
  let verdict: { status: ValidationStatus; reason: Reason | null } = { status: 'secure', reason: null };
  let denial: DenialResult | null = null;
  const answerSignatures: ValidationResult['answerSignatures'] = [];
  try {
    resolution = await engine.resolve(name, type, { signal: opts.signal });
    v.queries.push(...resolution.queries);
    v.engineFindings.push(...resolution.findings);
    if (resolution.status === 'failed') {
      const why = resolution.findings.find((f) => f.severity === 'error');
      verdict = {
        status: 'indeterminate',
        reason: {
          code: why?.code ?? 'resolution_failed',
          zone: why?.zone ?? normalizeName(name),
          detail: why?.detail ?? `${name} could not be resolved`,
        },
      };
    } else {
      const rrsigs = rrsigsOf(resolution.answer);
      const sets = new Map<string, EngineRecord[]>();
      for (const r of resolution.answer) {
        if (r.type === 'RRSIG') continue;
        const key = `${normalizeName(r.name)}/${r.type}`;
        sets.set(key, [...(sets.get(key) ?? []), r]);
      }
      for (const [key, rrset] of sets) {
        const owner = key.slice(0, key.lastIndexOf('/'));
        const link = await v.chainTo(signerZone(owner, rrset[0]!.type, rrsigs));
        if (link.status !== 'secure') {
          verdict = worst(verdict, link);
          continue;
        }
        const checked = verifyRRset({ rrset, rrsigs, dnskeys: link.dnskeys, now });
        if (!checked.ok) {
          verdict = worst(verdict, {
            status: 'bogus',
            reason: { code: checked.code, zone: link.zone, detail: `${key}: ${checked.detail}` },
          });
          continue;
        }
        answerSignatures.push({ owner, type: rrset[0]!.type, expiresIn: checked.result.expiresIn });
        const expansion = checked.result.wildcard;
        if (expansion.kind === 'expanded') {
          const last = resolution.responses.at(-1);
          const records = last
            ? v.denialRecordsFor(link, last.authority)
            : { code: 'denial_missing', zone: link.zone, detail: 'no authority section' };
          denial =
            'code' in records
              ? null
              : records.nsec3.length > 0
                ? proveNsec3WildcardAnswer(owner, expansion.closestEncloser, records.nsec3)
                : proveNsecWildcardAnswer(owner, expansion.closestEncloser, records.nsec);
          if ('code' in records) verdict = worst(verdict, { status: 'bogus', reason: records });
          else if (denial && denial.status !== 'proven')
            verdict = worst(verdict, {
              status: denial.status === 'insecure' ? 'insecure' : 'bogus',
              reason: {
                code: denial.code,
                zone: link.zone,
                detail: `${owner} was answered from a wildcard, but ${denial.detail}`,
              },
            });
        }
      }
      if (resolution.status === 'nxdomain' || resolution.status === 'nodata') {
        const last = resolution.answer.at(-1);
        const qname =
          last?.type === 'CNAME' ? normalizeName((last.data as string) ?? name) : normalizeName(name);
        // The zone that answered is the SOA's owner (for a DS question, the parent's): its keys sign the denial.
        const soa = resolution.authority.find((r) => r.type === 'SOA');
        const link = await v.chainTo(soa && isAtOrAbove(soa.name, qname) ? normalizeName(soa.name) : qname);
        if (link.status !== 'secure') verdict = worst(verdict, link);
        else {
          const records = v.denialRecordsFor(link, resolution.authority);
          if ('code' in records)
            verdict = worst(verdict, {
              status: 'bogus',
              reason: {
                ...records,
                code: records.code === 'no_denial_records' ? 'denial_missing' : records.code,
              },
            });
          else {
            const nx = resolution.status === 'nxdomain';
            denial =
              records.nsec3.length > 0
                ? nx
                  ? proveNsec3Nxdomain(qname, records.nsec3)
                  : proveNsec3Nodata(qname, type, records.nsec3)
                : nx
                  ? proveNsecNxdomain(qname, records.nsec)
                  : proveNsecNodata(qname, type, records.nsec);
            if (denial.status === 'failed')
              verdict = worst(verdict, {
                status: 'bogus',
                reason: {
                  code: denial.code === 'no_denial_records' ? 'denial_missing' : denial.code,
                  zone: link.zone,
                  detail: `the ${nx ? 'NXDOMAIN' : 'NODATA'} answer for ${qname} is not proven: ${denial.detail}`,
                },
              });
            else if (denial.status === 'insecure')
              verdict = worst(verdict, {
                status: 'insecure',
                reason: { code: insecureCode(denial.code), zone: link.zone, detail: denial.detail },
              });
          }
        }
      }
    }
  } catch (err) {
    if (!(err instanceof BudgetSpent)) throw err;
    verdict = {
      status: 'indeterminate',
      reason: {
        code: 'budget_exhausted',
        zone: normalizeName(name),
        detail: `the validation needed more than ${opts.queryBudget ?? VALIDATION_QUERY_BUDGET} upstream queries`,
      },
    };
  }
  return {
    ...verdict,
    chain: v.links,
    resolution: resolution ?? emptyResolution(name, type),
    denial,
    queries: v.queries,
    engineFindings: v.engineFindings,
    answerSignatures,
  };
}

function emptyResolution(name: string, type: string): ResolveResult {
  return {
    qname: normalizeName(name),
    qtype: type,
    status: 'failed',
    rcode: 'SERVFAIL',
    aa: false,
    answer: [],
    authority: [],
    additional: [],
    responses: [],
    path: [],
    queries: [],
    findings: [],
  };
}
