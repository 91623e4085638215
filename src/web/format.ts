/**
 * Display helpers. Dates, durations and counts are said as the CLI says them: they live in the
 * client's words (src/client/words.ts); what is here only the page needs.
 */
export {
  daysUntil,
  formatDate,
  formatDateTime,
  formatMs,
  formatSeconds,
  plural,
  relativeDays,
} from '../client/words';

export function clockTime(at: number): string {
  return new Date(at).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit', second: '2-digit' });
}

let regionNames: Intl.DisplayNames | null | undefined;

/** English country name from the browser's own data (nothing shipped), or the code itself. */
export function countryName(code: string | null | undefined): string {
  if (!code) return '—';
  if (regionNames === undefined) {
    try {
      regionNames = new Intl.DisplayNames(['en'], { type: 'region' });
    } catch {
      regionNames = null;
    }
  }
  try {
    return regionNames?.of(code.toUpperCase()) ?? code;
  } catch {
    return code;
  }
}
