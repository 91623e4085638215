/**
 * The bits of HTTP field-value syntax (RFC 9110 §5.6) that several header
 * parsers here share: tokens, quoted-strings, and splitting a value on a
 * delimiter that may also appear inside a quoted-string.
 */

/** tchar (RFC 9110 §5.6.2). */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

export function isToken(s: string): boolean {
  return TOKEN.test(s);
}

/**
 * Splits `value` on `delimiter` (',' or ';') outside quoted-strings, trimming
 * optional whitespace (OWS: SP / HTAB) around each part. Empty parts are
 * kept: whether they are allowed is each grammar's business.
 */
export function splitOutsideQuotes(value: string, delimiter: ',' | ';'): string[] {
  const parts: string[] = [];
  let current = '';
  let quoted = false;
  for (let i = 0; i < value.length; i++) {
    const c = value[i] as string;
    if (quoted) {
      current += c;
      if (c === '\\' && i + 1 < value.length) current += value[++i];
      else if (c === '"') quoted = false;
    } else if (c === '"') {
      quoted = true;
      current += c;
    } else if (c === delimiter) {
      parts.push(trimOws(current));
      current = '';
    } else {
      current += c;
    }
  }
  parts.push(trimOws(current));
  return parts;
}

/** The content of a quoted-string (RFC 9110 §5.6.4) with quoted-pairs undone; undefined if malformed. */
export function unquote(s: string): string | undefined {
  if (!(s.length >= 2 && s.startsWith('"') && s.endsWith('"'))) return undefined;
  let out = '';
  for (let i = 1; i < s.length - 1; i++) {
    const c = s[i] as string;
    if (c === '\\') {
      if (i + 1 >= s.length - 1) return undefined;
      out += s[++i];
    } else if (c === '"') {
      return undefined;
    } else {
      out += c;
    }
  }
  return out;
}

export function trimOws(s: string): string {
  return s.replace(/^[ \t]+|[ \t]+$/g, '');
}

/**
 * Several field lines of one name combined into one value, as a recipient
 * may do for list-based fields (RFC 9110 §5.3).
 */
export function combined(values: readonly string[]): string {
  return values.join(', ');
}
