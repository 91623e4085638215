/**
 * Where receivers stop (RFC 7208 §4.6.4, §5.2, §6.1): the SPF tree that
 * tree.ts walked, replayed in the order a receiver evaluates it for a
 * sender no term matches, to find the first term at which it returns
 * permerror (the 11th lookup, the 3rd void lookup, an mx with too many
 * hosts, a missing or broken include/redirect target), and which terms
 * decided the result for their senders before it. The walk goes one level
 * at a time for speed, so its own order is not the receiver's.
 */
import { QUALIFIER_RESULT } from './check-host.js';
import type { SpfMechanism, SpfQualifier, SpfTerm } from './record.js';
import { LOOKUP_LIMIT, type SpfResult, VOID_LOOKUP_LIMIT } from './spf-types.js';

/** Why a receiver stops with permerror at a term (RFC 7208 §4.6.4, §5.2, §6.1). */
export type SpfPermerrorReason =
  /** The term is the 11th DNS-querying term. */
  | 'lookup_limit'
  /** The term's lookup is the 3rd void one. */
  | 'void_lookup_limit'
  /** An `mx` term answering more than NAMES_PER_LOOKUP_LIMIT (spf-types.ts) hosts. */
  | 'mx_host_limit'
  /** An include or redirect whose target has no SPF record. */
  | 'no_record'
  /** ... whose target publishes several. */
  | 'multiple_records'
  /** ... whose target's record has a syntax error. */
  | 'syntax_error';

/** A term a receiver evaluates before the permerror: the senders it matches never reach it. */
export interface SpfEvaluatedTerm {
  term: string;
  /** The domain whose record holds the term. */
  domain: string;
  /** What the senders it matches get: its qualifier's, or the outermost include's for a term inside includes. */
  result: Extract<SpfResult, 'pass' | 'fail' | 'softfail' | 'neutral'>;
}

/**
 * Where a receiver evaluating the tree for a sender that no earlier term
 * matches stops with permerror: the first such term in evaluation order
 * (left to right, depth first through includes, a redirect after the
 * record's mechanisms). Senders matched before it are not affected.
 */
export interface SpfPermerrorPoint {
  reason: SpfPermerrorReason;
  term: string;
  /** The domain whose record holds the term. */
  domain: string;
  /** The include and redirect terms followed from the domain's own record to that record, outermost first. */
  path: string[];
  /** The term is `nodes[node].terms[term_index]` (for a loop, the record reached again). */
  node: number;
  term_index: number;
  /** DNS-querying terms counted up to and including the term. */
  lookups: number;
  /** Void lookups counted up to and including the term. */
  void_lookups: number;
  /**
   * The terms evaluated before it whose matches end the evaluation, in
   * evaluation order: ip4, ip6, a, mx, ptr and exists terms whose lookup was
   * not void, and includes whose target is not followed here (macros).
   */
  evaluated_before: SpfEvaluatedTerm[];
}

/** What the replay reads of one walked term (tree.ts's WorkTerm). */
export interface ReplayTerm {
  term: SpfTerm;
  report: { term: string; lookups: number; void: boolean };
  /** False for mechanisms after "all" and a redirect next to "all": no receiver evaluates them. */
  evaluated: boolean;
  /** The node an include or redirect leads to. */
  child?: number;
  mxOverLimit?: boolean;
  /** An `exists` without macros whose name resolves: it matches every sender, like "all". */
  matchesAll?: boolean;
}

/** What the replay reads of one walked record (tree.ts's WorkNode); ids index the walk's node list. */
export interface ReplayNode {
  id: number;
  domain: string;
  parent: number | null;
  /** tree.ts's SpfNodeState. */
  state: string;
  work: ReplayTerm[];
}

/**
 * The first term where a receiver stops with permerror, or null when none
 * does (or the root record itself is not usable). Node ids in the result are
 * the walk's; the caller maps them to the flat list it shows.
 */
export function findPermerrorPoint(nodes: readonly ReplayNode[]): SpfPermerrorPoint | null {
  return new ReceiverReplay(nodes).stop();
}

type Replayed = { stop: SpfPermerrorPoint } | { all: SpfQualifier | null };

/** How the replay reached a record: the include and redirect terms, and the includes' qualifiers. */
interface Via {
  terms: string[];
  /** A redirect adds none: its record's result is the result of the record naming it (RFC 7208 §6.1). */
  qualifiers: SpfQualifier[];
}

/**
 * Replays the walked tree as a receiver evaluates it for a sender no term
 * matches (RFC 7208 §4.6): terms left to right, an include's record before
 * the terms after it, a redirect after the mechanisms, counting lookups and
 * void lookups until the first permerror. The walk itself goes one level at
 * a time, so its own order is not the receiver's.
 */
