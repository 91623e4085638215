/**
 * netdiag's own DNSSEC validation (RFC 4033–4035, 5155, 6840): the chain of trust from a trust
 * anchor down to the zone of each RRset in an answer, link by link, on what the authoritative
 * servers themselves serve (src/dns-engine) and checked with src/dnssec's primitives. Nobody's
 * AD bit is taken on trust.
 *
 * The walk is top-down, label by label, as DNSViz and delv show it: at each zone Z that is known
 * secure, the next name N below it is asked for DS at Z's servers. A signed DS RRset makes N a
 * secure delegation (then N's DNSKEY RRset must hold a key a supported DS names, and be signed by
 * it); a proven NODATA either says N is a delegation without DS (the chain ends: insecure at N) or
 * that N is no zone cut (the walk goes on in Z); NXDOMAIN ends the walk. The first link that fails
 * makes everything under it bogus, and that link is the reason. Then each RRset of the answer (a
 * CNAME chain's too) is checked with the keys of the zone that signed it, a wildcard expansion
 * with its proof that the name itself does not exist, and a negative answer with its NSEC or NSEC3
 * proof.
 *
 * Verdicts (RFC 4033 §5): secure, insecure (with the zone where the chain of trust ends), bogus
 * (with the first broken link), indeterminate (no anchor covers the name, or the servers or the
 * query budget gave out before a verdict).
 */
import type {
  EngineFinding,
  EngineRecord,
  QueryLog,
  ResolveResult,
  ZoneAnswer,
} from '../../dns-engine/index.js';
import {
  dnskeyInfo,
  dsMatchesKey,
  isAlgorithmSupported,
  isBelow,
  type Nsec3Record,
  type NsecRecord,
  normalizeName,
  nsec3Matches,
  proveNsec3Nodata,
  proveNsec3Nxdomain,
  proveNsec3WildcardAnswer,
  proveNsecNodata,
  proveNsecNxdomain,
  proveNsecWildcardAnswer,
  usableDs,
  verifyRRset,
} from '../../dnssec/index.js';
import type { DenialResult, DnskeyRecord, DsRecord, RrsigRecord } from '../../dnssec/types.js';
import type { TrustAnchors } from './trust-anchors.js';

export type ValidationStatus = 'secure' | 'insecure' | 'bogus' | 'indeterminate';

export interface Reason {
  code: string;
  /** bogus: the zone of the first broken link; insecure: where the chain of trust ends. */
  zone: string;
  detail: string;
}

/** What the validator asks of the engine (IterativeResolver): the answer, and one zone's own servers. */
export interface ValidationEngine {
  resolve(name: string, type: string, opts: { signal?: AbortSignal }): Promise<ResolveResult>;
  askZone(zone: string, qname: string, qtype: string, opts: { signal?: AbortSignal }): Promise<ZoneAnswer>;
}

/** One zone of the chain, as checked. */
export interface ZoneLink {
  zone: string;
  status: ValidationStatus;
  reason: Reason | null;
  /** The DS RRset at the parent (the anchor's DS for a trust-anchor zone). */
  ds: DsRecord[];
  /** DS from the trust anchor rather than the parent. */
  anchored: boolean;
  dnskeys: DnskeyRecord[];
  /** The RRSIGs over the DNSKEY RRset, and over the DS RRset at the parent. */
  dnskeyRrsigs: RrsigRecord[];
  dsRrsigs: RrsigRecord[];
  /** The key tags a DS matched and the key that signed the DNSKEY RRset. */
  matchedKeyTags: number[];
  signingKeyTag: number | null;
}

export interface ValidationResult {
  status: ValidationStatus;
  reason: Reason | null;
  chain: ZoneLink[];
  resolution: ResolveResult;
  /** The denial that proves a negative answer or a wildcard's expansion, when one was needed. */
  denial: DenialResult | null;
  queries: QueryLog[];
  engineFindings: EngineFinding[];
  /** The RRSIGs that validated the answer: when each expires drives the cache lifetime and a finding. */
  answerSignatures: { owner: string; type: string; expiresIn: number }[];
}

export interface ValidateOptions {
  anchors: TrustAnchors;
  now?: Date;
  signal?: AbortSignal;
  /** Upstream queries one validation may send in all (resolution and chain). */
  queryBudget?: number;
}

