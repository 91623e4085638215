/** What every renderer shares: dates and durations as the site writes them, badges, where the answer came from. */
import type { Style, Tone } from '../style.js';

export type Renderer = (body: unknown, style: Style) => string[];

/** YYYY-MM-DD (UTC), the site's unambiguous date (src/web/format.ts). */
export function formatDate(iso: string | null | undefined): string {
  if (!iso) return '—';
  const t = Date.parse(iso);
  return Number.isNaN(t) ? iso : new Date(t).toISOString().slice(0, 10);
}

export function formatDateTime(iso: string | null | undefined): string {
  if (!iso) return '—';
  const t = Date.parse(iso);
  return Number.isNaN(t) ? iso : `${new Date(t).toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

export function formatSeconds(seconds: number): string {
  if (seconds < 60) return `${seconds} s`;
  if (seconds < 3600) return `${Math.round(seconds / 60)} min`;
  if (seconds < 86_400) return `${Math.round(seconds / 360) / 10} h`;
  return `${Math.round(seconds / 8640) / 10} d`;
}

export function formatMs(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`;
}

export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n.toLocaleString('en')} ${n === 1 ? one : many}`;
}

export function yesNo(value: boolean | null | undefined): string | null {
  return value === null || value === undefined ? null : value ? 'yes' : 'no';
}

/** The site's badge: the word in its tone's colour. */
export function badge(style: Style, tone: Tone, text: string): string {
  return style.tone(tone, text);
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

const ATTEMPT: Record<Attempt['status'], { tone: Tone; mark: string }> = {
  ok: { tone: 'ok', mark: '✓' },
  no_data: { tone: 'muted', mark: '–' },
  failed: { tone: 'bad', mark: '✕' },
};

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
      .map((a) => `${a.name} ${style.tone(ATTEMPT[a.status].tone, ATTEMPT[a.status].mark)}`)
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
