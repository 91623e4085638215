/**
 * The SPF evaluation tree (RFC 7208 §4.6.4, §5.2, §6.1): from a domain's
 * record through every include and redirect, counting the DNS-querying terms
 * and void lookups that decide a permerror. Record syntax is record.ts's;
 * the verdict drawn from the counts is the email-security check's
 * (features/email/spf.ts).
 *
 * The tree is walked one level at a time: every DNS query a level needs (the
 * include/redirect targets' TXT and the a/mx/exists lookups) is sent at once,
 * so the wall time is about the depth of the tree in round trips, not the
 * number of queries. It is followed past the 10-lookup limit, so the counts
 * are exact and an owner learns how much to cut; where a receiver would stop
 * is then found by stop.ts, replaying the finished tree in evaluation
 * order.
 *
 * Why one file: the walk is one state machine over the levels of one tree;
 * visiting a record, expanding its terms, following its targets and resolving
 * its a/mx/exists terms all update the same counters and level queue.
 */
import { type DnsOutcome, type Finding, finding, isVoid, type MailDns } from '../email/types.js';
import {
  hasMacros,
  parseSpfRecord,
  type SpfMechanism,
  type SpfMechanismName,
  type SpfModifier,
  type SpfQualifier,
  type SpfTerm,
  spfRecords,
} from './record.js';
import { NAMES_PER_LOOKUP_LIMIT } from './spf-types.js';
import { findPermerrorPoint, type ReplayTerm, type SpfPermerrorPoint } from './stop.js';

/**
 * Bounds on our own work. A tree within the limit has at most 10 records below
 * the root, at most 10 deep; these let one over it be counted to the end, and
 * only past them are the counts lower bounds. Each level costs a round trip,
 * so the depth bound is the tighter one (trees over the limit grow wide, with
 * many senders' includes, not deep).
 */
const MAX_RECORDS_FOLLOWED = 40;
const MAX_DEPTH = 15;
const MAX_TERMINAL_QUERIES = 40;

/** Terms that cost a DNS query (RFC 7208 §4.6.4); `redirect` is counted where it is used. */
const LOOKUP_MECHANISMS: ReadonlySet<SpfMechanismName> = new Set(['include', 'a', 'mx', 'ptr', 'exists']);

export type SpfNodeState =
  /** Exactly one valid record. */
  | 'ok'
  /** No SPF record (the root has no policy; an include/redirect target without one is a permerror). */
  | 'none'
  | 'multiple_records'
  | 'syntax_error'
  | 'loop'
  /** Its domain-spec has macros: it depends on each message and is not followed. */
  | 'macro'
  /** Left out: our own work cap was reached (40 records, 15 deep; never the 10-lookup limit, which is counted past). */
  | 'not_followed'
  /** A DNS failure (temperror). */
  | 'error';

export interface SpfTermReport {
  term: string;
  /** DNS-querying terms this term counts (0 or 1, RFC 7208 §4.6.4). */
  lookups: number;
  /** This term's lookup found nothing (NOERROR with no records, or NXDOMAIN). */
  void: boolean;
  note?: string;
}

export interface SpfNode {
  domain: string;
  via: 'root' | 'include' | 'redirect';
  /** The qualifier of the include that led here (`+` for root and redirect). */
  qualifier: SpfQualifier;
  depth: number;
  /** Index of the parent node in the flat list; null for the root. */
  parent: number | null;
  state: SpfNodeState;
  record: string | null;
  /** DNS-querying terms in this record. */
  lookups: number;
  void_lookups: number;
  terms: SpfTermReport[];
  problem?: string;
}

/** What a walk found; the email-security check (features/email/spf.ts) turns it into a verdict. */
export interface SpfTree {
  /** Pre-order, the root first; a record's includes in the order written, then its redirect (evaluation order). */
  nodes: SpfNode[];
  /** Problems found in the records reached, in the order they were found. */
  findings: Finding[];
  /** DNS-querying terms over the whole tree (RFC 7208 §4.6.4), past the limit too. */
  lookups: number;
  voids: number;
  /** A DNS lookup failed somewhere: the result is a temperror. */
  temperror: boolean;
  /** A reached record is missing, duplicated, malformed or part of a loop: a permerror. */
  structural: boolean;
  /** An `mx` term returned more than NAMES_PER_LOOKUP_LIMIT hosts. */
  mxOverLimit: boolean;
  /** False when an include or redirect was not followed (macros, work cap): `lookups` is then a lower bound. */
  complete: boolean;
  /** False when `complete` is, or some a/mx/exists term was left unresolved by the work cap: `voids` is then a lower bound. */
  voidsComplete: boolean;
  /** The `all` that ends evaluation at the top, through redirects; null when there is none. */
  effectiveAll: `${SpfQualifier}all` | null;
  /** Where receivers stop with permerror; null when no term does (or the whole record is a permerror, or a temperror). */
  permerrorAt: SpfPermerrorPoint | null;
}

