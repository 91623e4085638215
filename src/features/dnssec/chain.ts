/**
 * The chain of trust, top down (validate.ts uses it for every RRset of an answer): at each zone Z
 * that is known secure, the next name N below it is asked for DS at Z's servers. A signed DS RRset
 * makes N a secure delegation (then N's DNSKEY RRset must hold a key a supported DS names, and be
 * signed by it); a proven NODATA either says N is a delegation without DS (the chain ends: insecure
 * at N) or that N is no zone cut (the walk goes on in Z); NXDOMAIN ends the walk. The first link
 * that fails makes everything under it bogus, and that link is the reason. Each zone is checked once
 * per validation (the links are kept), its DS and DNSKEY answers once per TTL (the engine's
 * infrastructure cache).
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
  proveNsecNodata,
  proveNsecNxdomain,
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

/** The catalogue's names for src/dnssec's insecure denials. */
export function insecureCode(code: string): string {
  return code === 'opt_out' ? 'nsec3_opt_out' : code;
}

export class BudgetSpent extends Error {}

// The engine's records are dns-packet's decoded answers, as src/dnssec reads them; only the
// declared types differ (dns-packet's class union against a string).
export const rrsigsOf = (records: readonly EngineRecord[]) =>
  records.filter((r) => r.type === 'RRSIG') as unknown as RrsigRecord[];
export const ofType = <R>(records: readonly EngineRecord[], type: string) =>
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
