/**
 * A raw message (RFC 5322) split into its header fields and its body, as
 * people give it: pasted text with bare LF line ends, headers alone, an mbox
 * "From " line on top. Pure functions, no I/O (docs/message.md).
 *
 * Headers alone: a message whose header section is not followed by a blank
 * line, or whose blank line is followed by nothing but line ends and white
 * space, is taken as headers only (`body: null`). A message whose body really
 * is empty cannot be told apart from pasted headers; it is taken as headers
 * only too, so a DKIM body hash is reported as not checked rather than as a
 * failure that the paste, not the sender, caused.
 */
export { type FromAddress, headerFrom } from './address-list.js';

export interface HeaderField {
  /** Position among all header fields, top first. */
  index: number;
  /** The field name as written ("DKIM-Signature"). */
  name: string;
  /** The name in lower case, for comparisons. */
  key: string;
  /**
   * The whole field as in the message: name, colon, value with its folding CRLFs; no final CRLF.
   * One character per octet (latin1), so `Buffer.from(raw, 'latin1')` is the field's bytes (DKIM).
   */
  raw: string;
  /** The value as written after the colon, folding CRLFs kept (latin1, like `raw`). */
  rawValue: string;
  /** The value unfolded (RFC 5322 §2.2.3: CRLF before white space removed), trimmed; 8-bit octets read as UTF-8. */
  value: string;
}

export interface ParsedMessage {
  fields: HeaderField[];
  /** The body (CRLF line ends); null when only headers were given. */
  body: Buffer | null;
  /** The message with every line end CRLF (leading blank lines and an mbox "From " line left out). */
  normalized: Buffer;
  /** What was read differently from the letter of RFC 5322, in words. */
  notes: string[];
}

const CR = 0x0d;
const LF = 0x0a;

/**
 * Splits a raw message. Never throws: what is not a header field ends the
 * header section there (as Postfix's cleanup does with a line that is neither
 * a header field nor its continuation), and the rest is the body.
 */
export function parseMessage(raw: Buffer | string): ParsedMessage {
  const notes: string[] = [];
  // Header text is ASCII (or UTF-8, RFC 6532): bytes go through latin1 so every octet survives.
  let bytes = typeof raw === 'string' ? Buffer.from(raw, 'utf8') : raw;
  const crlf = toCrlf(bytes);
  if (crlf.bareLf) notes.push('Bare LF line ends were read as CRLF.');
  bytes = crlf.bytes;
  bytes = dropLeading(bytes, notes);

  const text = bytes.toString('latin1');
  const fields: HeaderField[] = [];
  let pos = 0;
  let bodyStart = -1; // offset of the body in text; -1: no body separator
  while (pos < text.length) {
    const end = text.indexOf('\r\n', pos);
    const lineEnd = end === -1 ? text.length : end;
    const line = text.slice(pos, lineEnd);
    const next = end === -1 ? text.length : end + 2;
    if (line === '') {
      bodyStart = next;
      break;
    }
    if ((line[0] === ' ' || line[0] === '\t') && fields.length > 0) {
      const last = fields[fields.length - 1]!;
      last.raw += `\r\n${line}`;
      last.rawValue += `\r\n${line}`;
      pos = next;
      continue;
    }
    const name = /^([\x21-\x39\x3b-\x7e]+)[ \t]*:/.exec(line);
    if (!name) {
      notes.push(
        `Line ${lineNumber(text, pos)} is not a header field: the header section was taken to end there.`,
      );
      bodyStart = pos;
      break;
    }
    fields.push({
      index: fields.length,
      name: name[1]!,
      key: name[1]!.toLowerCase(),
      raw: line,
      rawValue: line.slice(name[0].length),
      value: '',
    });
    pos = next;
  }
  for (const f of fields) f.value = decodeUtf8(unfold(f.rawValue)).trim();

  let body: Buffer | null = null;
  if (bodyStart >= 0) {
    const rest = bytes.subarray(bodyStart);
    if (/[^\r\n \t]/.test(rest.toString('latin1'))) body = rest;
    else notes.push('Nothing follows the headers: taken as headers only (body hashes are not checked).');
  } else {
    notes.push('No blank line ends the headers: taken as headers only (body hashes are not checked).');
  }
  return { fields, body, normalized: bytes, notes };
}

/** RFC 5322 §2.2.3: a CRLF followed by white space is folding; removing the CRLF unfolds. */
export function unfold(value: string): string {
  return value.replace(/\r\n(?=[ \t])/g, '');
}

/** Bare LF → CRLF, on bytes (8-bit content passes through untouched). */
function toCrlf(bytes: Buffer): { bytes: Buffer; bareLf: boolean } {
  let bare = 0;
  for (let i = 0; i < bytes.length; i++) if (bytes[i] === LF && (i === 0 || bytes[i - 1] !== CR)) bare++;
  if (bare === 0) return { bytes, bareLf: false };
  const out = Buffer.alloc(bytes.length + bare);
  let o = 0;
  for (let i = 0; i < bytes.length; i++) {
    if (bytes[i] === LF && (i === 0 || bytes[i - 1] !== CR)) out[o++] = CR;
    out[o++] = bytes[i]!;
  }
  return { bytes: out, bareLf: true };
}

/** Leading blank lines (a paste often starts with one) and an mbox "From " separator are not the message. */
function dropLeading(bytes: Buffer, notes: string[]): Buffer {
  let start = 0;
  while (start < bytes.length) {
    const end = bytes.indexOf('\r\n', start);
    const line = bytes.subarray(start, end === -1 ? bytes.length : end).toString('latin1');
    if (end === -1 || line.trim() !== '') break;
    start = end + 2;
  }
  if (start > 0) notes.push('Blank lines before the first header field were left out.');
  if (bytes.subarray(start, start + 5).toString('latin1') === 'From ') {
    const end = bytes.indexOf('\r\n', start);
    if (end !== -1) {
      start = end + 2;
      notes.push('The mbox "From " line on top was left out: it is not a header field.');
    }
  }
  return start === 0 ? bytes : bytes.subarray(start);
}

function lineNumber(text: string, pos: number): number {
  let n = 1;
  for (let i = text.indexOf('\r\n'); i !== -1 && i < pos; i = text.indexOf('\r\n', i + 2)) n++;
  return n;
}

/** Latin1-read text back to UTF-8 where it is valid UTF-8 (RFC 6532 headers); as read otherwise. */
function decodeUtf8(latin1: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: only 8-bit text needs the round trip
  if (!/[^\x00-\x7f]/.test(latin1)) return latin1;
  const bytes = Buffer.from(latin1, 'latin1');
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return latin1;
  }
}

/** The fields named `name` (any case), top first. */
export function fieldsNamed(fields: readonly HeaderField[], name: string): HeaderField[] {
  const key = name.toLowerCase();
  return fields.filter((f) => f.key === key);
}
