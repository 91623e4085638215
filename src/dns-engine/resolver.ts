/**
 * Iterative resolution from the root, as a validating resolver's front half
 * (unbound's iterator is the model): netdiag asks the authoritative servers
 * itself, zone cut by zone cut, so its DNSSEC validator sees what each zone
 * really serves, with every RRSIG, and nobody's AD bit is taken on trust.
 *
 *   const engine = new IterativeResolver({ cache, rootHints: config.dnsRootHints,
 *                                          allowCidrs: config.unsafeAllowTargetCidrs });
 *   const r = await engine.resolve('www.example.com', 'A', { signal });
 *   r.status, r.answer (with RRSIGs), r.path (zone cuts), r.queries, r.findings
 *   const keys = await engine.askZone('example.com', 'example.com', 'DNSKEY');
 *   const ds = await engine.askZone('com', 'example.com', 'DS');
 *
 * - resolve(): from the closest zone cut the infrastructure cache knows (else
 *   the root hints), referrals are followed down (response.ts decides what a
 *   response is, and which glue is credible); a CNAME leading out of a zone
 *   restarts at its target; a DS question starts at the parent of the name,
 *   where DS lives (RFC 4035 §3.1.4.1), so resolve(zone, 'DS') also tells the
 *   validator which zone is the parent (the response's `zone`).
 * - askZone(): one question to the zone's own servers (found through the cache
 *   or by walking down to the zone's cut): DNSKEY at a zone, DS at its parent.
 * - DS and DNSKEY responses, whichever call asked, are cached whole for their
 *   TTL (infra-cache.ts), so a warm chain costs no query for them.
 * - Name servers without glue are looked up by the same iteration (nested, to
 *   a depth limit); a lookup that is already under way is a delegation loop.
 * - Each request has a query budget and the limits of request.ts, so a loop, a
 *   long CNAME chain or an NXNS referral ends quickly with a finding; a failed
 *   resolution is a result (status 'failed', rcode SERVFAIL, findings), not an
 *   exception. Only the caller's signal makes a call reject.
 */
import type { Cache, Clock } from '../cache/types.js';
import { normalizeDnsName } from '../providers/dns/names.js';
import { rcodeName } from '../providers/dns/parameters.js';
import { InfraCache } from './infra-cache.js';
import { canonicalName, parentName, sameName, selfAndAncestors } from './names.js';
import {
  DEFAULT_QUERY_BUDGET,
  MAX_CNAME_HOPS,
  MAX_DEPTH,
  MAX_REFERRALS,
  RequestState,
  Stopped,
} from './request.js';
import { classify, type Referral, type Sections } from './response.js';
import { ServerSelection } from './server-selection.js';
import type {
  EngineQueryType,
  EngineRecord,
  ResolveOptions,
  ResolveResult,
  ZoneAnswer,
  ZoneCut,
  ZoneResponse,
} from './types.js';
import {
  askZoneServers,
  canonicalAddress,
  mayContactAddress,
  type ServerAnswer,
  type ZoneServersDeps,
} from './zone-servers.js';

export interface IterativeResolverOptions {
  /** The project's cache (ctx.cache): the infrastructure cache lives in it, shared by every request. */
  cache: Cache;
  /** DNS_ROOT_HINTS. */
  rootHints: readonly string[];
  /** UNSAFE_ALLOW_TARGET_CIDRS: name-server addresses inside these are contacted though not public. */
  allowCidrs: readonly string[];
  /** Queries one request may send, nested lookups included. Default 150. */
  queryBudget?: number;
  /** Never wait less than this for a server over UDP. Default 400 ms. */
  minTimeoutMs?: number;
  /** Never wait more than this for a server (and the whole of a TCP exchange). Default 3000 ms. */
  maxTimeoutMs?: number;
  /** For the random order among equally fast servers; tests fix it. */
  random?: () => number;
  clock?: Clock;
}

/** The steps of one resolution: the zone cuts walked and the responses that ended each step. */
interface Trail {
  path: ZoneCut[];
  responses: ZoneResponse[];
}

/** KEPT_TYPES answers are kept whole in the infrastructure cache, for the validator. */
const KEPT_TYPES: ReadonlySet<string> = new Set(['DS', 'DNSKEY']);

type Asked = ServerAnswer & { from: 'server' | 'cache' };

type Final = Asked & {
  zone: string;
  verdict: { kind: 'answer' | 'nodata' | 'nxdomain' };
  /** The whole CNAME chain and the records asked for. */
  records: EngineRecord[];
};

