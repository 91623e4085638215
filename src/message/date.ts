/**
 * RFC 5322 §3.3 date-time, with the obsolete forms of §4.3 that real
 * Received and Date fields still carry (two- and three-digit years, named
 * and military zones, no seconds, comments, extra white space) and the
 * asctime() form some old MTAs write. Pure, never throws.
 */

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];

/** RFC 5322 §4.3 obs-zone, in minutes east of UTC. */
const ZONES: Record<string, number> = {
  ut: 0,
  utc: 0,
  gmt: 0,
  z: 0,
  est: -300,
  edt: -240,
  cst: -360,
  cdt: -300,
  mst: -420,
  mdt: -360,
  pst: -480,
  pdt: -420,
};

/** The instant a date-time names, as ISO 8601 UTC, or null when it names none. */
export function parseMailDate(text: string): string | null {
  const clean = text
    .replace(/\([^()]*\)/g, ' ') // comments, such as "(UTC)" or "(PST)"
    .replace(/\s+/g, ' ')
    .trim()
    .replace(/^[A-Za-z]{3,9}\s*,\s*/, ''); // day of week: it says nothing the date does not
  const rfc =
    /^(\d{1,2}) ([A-Za-z]{3})[a-z]* (\d{2,4}) (\d{1,2}):(\d{2})(?::(\d{2}))?(?:\.\d+)?(?: ([+-]\d{4}|[A-Za-z]{1,5}))?/.exec(
      clean,
    );
  if (rfc) return build(rfc[3]!, rfc[2]!, rfc[1]!, rfc[4]!, rfc[5]!, rfc[6], rfc[7]);
  // asctime(): "Tue Jan  2 10:00:00 2024" (the day of week already gone), zone optional after the year.
  const asc =
    /^([A-Za-z]{3}) (\d{1,2}) (\d{1,2}):(\d{2})(?::(\d{2}))? (\d{4})(?: ([+-]\d{4}|[A-Za-z]{1,5}))?/.exec(
      clean.replace(/^[A-Za-z]{3} (?=[A-Za-z]{3} )/, ''),
    );
  if (asc) return build(asc[6]!, asc[1]!, asc[2]!, asc[3]!, asc[4]!, asc[5], asc[7]);
  return null;
}

function build(
  yearText: string,
  monthText: string,
  dayText: string,
  hourText: string,
  minuteText: string,
  secondText: string | undefined,
  zoneText: string | undefined,
): string | null {
  const month = MONTHS.indexOf(monthText.toLowerCase());
  let year = Number(yearText);
  // §4.3: a two-digit year below 50 is 20xx, otherwise 19xx; a three-digit one is added to 1900.
  if (yearText.length === 2) year += year < 50 ? 2000 : 1900;
  else if (yearText.length === 3) year += 1900;
  const day = Number(dayText);
  const hour = Number(hourText);
  const minute = Number(minuteText);
  const second = secondText === undefined ? 0 : Number(secondText);
  const offset = zoneOffset(zoneText);
  if (month < 0 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 60 || offset === undefined) {
    return null;
  }
  const ms = Date.UTC(year, month, day, hour, minute, Math.min(second, 59)) - offset * 60_000;
  const date = new Date(ms);
  // Date.UTC rolls 31 Feb over into March: a day the month does not have is no date.
  if (Number.isNaN(ms) || new Date(Date.UTC(year, month, day)).getUTCDate() !== day) return null;
  return date.toISOString().replace('.000Z', 'Z');
}

/** Minutes east of UTC; a military or unknown zone is -0000 ("no information", RFC 5322 §4.3). */
function zoneOffset(zone: string | undefined): number | undefined {
  if (zone === undefined) return 0;
  const numeric = /^([+-])(\d{2})(\d{2})$/.exec(zone);
  if (numeric) {
    const minutes = Number(numeric[2]) * 60 + Number(numeric[3]);
    if (Number(numeric[3]) > 59) return undefined;
    return numeric[1] === '-' ? -minutes : minutes;
  }
  return ZONES[zone.toLowerCase()] ?? 0;
}
