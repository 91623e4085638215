/** What every renderer shares: dates and durations as the site writes them, badges, where the answer came from. */
import { PROVIDER_ATTEMPT } from '../../client/words.js';
import type { Style, Tone } from '../style.js';

// Dates, durations and counts in the site's words: one module for both (src/client/words.ts).
export {
  formatDate,
  formatDateTime,
  formatMs,
  formatSeconds,
  plural,
  yesNo,
} from '../../client/words.js';

export type Renderer = (body: unknown, style: Style) => string[];

/** The site's badge: the word in its tone's colour. */
export function badge(style: Style, tone: Tone, text: string): string {
  return style.tone(tone, text);
}

/**
 * An answer's verdict at the top of the page: the word in capitals, bold, in its tone's colour.
 * Every transform of the text (capitals, padding, cutting) happens before the styling, never
 * after: upper-casing a styled string rewrites its escape codes too (`ESC[31m` becomes
 * `ESC[31M`, Delete Line, which erases the headline on a terminal).
 */
export function headline(style: Style, tone: Tone, text: string): string {
  return style.bold(style.tone(tone, text.toUpperCase()));
}

/** More rows than a terminal page holds: the first ones, and how to see the rest. */
export function capped<T>(items: readonly T[], max: number): { shown: readonly T[]; note: string[] } {
  if (items.length <= max) return { shown: items, note: [] };
  return {
    shown: items.slice(0, max),
    note: [`… and ${items.length - max} more (--json has them all)`],
  };
}

interface Attempt {
  name: string;
  status: 'ok' | 'no_data' | 'failed';
  error?: string;
}

/**
 * Where the answer came from, as the site's footer says it (src/web/ui/common.tsx Attribution):
 * `source`, the providers tried in order with their outcome, and any data licence.
 */
export function attribution(style: Style, body: unknown): string[] {
  if (typeof body !== 'object' || body === null) return [];
  const b = body as { source?: unknown; providers_tried?: unknown; attribution?: unknown };
  const parts: string[] = [];
  if (typeof b.source === 'string') parts.push(`Source: ${b.source}`);
  if (Array.isArray(b.providers_tried) && b.providers_tried.length > 0) {
    const tried = b.providers_tried as Attempt[];
    const chain = tried
      .map((a) => `${a.name} ${style.tone(PROVIDER_ATTEMPT[a.status].tone, PROVIDER_ATTEMPT[a.status].mark)}`)
      .join(' → ');
    const fellBack = tried.some((a) => a.status === 'failed') ? ' (fallback used after a failure)' : '';
    parts.push(`Tried: ${chain}${fellBack}`);
  }
  if (Array.isArray(b.attribution)) {
    for (const l of b.attribution as { text?: unknown; url?: unknown }[]) {
      if (typeof l.text === 'string')
        parts.push(`${l.text}${typeof l.url === 'string' ? ` <${l.url}>` : ''}`);
    }
  }
  return parts.length ? ['', style.dim(parts.join(' · '))] : [];
}