/** One term of a visited record: what the replay reads, and the report shown in the tree. */
interface WorkTerm extends ReplayTerm {
  /** The same object as in the node's `terms`. */
  report: SpfTermReport;
}

interface WorkNode extends SpfNode {
  id: number;
  children: number[];
  work: WorkTerm[];
  /** The first `all` qualifier in this record. */
  all?: SpfQualifier;
  /** Child id of the redirect followed from this record. */
  redirectChild?: number;
  /** The include or redirect term of the parent that leads here. */
  from?: WorkTerm;
  path: string[];
}

/** An include/redirect target found on one level, fetched with the others of the next. */
interface Pending {
  id: number;
  domain: string;
  path: string[];
}

/**
 * Walks the SPF tree of `domain`, whose TXT answer (`rootAnswer`) the caller
 * has already fetched. Every branch is followed (no client address is known),
 * so the counts are what a receiver would reach in the worst case.
 */
export async function walkSpfTree(
  domain: string,
  rootAnswer: DnsOutcome<string>,
  dns: MailDns,
): Promise<SpfTree> {
  const walk = new SpfWalk(dns);
  await walk.run(domain, rootAnswer);
  const { nodes, index } = flatten(walk.nodes);
  const stop = walk.temperror ? null : findPermerrorPoint(walk.nodes);
  return {
    nodes,
    findings: walk.findings,
    lookups: walk.lookups,
    voids: walk.voids,
    temperror: walk.temperror,
    structural: walk.structural,
    mxOverLimit: walk.mxOverLimit,
    complete: walk.complete,
    voidsComplete: walk.complete && walk.terminalsComplete,
    effectiveAll: effectiveAllOf(walk.nodes, 0),
    permerrorAt: stop ? { ...stop, node: index[stop.node]! } : null,
  };
}

/** The state one walk shares between the records it visits. */
class SpfWalk {
  readonly nodes: WorkNode[] = [];
  readonly findings: Finding[] = [];
  lookups = 0;
  voids = 0;
  temperror = false;
  structural = false;
  mxOverLimit = false;
  complete = true;
  terminalsComplete = true;
  /** Records fetched below the root, against MAX_RECORDS_FOLLOWED. */
  private followed = 0;
  /** a/mx/exists lookups started, against MAX_TERMINAL_QUERIES. */
  private terminalQueries = 0;
  /** The a/mx/exists lookups in flight: they run beside the next levels' TXT queries. */
  private readonly terminal: Promise<void>[] = [];
  /** The targets the level being visited names: the next level. */
  private level: Pending[] = [];
  private readonly dns: MailDns;

  constructor(dns: MailDns) {
    this.dns = dns;
  }

  async run(domain: string, rootAnswer: DnsOutcome<string>): Promise<void> {
    const root = workNode(0, domain, 'root', '+', 0, null, [domain]);
    this.nodes.push(root);
    // Level 0: the root record (already fetched).
    this.visit(root, rootAnswer);
    while (this.level.length > 0) {
      const room = MAX_RECORDS_FOLLOWED - this.followed;
      const within = this.level.filter((p) => this.nodes[p.id]!.depth <= MAX_DEPTH);
      const fetched = within.slice(0, room);
      for (const p of this.level.filter((p) => !fetched.includes(p))) {
        const node = this.nodes[p.id]!;
        node.state = 'not_followed';
        node.problem = `not followed (work cap: ${MAX_RECORDS_FOLLOWED} records, ${MAX_DEPTH} deep)`;
        this.complete = false;
      }
      this.level = [];
      this.followed += fetched.length;
      const answers = await Promise.all(fetched.map((p) => this.dns.txt(p.domain)));
      fetched.forEach((p, i) => {
        const node = this.nodes[p.id]!;
        node.path = p.path;
        this.visit(node, answers[i]!);
      });
    }
    await Promise.all(this.terminal);
  }

