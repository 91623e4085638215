/**
 * Line-oriented CSV reading (RFC 4180) for the large lists this service
 * loads: the relay geofeed and the ASN ranges. Pure, no I/O.
 */

/** A list body that cannot be used (wrong format, too many bad lines): the caller keeps the copy it has. */
export class ListFormatError extends Error {
  override readonly name = 'ListFormatError';
}

/**
 * Calls `onLine` for every line of `text`, without the line break. LF and
 * CRLF are both line breaks (RFC 4180 §2.1 says CRLF; most feeds send LF).
 * Lines are handed over unsplit so a caller can skip comments cheaply.
 */
export function forEachLine(text: string, onLine: (line: string, lineNumber: number) => void): void {
  let from = 0;
  let lineNumber = 0;
  while (from < text.length) {
    let to = text.indexOf('\n', from);
    if (to === -1) to = text.length;
    const end = to > from && text.charCodeAt(to - 1) === 13 /* \r */ ? to - 1 : to;
    lineNumber++;
    onLine(text.slice(from, end), lineNumber);
    from = to + 1;
  }
}

/**
 * Splits one CSV record into fields. Quoted fields may hold commas and
 * doubled quotes (RFC 4180 §2.5–2.7); a record cannot span lines here,
 * which neither feed needs. Undefined for a malformed quoted field.
 */
export function splitCsvLine(line: string): string[] | undefined {
  // The common case: no quotes at all.
  if (!line.includes('"')) return line.split(',');
  const fields: string[] = [];
  let i = 0;
  for (;;) {
    if (line.charCodeAt(i) === 34 /* " */) {
      let value = '';
      i++;
      for (;;) {
        const quote = line.indexOf('"', i);
        if (quote === -1) return undefined;
        value += line.slice(i, quote);
        if (line.charCodeAt(quote + 1) === 34) {
          value += '"';
          i = quote + 2;
          continue;
        }
        i = quote + 1;
        break;
      }
      fields.push(value);
      if (i === line.length) return fields;
      if (line.charCodeAt(i) !== 44 /* , */) return undefined;
      i++;
    } else {
      const comma = line.indexOf(',', i);
      const value = comma === -1 ? line.slice(i) : line.slice(i, comma);
      if (value.includes('"')) return undefined;
      fields.push(value);
      if (comma === -1) return fields;
      i = comma + 1;
    }
  }
}
