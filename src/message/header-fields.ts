/**
 * Just enough RFC 5322 header reading for the DKIM and ARC report: which fields there are (to
 * count and cap signatures and ARC sets before mailauth sees them) and the tags of each
 * DKIM-Signature and ARC field as written (to report what a signature says even when mailauth
 * could not process it). Verification itself is mailauth's; nothing here decides a result.
 * Bytes are read as latin1 so that cutting fields out and joining them again is exact.
 */

export interface HeaderField {
  /** Lower-case field name. */
  name: string;
  /** The whole field, name and folded value, without its final line break. */
  text: string;
  /** The value after the colon, unfolded. */
  value: string;
}

export interface SplitMessage {
  fields: HeaderField[];
  /** Everything from the line break that ends the header section (the blank line and body). */
  rest: string;
}

/** Splits a message into its header fields and what follows them. */
export function splitMessage(raw: Buffer): SplitMessage {
  const text = raw.toString('latin1');
  const fields: HeaderField[] = [];
  let pos = 0;
  let current: string | null = null;
  const push = (): void => {
    if (current === null) return;
    const field = current.replace(/\r?\n$/, '');
    const colon = field.indexOf(':');
    if (colon > 0) {
      fields.push({
        name: field.slice(0, colon).trim().toLowerCase(),
        text: field,
        value: unfold(field.slice(colon + 1)),
      });
    }
    current = null;
  };
  while (pos < text.length) {
    const nl = text.indexOf('\n', pos);
    const end = nl < 0 ? text.length : nl + 1;
    const line = text.slice(pos, end);
    if (line === '\r\n' || line === '\n') break; // the blank line: the body follows
    if ((line.startsWith(' ') || line.startsWith('\t')) && current !== null) {
      current += line;
    } else {
      push();
      current = line;
    }
    pos = end;
  }
  push();
  return { fields, rest: text.slice(pos) };
}

/** Joins fields and the rest again, CRLF between fields. */
export function joinMessage(fields: HeaderField[], rest: string): Buffer {
  const head = fields.map((f) => `${f.text}\r\n`).join('');
  return Buffer.from(head + (rest === '' ? '\r\n' : rest), 'latin1');
}

export function unfold(value: string): string {
  return value.replace(/\r?\n(?=[ \t])/g, '').trim();
}

/** A DKIM tag-list (RFC 6376 §3.2) as written: the first value of each tag, FWS kept inside. */
export function parseTags(value: string): Map<string, string> {
  const tags = new Map<string, string>();
  for (const part of value.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    const name = part.slice(0, eq).trim();
    if (name && !tags.has(name)) tags.set(name, part.slice(eq + 1).trim());
  }
  return tags;
}

/** A tag value with all whitespace taken out (b=, bh=, and base64 values are written folded). */
export function compact(value: string | undefined): string | undefined {
  return value?.replace(/\s+/g, '');
}

/** The instance of an ARC field: i= of a seal or message signature, the leading `i=N;` of an AAR. */
export function arcInstance(field: HeaderField): number | null {
  const raw =
    field.name === 'arc-authentication-results'
      ? /^i\s*=\s*(\d+)\s*;/.exec(field.value)?.[1]
      : compact(parseTags(field.value).get('i'));
  if (!raw || !/^\d{1,9}$/.test(raw)) return null;
  const n = Number(raw);
  return n >= 1 ? n : null;
}

export const ARC_FIELDS = ['arc-seal', 'arc-message-signature', 'arc-authentication-results'] as const;
export type ArcFieldName = (typeof ARC_FIELDS)[number];

export function isArcField(name: string): name is ArcFieldName {
  return (ARC_FIELDS as readonly string[]).includes(name);
}