export const VALIDATION_QUERY_BUDGET = 150;

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

/** The catalogue's names for src/dnssec's insecure denials. */
function insecureCode(code: string): string {
  return code === 'opt_out' ? 'nsec3_opt_out' : code;
}

const RANK: Record<ValidationStatus, number> = { secure: 0, insecure: 1, indeterminate: 2, bogus: 3 };

class BudgetSpent extends Error {}

// The engine's records are dns-packet's decoded answers, as src/dnssec reads them; only the
// declared types differ (dns-packet's class union against a string).
const rrsigsOf = (records: readonly EngineRecord[]) =>
  records.filter((r) => r.type === 'RRSIG') as unknown as RrsigRecord[];
const ofType = <R>(records: readonly EngineRecord[], type: string) =>
  records.filter((r) => r.type === type) as unknown as R[];

/** Ancestors of `name` strictly below `zone`, top first: com, example.com, www.example.com under '.'. */
function namesBelow(zone: string, name: string): string[] {
  const labels = normalizeName(name) === '.' ? [] : normalizeName(name).split('.');
  const out: string[] = [];
  for (let i = labels.length - 1; i >= 0; i--) {
    const candidate = labels.slice(i).join('.');
    if (isBelow(candidate, zone)) out.push(candidate);
  }
  return out;
}

export class Validation {
  readonly #engine: ValidationEngine;
  readonly #opts: ValidateOptions;
  readonly #now: Date;
  readonly #links = new Map<string, ZoneLink>();
  readonly queries: QueryLog[] = [];
  readonly engineFindings: EngineFinding[] = [];

  constructor(engine: ValidationEngine, opts: ValidateOptions) {
    this.#engine = engine;
    this.#opts = opts;
    this.#now = opts.now ?? new Date();
  }

  get links(): ZoneLink[] {
    return [...this.#links.values()];
  }

  #spend(log: readonly QueryLog[], findings: readonly EngineFinding[]): void {
    this.queries.push(...log);
    this.engineFindings.push(...findings);
    if (this.queries.length > (this.#opts.queryBudget ?? VALIDATION_QUERY_BUDGET)) throw new BudgetSpent();
  }

  async #ask(zone: string, qname: string, qtype: string): Promise<ZoneAnswer> {
    const answer = await this.#engine.askZone(zone, qname, qtype, { signal: this.#opts.signal });
    this.#spend(answer.queries, answer.findings);
    return answer;
  }

  #link(zone: string, partial: Partial<ZoneLink>): ZoneLink {
    const link: ZoneLink = {
      zone,
      status: 'indeterminate',
      reason: null,
      ds: [],
      anchored: false,
      dnskeys: [],
      dnskeyRrsigs: [],
      dsRrsigs: [],
      matchedKeyTags: [],
      signingKeyTag: null,
      ...partial,
    };
    this.#links.set(zone, link);
    return link;
  }

  /** The deepest trust anchor at or above `name`. */
  #anchorFor(name: string): string | undefined {
    const owners = [...this.#opts.anchors.ds.keys(), ...this.#opts.anchors.dnskey.keys()];
    return owners
      .filter((o) => o === '.' || normalizeName(name) === o || isBelow(name, o))
      .sort((a, b) => b.length - a.length)[0];
  }