class ReceiverReplay {
  private lookups = 0;
  private voids = 0;
  private readonly before: SpfEvaluatedTerm[] = [];
  /** Domain and term of each entry of `before`: a record may hold thousands of terms, so no linear search. */
  private readonly noted = new Set<string>();
  private readonly nodes: readonly ReplayNode[];

  constructor(nodes: readonly ReplayNode[]) {
    this.nodes = nodes;
  }

  stop(): SpfPermerrorPoint | null {
    if (this.nodes[0]!.state !== 'ok') return null;
    const replayed = this.record(this.nodes[0]!, { terms: [], qualifiers: [] });
    return 'stop' in replayed ? replayed.stop : null;
  }

  private record(node: ReplayNode, via: Via): Replayed {
    let redirect: ReplayTerm | undefined;
    for (const work of node.work) {
      if (!work.evaluated) continue;
      const { term } = work;
      if (term.kind === 'modifier') {
        if (term.name === 'redirect') redirect = work;
        continue;
      }
      const stop = this.step(node, work, via);
      if (stop) return { stop };
      if (term.name === 'all' || work.matchesAll) return { all: term.qualifier };
      if (term.name !== 'include') {
        if (!work.report.void) this.evaluated(work, node, via);
        continue;
      }
      const inner = this.target(node, work, via);
      if ('stop' in inner) return inner;
      // An include matches when its target passes: one ending in "+all" passes every sender (RFC 7208 §5.2).
      if (inner.all === '+') return { all: term.qualifier };
    }
    if (!redirect) return { all: null };
    const stop = this.step(node, redirect, via);
    return stop ? { stop } : this.target(node, redirect, via);
  }

  /** Counts one evaluated term; the permerror it causes, if any. */
  private step(node: ReplayNode, work: ReplayTerm, via: Via): SpfPermerrorPoint | undefined {
    this.lookups += work.report.lookups;
    if (work.report.void) this.voids += 1;
    const reason = this.reason(work);
    if (!reason) return undefined;
    return {
      reason,
      term: work.report.term,
      domain: node.domain,
      path: via.terms,
      node: node.id,
      term_index: node.work.indexOf(work),
      lookups: this.lookups,
      void_lookups: this.voids,
      evaluated_before: [...this.before],
    };
  }

  /** In the order a receiver meets them: the count before the query, the query's answer, then the target's record. */
  private reason(work: ReplayTerm): SpfPermerrorReason | undefined {
    if (this.lookups > LOOKUP_LIMIT) return 'lookup_limit';
    if (this.voids > VOID_LOOKUP_LIMIT) return 'void_lookup_limit';
    if (work.mxOverLimit) return 'mx_host_limit';
    const target = work.child === undefined ? undefined : this.nodes[work.child]!.state;
    if (target === 'none') return 'no_record';
    if (target === 'multiple_records' || target === 'syntax_error') return target;
    return undefined;
  }

  /** Evaluates the record an include or redirect leads to. */
  private target(node: ReplayNode, work: ReplayTerm, via: Via): Replayed {
    const child = this.nodes[work.child!]!;
    const { term } = work;
    const next: Via = {
      terms: [...via.terms, term.text],
      qualifiers: term.kind === 'mechanism' ? [...via.qualifiers, term.qualifier] : via.qualifiers,
    };
    if (child.state === 'ok') return this.record(child, next);
    if (child.state === 'loop') {
      // RFC 7208 has no loop check of its own: the record is evaluated again until the lookup limit ends it (§4.6.4).
      let again: ReplayNode | undefined = node;
      while (again && again.domain !== child.domain) again = this.nodes[again.parent ?? -1];
      if (again) return this.record(again, next);
    }
    // Macros or the work cap: its record is unknown here, and may match the sender.
    if (term.kind === 'mechanism') this.evaluated(work, node, via);
    return { all: null };
  }

  /**
   * Notes a term whose matches end the evaluation before the permerror. Inside
   * includes, a match decides the result only when every qualifier below the
   * outermost include is "+": any other inner result just makes that include
   * not match, and evaluation goes on after it (RFC 7208 §5.2). Noted once,
   * though a loop evaluates it again.
   */
  private evaluated(work: ReplayTerm, node: ReplayNode, via: Via): void {
    const chain = [...via.qualifiers, (work.term as SpfMechanism).qualifier];
    if (chain.slice(1).some((q) => q !== '+')) return;
    const entry: SpfEvaluatedTerm = {
      term: work.term.text,
      domain: node.domain,
      // A qualifier gives one of these four (RFC 7208 §4.6.2); the table is typed with every result.
      result: QUALIFIER_RESULT[chain[0]!] as SpfEvaluatedTerm['result'],
    };
    const key = `${entry.domain}\n${entry.term}`;
    if (this.noted.has(key)) return;
    this.noted.add(key);
    this.before.push(entry);
  }
}