  private visit(node: WorkNode, answer: DnsOutcome<string>): void {
    const records = spfRecords(answer);
    if (answer.kind === 'error') {
      node.state = 'error';
      node.problem = `DNS lookup failed: ${answer.message}`;
      this.temperror = true;
      return;
    }
    if (answer.kind === 'invalid_name' || records.length === 0) {
      node.state = 'none';
      node.problem = 'no SPF record';
      if (node.via !== 'root') {
        this.structural = true;
        // The void lookup is the include's or redirect's, in the record that names it.
        this.markVoid(this.nodes[node.parent!]!, node.from!.report, isVoid(answer));
        this.findings.push(
          finding(
            'error',
            `${node.via}:${node.domain} has no SPF record, which makes the whole evaluation a permerror.`,
            node.via === 'include' ? 'RFC 7208 §5.2' : 'RFC 7208 §6.1',
          ),
        );
      }
      return;
    }
    node.record = records[0]!;
    if (records.length > 1) {
      node.state = 'multiple_records';
      node.problem = `${records.length} SPF records`;
      this.structural = true;
      this.findings.push(
        finding(
          'error',
          `${where(node)} publishes ${records.length} "v=spf1" records; more than one is a permerror.`,
          'RFC 7208 §4.5',
        ),
      );
      return;
    }
    const parsed = parseSpfRecord(node.record);
    for (const f of [...parsed.errors, ...parsed.warnings]) {
      this.findings.push(node.via === 'root' ? f : { ...f, message: `${where(node)}: ${f.message}` });
    }
    if (parsed.errors.length > 0) {
      node.state = 'syntax_error';
      node.problem = 'syntax error';
      this.structural = true;
      return;
    }
    this.expand(node, parsed.terms);
  }

  private expand(node: WorkNode, terms: SpfTerm[]): void {
    const allIndex = terms.findIndex((t) => t.kind === 'mechanism' && t.name === 'all');
    const allTerm = allIndex >= 0 ? (terms[allIndex] as SpfMechanism) : undefined;
    node.all = allTerm?.qualifier;
    let redirect: WorkTerm | undefined;
    terms.forEach((term, index) => {
      const report: SpfTermReport = { term: term.text, lookups: 0, void: false };
      const work: WorkTerm = { term, report, evaluated: true };
      node.terms.push(report);
      node.work.push(work);
      // Terms after the first "all" are never reached; redirect is ignored when "all" is present (RFC 7208 §5.1, §6.1).
      if (allTerm && index > allIndex && term.kind === 'mechanism') {
        report.note = 'never evaluated (after "all")';
        work.evaluated = false;
        return;
      }
      if (term.kind === 'modifier') {
        if (term.name !== 'redirect') return;
        if (allTerm) {
          report.note = 'ignored ("all" is present)';
          work.evaluated = false;
          return;
        }
        report.lookups = 1;
        // Followed after the mechanisms, wherever it is written (RFC 7208 §6.1), so the children are in evaluation order.
        redirect = work;
        return;
      }
      if (!LOOKUP_MECHANISMS.has(term.name)) return;
      report.lookups = 1;
      if (term.name === 'include') {
        this.follow(node, work, term.domainSpec!, 'include', term.qualifier);
        return;
      }
      if (term.name === 'ptr') {
        report.note = 'needs the sending address; not resolved here';
        return;
      }
      const target = term.domainSpec ?? node.domain;
      if (hasMacros(target)) {
        report.note = 'has macros; expanded per message, not resolved here';
        return;
      }
      if (this.terminalQueries >= MAX_TERMINAL_QUERIES) {
        report.note = 'not resolved (work cap reached)';
        this.terminalsComplete = false;
        return;
      }
      this.terminalQueries += 1;
      this.terminal.push(this.resolveTerminal(node, term, target, work));
    });
    if (redirect) this.follow(node, redirect, (redirect.term as SpfModifier).value, 'redirect', '+');
    node.lookups = node.terms.reduce((n, t) => n + t.lookups, 0);
    this.lookups += node.lookups;
  }

  private follow(
    node: WorkNode,
    work: WorkTerm,
    target: string,
    via: 'include' | 'redirect',
    qualifier: SpfQualifier,
  ): void {
    const child = this.newChild(node, target, via, qualifier);
    child.from = work;
    work.child = child.id;
    if (via === 'redirect') node.redirectChild = child.id;
    const lower = child.domain;
    if (hasMacros(target)) {
      child.state = 'macro';
      child.problem = 'has macros; expanded per message, not followed';
      work.report.note = child.problem;
      // Its own lookups depend on each message: the total is a lower bound.
      this.complete = false;
      return;
    }
    if (node.path.includes(lower)) {
      child.state = 'loop';
      child.problem = `loop: ${[...node.path, lower].join(' → ')}`;
      this.structural = true;
      this.findings.push(
        finding('error', `SPF ${via} loop: ${[...node.path, lower].join(' → ')}.`, 'RFC 7208 §4.6.4'),
      );
      return;
    }
    this.level.push({ id: child.id, domain: lower, path: [...node.path, lower] });
  }

