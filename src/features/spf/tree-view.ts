/**
 * What the answer shows of a walked SPF tree (details.spf): bounded, because
 * the domain writes what is in it. The walk follows up to 40 records, and a
 * record may hold thousands of terms, so each record's text is cut at
 * TRACE_LIMITS.record, its terms are listed up to TRACE_LIMITS.terms (then
 * counted), and so are the terms evaluated before a permerror. Forty records
 * of 51 KB were a 9 MB answer before. The verdicts are decided on the whole
 * tree (features/email/spf.ts); only what is shown is cut.
 */
import { clip } from '../../text.js';
import { TRACE_LIMITS } from './spf-types.js';
import type { SpfPermerrorPoint } from './stop.js';
import type { SpfNode } from './tree.js';

export type SpfNodeView = SpfNode & { terms_omitted?: number };
export type SpfPermerrorView = SpfPermerrorPoint & { evaluated_before_omitted?: number };

/** The nodes as shown: records cut, each record's terms listed up to the limit (a prefix: indexes hold). */
export function spfTreeView(nodes: readonly SpfNode[]): SpfNodeView[] {
  return nodes.map((node) => {
    const view: SpfNodeView = {
      ...node,
      record: node.record === null ? null : clip(node.record, TRACE_LIMITS.record),
      terms: node.terms
        .slice(0, TRACE_LIMITS.terms)
        .map((t) => ({ ...t, term: clip(t.term, TRACE_LIMITS.term) })),
    };
    if (node.terms.length > TRACE_LIMITS.terms) view.terms_omitted = node.terms.length - TRACE_LIMITS.terms;
    return view;
  });
}

/** The permerror point as shown: the terms evaluated before it listed up to the limit, the rest counted. */
export function spfPermerrorView(point: SpfPermerrorPoint | null): SpfPermerrorView | null {
  if (!point) return null;
  const term = (text: string) => clip(text, TRACE_LIMITS.term);
  const view: SpfPermerrorView = {
    ...point,
    term: term(point.term),
    path: point.path.map(term),
    evaluated_before: point.evaluated_before
      .slice(0, TRACE_LIMITS.terms)
      .map((t) => ({ ...t, term: term(t.term) })),
  };
  const omitted = point.evaluated_before.length - TRACE_LIMITS.terms;
  if (omitted > 0) view.evaluated_before_omitted = omitted;
  return view;
}
