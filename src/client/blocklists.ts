/**
 * netdiag/client/blocklists: the words a blocklist answer (GET /api/blocklists) is drawn in, for
 * the site (src/web/results/blocklists.tsx), the CLI (src/cli/render/blocklists.ts) and /mcp
 * alike. The summary and each list's meaning are the API's own; what is here is each status's
 * tone and word, and one line per list saying what its answer means for the person reading:
 * a listing with its code's meaning, a refusal as the list declining (never a listing), an
 * error as no answer, a broken list as not counted (docs/blocklists.md). Runs in browsers and in
 * Node, as ./words.ts; kept apart from ./verdicts.ts, which is full.
 */
import type { Ok } from './index.js';
import { plural, type Tone } from './words.js';

export type BlocklistsAnswer = Ok<'/api/blocklists'>;
export type BlocklistEntry = BlocklistsAnswer['lists'][number];
export type BlocklistStatus = BlocklistEntry['status'];
export type MxAddress = NonNullable<BlocklistsAnswer['mx']>[number]['addresses'][number];

/**
 * A listing is red; a refusal amber, never red (the list declined to answer this resolver: it
 * says nothing about the address); an error and a broken list grey (no usable answer).
 */
export const LIST_STATUS: Record<BlocklistStatus, { tone: Tone; label: string }> = {
  listed: { tone: 'bad', label: 'listed' },
  refused: { tone: 'warn', label: 'refused' },
  error: { tone: 'muted', label: 'no answer' },
  broken: { tone: 'muted', label: 'broken' },
  not_listed: { tone: 'ok', label: 'not listed' },
};

const RANK: Record<BlocklistStatus, number> = { listed: 0, refused: 1, error: 2, broken: 3, not_listed: 4 };

/** Listings first, then refusals, errors, broken lists and the lists that do not list it (the API's order). */
export function listsInOrder<T extends Pick<BlocklistEntry, 'status'>>(lists: readonly T[]): T[] {
  return [...lists].sort((a, b) => RANK[a.status] - RANK[b.status]);
}

/**
 * One line of what the list's answer means: the code and its meaning for a listing (the TXT
 * reason and the delisting page are drawn beside it); for a refusal, that the list declined and
 * why; for an error, that it gave no answer; for a broken list, why it is not counted.
 */
export function listWhy(l: BlocklistEntry): string {
  switch (l.status) {
    case 'listed':
      return `${l.codes?.join(', ') ?? l.code ?? ''}: ${l.meaning ?? 'listed'}`.replace(/^: /, '');
    case 'refused':
      return `The list declined to answer (not a listing)${l.code ? `, ${l.code}` : ''}: ${l.meaning ?? 'no reason given'}.`;
    case 'error':
      return `No answer, not counted: ${l.meaning ?? 'the list did not answer'}.`;
    case 'broken': {
      const why = (l.meaning ?? 'it fails its RFC 5782 test points').replace(/^not counted: /, '');
      return `Not counted: ${why}.`;
    }
    case 'not_listed':
      return 'Not listed.';
  }
}

/** How many lists answered each way: the headline's counts. */
export function statusCounts(
  lists: readonly Pick<BlocklistEntry, 'status'>[],
): Record<BlocklistStatus, number> {
  const counts: Record<BlocklistStatus, number> = {
    listed: 0,
    refused: 0,
    error: 0,
    broken: 0,
    not_listed: 0,
  };
  for (const l of lists) counts[l.status]++;
  return counts;
}

/** "2 listed, 1 refused, 3 not listed": the statuses present, in the grid's order. */
export function countsText(lists: readonly Pick<BlocklistEntry, 'status'>[]): string {
  const counts = statusCounts(lists);
  return (Object.keys(RANK) as BlocklistStatus[])
    .filter((s) => counts[s] > 0)
    .map((s) => `${counts[s]} ${LIST_STATUS[s].label}`)
    .join(', ');
}

/**
 * The verdict: red when a usable list lists it (here or at an MX address), green when lists
 * answered and none does, grey when no list gave a usable answer. The text is the API's summary.
 */
export function blocklistsVerdict(b: Pick<BlocklistsAnswer, 'listed_count' | 'lists' | 'mx' | 'summary'>): {
  tone: Tone;
  label: string;
  text: string;
} {
  const mxListed = (b.mx ?? []).some((h) => h.addresses.some((a) => a.listed_count > 0));
  const answered = [...b.lists, ...(b.mx ?? []).flatMap((h) => h.addresses.flatMap((a) => a.lists))].some(
    (l) => l.status === 'listed' || l.status === 'not_listed',
  );
  if (b.listed_count > 0) return { tone: 'bad', label: 'Listed', text: b.summary };
  if (mxListed) return { tone: 'bad', label: 'MX listed', text: b.summary };
  if (!answered) return { tone: 'muted', label: 'No usable answer', text: b.summary };
  return { tone: 'ok', label: 'Not listed', text: b.summary };
}

/** An MX address in one line: how many lists list it, and which. */
export function addressLine(a: MxAddress): string {
  const listing = a.lists.filter((l) => l.status === 'listed').map((l) => l.name);
  const unusable = a.lists.filter((l) => l.status !== 'listed' && l.status !== 'not_listed').length;
  const usable = a.lists.length - unusable;
  const head =
    listing.length > 0
      ? `listed on ${listing.length} of ${plural(usable, 'usable list')}: ${listing.join(', ')}`
      : `listed on none of ${plural(usable, 'usable list')}`;
  return unusable > 0 ? `${head} (${unusable} without a usable answer)` : head;
}
