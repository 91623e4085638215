/**
 * The site's Blocklists view (src/web/results/blocklists.tsx) on a terminal, under the API's
 * summary (the tool's summary line): the verdict, then one row per list (listings first) with its status in the site's tone and
 * what the answer means (client/blocklists.ts listWhy: a refusal says the list declined, a broken
 * list why it is not counted), a listing's TXT reason and delisting page under its row; for a
 * domain, each MX host's addresses with their own rows.
 */
import {
  addressLine,
  type BlocklistEntry,
  type BlocklistsAnswer,
  blocklistsVerdict,
  countsText,
  LIST_STATUS,
  listsInOrder,
  listWhy,
} from '../../client/blocklists.js';
import type { Style } from '../style.js';
import { section, table } from '../table.js';
import { badge, formatDateTime, headline, type Renderer } from './common.js';

/** The lists as an aligned table, each listing's reason and delisting page on lines under its row. */
function listRows(style: Style, lists: readonly BlocklistEntry[], indent = ''): string[] {
  const shown = listsInOrder(lists);
  const rows = table(
    style,
    ['STATUS', 'LIST', 'ZONE', 'ANSWER'],
    shown.map((l) => [
      badge(style, LIST_STATUS[l.status].tone, LIST_STATUS[l.status].label),
      l.name,
      l.zone,
      listWhy(l),
    ]),
    indent,
  );
  const out = [rows[0] ?? ''];
  shown.forEach((l, i) => {
    out.push(rows[i + 1] ?? '');
    if (l.status !== 'listed') return;
    if (l.reason) out.push(`${indent}    ${style.dim('Reason   ')} ${l.reason}`);
    if (l.delist_url) out.push(`${indent}    ${style.dim('Delisting')} ${l.delist_url}`);
  });
  return out;
}

function mx(style: Style, b: BlocklistsAnswer): string[] {
  if (b.mx === null) return [];
  if (b.mx.length === 0) return ['No MX host to check.'];
  return b.mx.flatMap((h) => [
    style.bold(h.host),
    ...(h.addresses.length === 0 ? ['  no address found'] : []),
    ...h.addresses.flatMap((a) => [
      `  ${a.address}  ${badge(style, a.listed_count > 0 ? 'bad' : 'ok', addressLine(a))}`,
      ...listRows(style, a.lists, '    '),
    ]),
  ]);
}

export function blocklistsLines(style: Style, b: BlocklistsAnswer): string[] {
  const verdict = blocklistsVerdict(b);
  const what = b.subject.kind === 'domain' ? 'Domain lists' : 'Lists';
  return [
    // The summary (verdict.text) is the line above, the tool's summary (features/tools/summaries.ts).
    `${headline(style, verdict.tone, verdict.label)}  ${b.subject.value}`,
    ...section(
      style,
      `${what} (${b.lists.length}${b.lists.length ? `: ${countsText(b.lists)}` : ''})`,
      b.lists.length ? listRows(style, b.lists) : ['No enabled list of this kind.'],
    ),
    ...section(style, 'MX hosts', mx(style, b)),
    '',
    style.dim(
      `Checked ${formatDateTime(b.checked_at)}. Refused, unanswered and broken lists are not counted.`,
    ),
  ];
}

export const blocklists: Renderer = (body, style) => blocklistsLines(style, body as BlocklistsAnswer);