  private newChild(
    node: WorkNode,
    target: string,
    via: 'include' | 'redirect',
    qualifier: SpfQualifier,
  ): WorkNode {
    const domain = target.toLowerCase().replace(/\.$/, '');
    const child = workNode(this.nodes.length, domain, via, qualifier, node.depth + 1, node.id, []);
    this.nodes.push(child);
    node.children.push(child.id);
    return child;
  }

  private async resolveTerminal(
    node: WorkNode,
    term: SpfMechanism,
    target: string,
    work: WorkTerm,
  ): Promise<void> {
    const { report } = work;
    if (term.name === 'mx') {
      const answer = await this.dns.mx(target);
      if (answer.kind === 'error') {
        this.temperror = true;
        report.note = `DNS lookup failed: ${answer.message}`;
        return;
      }
      if (answer.kind === 'answer' && answer.records.length > NAMES_PER_LOOKUP_LIMIT) {
        this.mxOverLimit = true;
        work.mxOverLimit = true;
        report.note = `${answer.records.length} MX hosts (limit ${NAMES_PER_LOOKUP_LIMIT})`;
        this.findings.push(
          finding(
            'error',
            `${where(node)}: "${term.text}" returns ${answer.records.length} MX hosts; more than ${NAMES_PER_LOOKUP_LIMIT} is a permerror.`,
            'RFC 7208 §4.6.4',
          ),
        );
      }
      this.markVoid(node, report, isVoid(answer) || answer.kind === 'invalid_name');
      return;
    }
    // a: an address of either family counts (the sender's family is unknown); exists: A only (RFC 7208 §5.7).
    const [a, aaaa] = await Promise.all([
      this.dns.a(target),
      term.name === 'a' ? this.dns.aaaa(target) : Promise.resolve(undefined),
    ]);
    if (a.kind === 'error' || aaaa?.kind === 'error') {
      this.temperror = true;
      report.note = `DNS lookup failed: ${a.kind === 'error' ? a.message : (aaaa as { message: string }).message}`;
      return;
    }
    const empty =
      (isVoid(a) || a.kind === 'invalid_name') && (!aaaa || isVoid(aaaa) || aaaa.kind === 'invalid_name');
    this.markVoid(node, report, empty);
    if (term.name === 'exists' && !empty) work.matchesAll = true;
  }

  private markVoid(node: WorkNode, report: SpfTermReport, isVoidAnswer: boolean): void {
    if (!isVoidAnswer) return;
    report.void = true;
    node.void_lookups += 1;
    this.voids += 1;
  }
}

function workNode(
  id: number,
  domain: string,
  via: SpfNode['via'],
  qualifier: SpfQualifier,
  depth: number,
  parent: number | null,
  path: string[],
): WorkNode {
  return {
    id,
    domain,
    via,
    qualifier,
    depth,
    parent,
    state: 'ok',
    record: null,
    lookups: 0,
    void_lookups: 0,
    terms: [],
    work: [],
    children: [],
    path,
  };
}

function effectiveAllOf(nodes: WorkNode[], id: number): `${SpfQualifier}all` | null {
  const node = nodes[id];
  if (node?.state !== 'ok') return null;
  if (node.all) return `${node.all}all`;
  return node.redirectChild === undefined ? null : effectiveAllOf(nodes, node.redirectChild);
}

/** Pre-order with parent indexes into the flat list, and each walk id's index there. */
function flatten(nodes: WorkNode[]): { nodes: SpfNode[]; index: number[] } {
  const out: SpfNode[] = [];
  const index: number[] = [];
  const walk = (id: number, parent: number | null) => {
    const n = nodes[id]!;
    index[id] = out.length;
    const node: SpfNode = {
      domain: n.domain,
      via: n.via,
      qualifier: n.qualifier,
      depth: n.depth,
      parent,
      state: n.state,
      record: n.record,
      lookups: n.lookups,
      void_lookups: n.void_lookups,
      terms: n.terms,
    };
    if (n.problem) node.problem = n.problem;
    out.push(node);
    for (const child of n.children) walk(child, index[id]!);
  };
  walk(0, null);
  return { nodes: out, index };
}

function where(node: SpfNode): string {
  return node.via === 'root' ? node.domain : `${node.via}:${node.domain}`;
}