const NEVER = new AbortController().signal;

export class IterativeResolver {
  readonly #infra: InfraCache;
  readonly #selection: ServerSelection;
  readonly #rootHints: readonly string[];
  readonly #budget: number;
  readonly #deps: ZoneServersDeps;

  constructor(opts: IterativeResolverOptions) {
    this.#infra = new InfraCache(opts.cache, opts.clock);
    this.#selection = new ServerSelection(opts.random ? { random: opts.random } : {});
    this.#rootHints = opts.rootHints.map((a) => canonicalAddress(a) ?? a);
    this.#budget = opts.queryBudget ?? DEFAULT_QUERY_BUDGET;
    this.#deps = {
      selection: this.#selection,
      allowCidrs: opts.allowCidrs,
      minTimeoutMs: opts.minTimeoutMs ?? 400,
      maxTimeoutMs: opts.maxTimeoutMs ?? 3000,
      lookupAddresses: (req, name, zone, depth) => this.#lookupAddresses(req, name, zone, depth),
    };
  }

  /**
   * Whether anything can be resolved at all: false when outbound safety refuses every root hint
   * (DNS_ROOT_HINTS outside UNSAFE_ALLOW_TARGET_CIDRS, as the test configuration has it), so the
   * features that validate say "not checked" at once instead of asking in vain.
   */
  get usable(): boolean {
    return this.#rootHints.some((address) => mayContactAddress(address, this.#deps.allowCidrs));
  }

  /**
   * Resolves `name`/`type` from the root (or the closest cached cut). A failed resolution is a
   * result (status 'failed'); it rejects only when `signal` aborts, or with a 400 for a name
   * that cannot be asked (InvalidDnsNameError).
   */
  async resolve(name: string, type: EngineQueryType, opts: ResolveOptions = {}): Promise<ResolveResult> {
    const qname = normalizeDnsName(name);
    const req = new RequestState(this.#budget, opts.signal ?? NEVER);
    const trail: Trail = { path: [], responses: [] };
    const common = { qname, qtype: type, responses: trail.responses, path: trail.path };
    try {
      const final = await this.#lookup(req, qname, type, 0, trail);
      return {
        ...common,
        status: final.verdict.kind,
        rcode: rcodeName(final.message.rcode),
        aa: final.message.flags.aa,
        answer: final.records,
        authority: final.verdict.sections.authority,
        additional: final.verdict.sections.additional,
        queries: req.queries,
        findings: req.findings,
      };
    } catch (err) {
      if (!(err instanceof Stopped)) throw err;
      return {
        ...common,
        status: 'failed',
        rcode: 'SERVFAIL',
        aa: false,
        answer: [],
        authority: [],
        additional: [],
        queries: req.queries,
        findings: req.findings,
      };
    }
  }

  /**
   * Asks `zone`'s own servers about `qname`/`qtype` and returns their response as it is
   * (a DS or DNSKEY response from the cache while its TTL lasts).
   */
  async askZone(
    zone: string,
    qname: string,
    qtype: EngineQueryType,
    opts: ResolveOptions = {},
  ): Promise<ZoneAnswer> {
    const z = normalizeDnsName(zone);
    const q = normalizeDnsName(qname);
    const req = new RequestState(this.#budget, opts.signal ?? NEVER);
    const common = { zone: z, qname: q, qtype, queries: req.queries, findings: req.findings };
    try {
      // A cached answer needs no cut: it is looked for before the cut is.
      const got =
        (await this.#cached(z, q, qtype)) ?? (await this.#ask(req, await this.#cutFor(req, z), q, qtype, 0));
      return { ...common, status: got.verdict.kind, response: zoneResponse(z, got, q, qtype) };
    } catch (err) {
      if (!(err instanceof Stopped)) throw err;
      return { ...common, status: 'failed', response: undefined };
    }
  }

  /** Resolves one name to its final response, following CNAMEs from zone to zone. */
  async #lookup(
    req: RequestState,
    qname: string,
    qtype: EngineQueryType,
    depth: number,
    trail: Trail,
  ): Promise<Final> {
    const chain: EngineRecord[] = [];
    const seen = [qname];
    let sname = qname;
    for (let hops = 0; ; hops++) {
      const got = await this.#iterate(req, sname, qtype, depth, trail);
      const { verdict } = got;
      if (verdict.kind !== 'cname') return { ...got, verdict, records: [...chain, ...verdict.records] };
      chain.push(...verdict.records);
      for (const rr of verdict.records) {
        const owner = canonicalName(rr.name);
        if (rr.type === 'CNAME' && !seen.includes(owner)) seen.push(owner);
      }
      const target = verdict.target;
      if (seen.some((n) => sameName(n, target))) {
        throw req.stop({
          code: 'cname_loop',
          severity: 'error',
          zone: got.zone,
          name: target,
          detail: `the CNAME chain of ${qname} loops: ${[...seen, target].join(' → ')}`,
        });
      }
      if (hops + 1 > MAX_CNAME_HOPS) {
        throw req.stop({
          code: 'cname_chain_too_long',
          severity: 'error',
          zone: got.zone,
          name: target,
          detail: `the CNAME chain of ${qname} is longer than ${MAX_CNAME_HOPS} (at ${target})`,
        });
      }
      seen.push(target);
      sname = target;
    }
  }

  /** Walks down to the zone that answers `qname` itself, and returns its answer (which may be a CNAME). */
  async #iterate(
    req: RequestState,
    qname: string,
    qtype: EngineQueryType,
    depth: number,
    trail: Trail,
  ): Promise<Asked & { zone: string; verdict: { kind: 'answer' | 'nodata' | 'nxdomain' | 'cname' } }> {
    const known = await this.#knownCuts(qtype === 'DS' ? parentName(qname) : qname);
    let cut = known.at(-1) as ZoneCut;
    trail.path.push(...known);
    for (let referrals = 0; ; referrals++) {
      const got = await this.#ask(req, cut, qname, qtype, depth);
      const { verdict } = got;
      if (verdict.kind !== 'referral') {
        trail.responses.push(zoneResponse(cut.zone, got, qname, qtype));
        return { ...got, verdict, zone: cut.zone };
      }
      cut = await this.#follow(req, cut, got.server, verdict.referral, referrals);
      trail.path.push(cut);
    }
  }

  /**
   * The zone's answer from its servers. DS and DNSKEY answers (and negative answers to them)
   * come from the cache while their TTL lasts, and are kept there when they do not.
   */
  async #ask(
    req: RequestState,
    cut: ZoneCut,
    qname: string,
    qtype: EngineQueryType,
    depth: number,
  ): Promise<Asked> {
    const cached = await this.#cached(cut.zone, qname, qtype);
    if (cached) return cached;
    const got = await askZoneServers(this.#deps, req, cut, { name: qname, type: qtype }, depth);
    const kind = got.verdict.kind;
    if (KEPT_TYPES.has(qtype) && (kind === 'answer' || kind === 'nodata' || kind === 'nxdomain')) {
      await this.#infra.putResponse(cut.zone, qname, qtype, { ...got, negative: kind !== 'answer' });
    }
    return { ...got, from: 'server' };
  }

  async #cached(zone: string, qname: string, qtype: EngineQueryType): Promise<Asked | undefined> {
    if (!KEPT_TYPES.has(qtype)) return undefined;
    const cached = await this.#infra.getResponse(zone, qname, qtype);
    if (!cached) return undefined;
    const verdict = classify(cached.message, zone, qname, qtype);
    if (verdict.kind === 'lame') return undefined;
    return { server: cached.server, verdict, message: cached.message, wire: Buffer.alloc(0), from: 'cache' };
  }

  /** The cut a referral leads to: glue checked and reported, the cut cached. */
  async #follow(
    req: RequestState,
    from: ZoneCut,
    server: string,
    referral: Referral,
    referrals: number,
  ): Promise<ZoneCut> {
    for (const { name, address } of referral.outOfBailiwick) {
      req.report({
        code: 'glue_out_of_bailiwick',
        severity: 'warning',
        zone: from.zone,
        server,
        name,
        detail:
          `${server}, a server of ${from.zone}, sent glue ${name} → ${address} for ${referral.zone}; ` +
          `${name} is outside ${from.zone}, so it is ignored (RFC 2181 §5.4.1) and ${name} is looked up instead`,
      });
    }
    if (referrals + 1 > MAX_REFERRALS) {
      throw req.stop({
        code: 'referral_limit',
        severity: 'error',
        zone: referral.zone,
        detail: `more than ${MAX_REFERRALS} referrals for one name`,
      });
    }
    const nameservers = referral.nsNames.map((name) => ({
      name,
      addresses: (referral.glue.get(name) ?? []).map((a) => canonicalAddress(a) ?? a),
    }));
    await this.#infra.putCut(
      referral.zone,
      nameservers.map((ns) => ({ name: ns.name, addresses: [...ns.addresses] })),
      referral.ttl,
    );
    return { zone: referral.zone, nameservers, from: 'referral' };
  }

  /**
   * The cuts known at and above `name`: the root from the hints, then every cut the cache holds,
   * top down; the last is where iteration starts. Copies of their own (a cut gains the addresses
   * looked up for it).
   */
  async #knownCuts(name: string): Promise<ZoneCut[]> {
    const root: ZoneCut = {
      zone: '.',
      nameservers: this.#rootHints.map((address) => ({ name: null, addresses: [address] })),
      from: 'hints',
    };
    const zones = selfAndAncestors(name).filter((z) => z !== '.');
    const cached = await Promise.all(zones.map((zone) => this.#infra.getCut(zone)));
    const cuts: ZoneCut[] = [root];
    for (let i = zones.length - 1; i >= 0; i--) {
      const ns = cached[i];
      if (!ns) continue;
      const nameservers = ns.map((n) => ({ name: n.name, addresses: [...n.addresses] }));
      cuts.push({ zone: zones[i] as string, nameservers, from: 'cache' });
    }
    return cuts;
  }

  /** `zone`'s own cut: from the cache, or by walking down from the closest known one. */
  async #cutFor(req: RequestState, zone: string): Promise<ZoneCut> {
    const known = await this.#knownCuts(zone);
    let cut = known.at(-1) as ZoneCut;
    if (sameName(cut.zone, zone)) return cut;
    for (let referrals = 0; ; referrals++) {
      const got = await askZoneServers(this.#deps, req, cut, { name: zone, type: 'NS' }, 0);
      const { verdict } = got;
      if (verdict.kind === 'referral') {
        cut = await this.#follow(req, cut, got.server, verdict.referral, referrals);
        if (sameName(cut.zone, zone)) return cut;
        continue;
      }
      // A server of the parent that serves the zone too answers its NS RRset itself.
      const ns = verdict.kind === 'answer' ? verdict.records.filter((rr) => rr.type === 'NS') : [];
      if (ns.length > 0) {
        const nameservers = ns.map((rr) => ({ name: normalizeDnsName(String(rr.data)), addresses: [] }));
        return { zone, nameservers, from: 'referral' };
      }
      throw req.stop({
        code: 'not_a_zone',
        severity: 'error',
        zone,
        detail: `${zone} is not a delegated zone: ${got.server}, a server of ${cut.zone}, answered ${verdict.kind}`,
      });
    }
  }

  /** A name server's addresses (A, else AAAA), from the cache or looked up, within the request's limits. */
  async #lookupAddresses(req: RequestState, name: string, zone: string, depth: number): Promise<string[]> {
    const cached = await this.#infra.getAddresses(name);
    if (cached) return [...cached];
    if (req.lookups.some((n) => sameName(n, name))) {
      req.report({
        code: 'delegation_loop',
        severity: 'error',
        zone,
        name,
        detail:
          `the name servers of ${zone} can only be found through ${name}, whose lookup is already under way: ` +
          `${[...req.lookups, name].join(' → ')}`,
      });
      return [];
    }
    if (depth > MAX_DEPTH) return [];
    req.lookups.push(name);
    try {
      const trail: Trail = { path: [], responses: [] };
      for (const type of ['A', 'AAAA'] as const) {
        const final = await this.#lookup(req, name, type, depth, trail);
        if (final.verdict.kind === 'nxdomain') {
          req.nxTarget(zone, name);
          return [];
        }
        const records = final.records.filter((rr) => rr.type === type);
        const addresses = records
          .map((rr) => canonicalAddress(String(rr.data)))
          .filter((a) => a !== undefined);
        if (addresses.length > 0) {
          await this.#infra.putAddresses(name, addresses, Math.min(...records.map((rr) => rr.ttl ?? 0)));
          return addresses;
        }
      }
      return [];
    } catch (err) {
      if (err instanceof Stopped && !err.fatal) return [];
      throw err;
    } finally {
      req.lookups.pop();
    }
  }
}

function zoneResponse(
  zone: string,
  got: Pick<Asked, 'server' | 'message' | 'from'> & { verdict: { sections: Sections } },
  qname: string,
  qtype: string,
): ZoneResponse {
  return {
    zone,
    server: got.server,
    qname,
    qtype,
    rcode: rcodeName(got.message.rcode),
    aa: got.message.flags.aa,
    ...got.verdict.sections,
    from: got.from,
  };
}