  /**
   * A zone whose DS set (from the parent, or an anchor) is known: its DNSKEY RRset must hold a key a
   * supported DS names, signed by such a key.
   */
  async #keys(zone: string, ds: DsRecord[], fields: Partial<ZoneLink>): Promise<ZoneLink> {
    const asked = await this.#ask(zone, zone, 'DNSKEY');
    const answer = asked.response?.answer ?? [];
    const dnskeys = ofType<DnskeyRecord>(answer, 'DNSKEY');
    const dnskeyRrsigs = rrsigsOf(answer).filter((s) => s.data.typeCovered === 'DNSKEY');
    const base = { ...fields, ds, dnskeys, dnskeyRrsigs };
    if (!asked.response) {
      return this.#link(zone, {
        ...base,
        status: 'indeterminate',
        reason: {
          code: 'servers_unreachable',
          zone,
          detail: `no server of ${zone} answered the DNSKEY question`,
        },
      });
    }
    const trustedKeys = [...(this.#opts.anchors.dnskey.get(zone) ?? [])];
    const usable = usableDs(ds);
    if (usable.length === 0 && trustedKeys.length === 0) {
      const algorithms = [...new Set(ds.map((d) => `${d.data.algorithm}/${d.data.digestType}`))].join(', ');
      const code = ds.every((d) => !isAlgorithmSupported(d.data.algorithm))
        ? 'ds_algorithm_unsupported'
        : 'ds_digest_unsupported';
      return this.#link(zone, {
        ...base,
        status: 'insecure',
        reason: {
          code,
          zone,
          detail: `the DS records for ${zone} name only algorithms or digest types this validator does not implement (algorithm/digest ${algorithms}): the zone is treated as unsigned (RFC 4035 §5.2, RFC 6840 §5.2)`,
        },
      });
    }
    if (dnskeys.length === 0) {
      return this.#link(zone, {
        ...base,
        status: 'bogus',
        reason: {
          code: 'dnskey_missing',
          zone,
          detail: `${zone} has DS records at its parent but serves no DNSKEY RRset`,
        },
      });
    }
    const matched = dnskeys.filter(
      (k) =>
        usable.some((d) => dsMatchesKey(d.data, zone, k.data).ok) ||
        trustedKeys.some((t) => t.algorithm === k.data.algorithm && t.key.equals(k.data.key)),
    );
    const matchedKeyTags = matched.map((k) => dnskeyInfo(k.data).keyTag);
    if (matched.length === 0) {
      const tags = usable.map((d) => d.data.keyTag).join(', ');
      const served = dnskeys.map((k) => dnskeyInfo(k.data).keyTag).join(', ');
      // A key with the DS's tag and algorithm whose digest differs is another fault than a key that is not there.
      const named = usable.some((d) =>
        dnskeys.some((k) => {
          const m = dsMatchesKey(d.data, zone, k.data);
          return !m.ok && m.code === 'ds_digest_mismatch';
        }),
      );
      return this.#link(zone, {
        ...base,
        status: 'bogus',
        reason: named
          ? {
              code: 'ds_digest_mismatch',
              zone,
              detail: `the DS for ${zone} names its key ${tags} by tag and algorithm, but that key's digest is not the DS's`,
            }
          : {
              code: 'no_dnskey_matches_ds',
              zone,
              detail: `no DNSKEY of ${zone} matches its DS (key tag ${tags}); the keys served are ${served}`,
            },
      });
    }
    const verified = verifyRRset({ rrset: dnskeys, rrsigs: dnskeyRrsigs, dnskeys: matched, now: this.#now });
    if (!verified.ok) {
      return this.#link(zone, {
        ...base,
        matchedKeyTags,
        status: 'bogus',
        reason: {
          code: verified.code,
          zone,
          detail: `the DNSKEY RRset of ${zone} is not signed by a key its DS names: ${verified.detail}`,
        },
      });
    }
    return this.#link(zone, {
      ...base,
      matchedKeyTags,
      signingKeyTag: verified.result.keyTag,
      status: 'secure',
      reason: null,
    });
  }

  /** Validated NSEC/NSEC3 records of a secure zone's response, or the reason they are not. */
  denialRecordsFor(
    link: ZoneLink,
    authority: readonly EngineRecord[],
  ): { nsec: NsecRecord[]; nsec3: Nsec3Record[] } | Reason {
    const rrsigs = rrsigsOf(authority);
    const nsec: NsecRecord[] = [];
    const nsec3: Nsec3Record[] = [];
    for (const type of ['NSEC', 'NSEC3'] as const) {
      const records = authority.filter((r) => r.type === type);
      const owners = [...new Set(records.map((r) => normalizeName(r.name)))];
      for (const owner of owners) {
        const rrset = records.filter((r) => normalizeName(r.name) === owner);
        const verified = verifyRRset({ rrset, rrsigs, dnskeys: link.dnskeys, now: this.#now });
        if (!verified.ok)
          return {
            code: verified.code,
            zone: link.zone,
            detail: `the ${type} record at ${owner} is not validated: ${verified.detail}`,
          };
        if (type === 'NSEC') nsec.push(...(rrset as unknown as NsecRecord[]));
        else nsec3.push(...(rrset as unknown as Nsec3Record[]));
      }
    }
    return { nsec, nsec3 };
  }

  /**
   * The chain from the trust anchor to the zone `name` is in, returning the deepest link: secure
   * (its keys then sign `name`'s records), insecure or bogus (which then holds for `name` too).
   */
  async chainTo(name: string): Promise<ZoneLink> {
    const anchor = this.#anchorFor(name);
    if (anchor === undefined) {
      return this.#link('.', {
        status: 'indeterminate',
        reason: { code: 'no_trust_anchor', zone: '.', detail: `no trust anchor covers ${name}` },
      });
    }
    let link =
      this.#links.get(anchor) ??
      (await this.#keys(
        anchor,
        (this.#opts.anchors.ds.get(anchor) ?? []).map((data) => ({ name: anchor, type: 'DS', ttl: 0, data })),
        { anchored: true },
      ));
    for (const child of namesBelow(anchor, name)) {
      if (link.status !== 'secure') return link;
      const known = this.#links.get(child);
      if (known) {
        link = known;
        continue;
      }
      const asked = await this.#ask(link.zone, child, 'DS');
      const response = asked.response;
      if (!response) {
        return this.#link(child, {
          status: 'indeterminate',
          reason: {
            code: 'servers_unreachable',
            zone: link.zone,
            detail: `no server of ${link.zone} answered for the DS of ${child}`,
          },
        });
      }
      if (asked.status === 'cname') return link;
      const ds = ofType<DsRecord>(response.answer, 'DS');
      if (ds.length > 0) {
        const dsRrsigs = rrsigsOf(response.answer).filter((s) => s.data.typeCovered === 'DS');
        const verified = verifyRRset({ rrset: ds, rrsigs: dsRrsigs, dnskeys: link.dnskeys, now: this.#now });
        if (!verified.ok) {
          return this.#link(child, {
            ds,
            dsRrsigs,
            status: 'bogus',
            reason: {
              code: verified.code,
              zone: link.zone,
              detail: `the DS RRset for ${child} in ${link.zone} is not validated: ${verified.detail}`,
            },
          });
        }
        link = await this.#keys(child, ds, { dsRrsigs });
        continue;
      }
      // No DS: the parent must prove it, and say whether the name is a delegation at all.
      const records = this.denialRecordsFor(link, response.authority);
      if ('code' in records) return this.#link(child, { status: 'bogus', reason: records });
      const nx = asked.status === 'nxdomain';
      const proof =
        records.nsec3.length > 0
          ? nx
            ? proveNsec3Nxdomain(child, records.nsec3)
            : proveNsec3Nodata(child, 'DS', records.nsec3)
          : nx
            ? proveNsecNxdomain(child, records.nsec)
            : proveNsecNodata(child, 'DS', records.nsec);
      if (proof.status === 'failed') {
        return this.#link(child, {
          status: 'bogus',
          reason: {
            code: proof.code,
            zone: link.zone,
            detail: `${link.zone} does not prove that ${child} has no DS: ${proof.detail}`,
          },
        });
      }
      if (proof.status === 'insecure') {
        return this.#link(child, {
          status: 'insecure',
          reason: {
            code: insecureCode(proof.code),
            // Past 150 iterations the parent's own proofs are what cannot be trusted; an opt-out span ends at the child.
            zone: proof.code === 'opt_out' ? child : link.zone,
            detail: proof.detail,
          },
        });
      }
      if (proof.kind === 'insecure_delegation') {
        // An NSEC3 at the child's own name proves NS without DS; without one, an opt-out span covers it (RFC 5155 §6).
        const optOut = records.nsec3.length > 0 && !records.nsec3.some((r) => nsec3Matches(r, child));
        return this.#link(child, {
          status: 'insecure',
          reason: optOut
            ? {
                code: 'nsec3_opt_out',
                zone: child,
                detail: `${child} falls in an opt-out NSEC3 span of ${link.zone}: it may be delegated without DS, so it is treated as unsigned (RFC 5155 §6)`,
              }
            : {
                code: 'no_ds',
                zone: child,
                detail: `${child} is delegated from ${link.zone} without DS (proven by ${proof.records[0]?.type ?? 'NSEC'}): the zone is unsigned`,
              },
        });
      }
      if (nx || proof.kind !== 'no_ds') return link;
    }
    return link;
  }
}

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
