/**
 * Structured Field Values for HTTP (RFC 8941), the parts the inspector
 * needs: Items (Cross-Origin-Opener-Policy and -Embedder-Policy, HTML spec)
 * and Dictionaries (Permissions-Policy). Follows the parsing algorithms of
 * RFC 8941 §4.2 step by step; any failure fails the whole field, which is
 * what browsers do (the header is then ignored).
 */

export type BareItem =
  | { type: 'integer' | 'decimal'; value: number }
  | { type: 'string'; value: string }
  | { type: 'token'; value: string }
  | { type: 'bytes'; value: string }
  | { type: 'boolean'; value: boolean };

export interface Item {
  value: BareItem;
  params: Map<string, BareItem>;
}

export interface InnerList {
  items: Item[];
  params: Map<string, BareItem>;
}

export type DictionaryMember = Item | InnerList;

export function isInnerList(member: DictionaryMember): member is InnerList {
  return 'items' in member;
}

class ParseError extends Error {}

/** A cursor over the field value; every parse_* below consumes from it. */
class Input {
  pos = 0;
  constructor(readonly s: string) {}
  get empty(): boolean {
    return this.pos >= this.s.length;
  }
  peek(): string {
    return this.s[this.pos] ?? '';
  }
  next(): string {
    const c = this.peek();
    this.pos++;
    return c;
  }
  skipSp(): void {
    while (this.peek() === ' ') this.pos++;
  }
  skipOws(): void {
    while (this.peek() === ' ' || this.peek() === '\t') this.pos++;
  }
}

/** RFC 8941 §4.2: parse a whole field value as an Item; undefined when it does not parse. */
export function parseItem(value: string): Item | undefined {
  return parseTopLevel(value, (input) => parseItemAt(input));
}

/** RFC 8941 §4.2: parse a whole field value as a Dictionary (a later duplicate key overwrites). */
export function parseDictionary(value: string): Map<string, DictionaryMember> | undefined {
  return parseTopLevel(value, (input) => {
    const dict = new Map<string, DictionaryMember>();
    while (!input.empty) {
      const key = parseKey(input);
      let member: DictionaryMember;
      if (input.peek() === '=') {
        input.next();
        member = parseItemOrInnerList(input);
      } else {
        member = { value: { type: 'boolean', value: true }, params: parseParameters(input) };
      }
      dict.set(key, member);
      input.skipOws();
      if (input.empty) return dict;
      if (input.next() !== ',') throw new ParseError('expected ","');
      input.skipOws();
      if (input.empty) throw new ParseError('trailing ","');
    }
    return dict;
  });
}

function parseTopLevel<T>(value: string, parse: (input: Input) => T): T | undefined {
  const input = new Input(value);
  try {
    input.skipSp();
    const out = parse(input);
    input.skipSp();
    return input.empty ? out : undefined;
  } catch (err) {
    if (err instanceof ParseError) return undefined;
    throw err;
  }
}

function parseItemOrInnerList(input: Input): DictionaryMember {
  return input.peek() === '(' ? parseInnerList(input) : parseItemAt(input);
}

function parseInnerList(input: Input): InnerList {
  input.next(); // "("
  const items: Item[] = [];
  while (!input.empty) {
    input.skipSp();
    if (input.peek() === ')') {
      input.next();
      return { items, params: parseParameters(input) };
    }
    items.push(parseItemAt(input));
    if (input.peek() !== ' ' && input.peek() !== ')') throw new ParseError('expected SP or ")"');
  }
  throw new ParseError('unterminated inner list');
}

function parseItemAt(input: Input): Item {
  const value = parseBareItem(input);
  return { value, params: parseParameters(input) };
}

function parseParameters(input: Input): Map<string, BareItem> {
  const params = new Map<string, BareItem>();
  while (input.peek() === ';') {
    input.next();
    input.skipSp();
    const key = parseKey(input);
    let value: BareItem = { type: 'boolean', value: true };
    if (input.peek() === '=') {
      input.next();
      value = parseBareItem(input);
    }
    params.set(key, value);
  }
  return params;
}

function parseKey(input: Input): string {
  if (!/^[a-z*]$/.test(input.peek())) throw new ParseError('key must start with lcalpha or "*"');
  let key = '';
  while (/^[a-z0-9_\-.*]$/.test(input.peek())) key += input.next();
  return key;
}

function parseBareItem(input: Input): BareItem {
  const c = input.peek();
  if (c === '-' || /^[0-9]$/.test(c)) return parseNumber(input);
  if (c === '"') return parseString(input);
  if (/^[A-Za-z*]$/.test(c)) return parseToken(input);
  if (c === ':') return parseBytes(input);
  if (c === '?') return parseBoolean(input);
  throw new ParseError('not a bare item');
}

function parseNumber(input: Input): BareItem {
  const m = /^-?[0-9]+(\.[0-9]+)?/.exec(input.s.slice(input.pos));
  if (!m) throw new ParseError('bad number');
  const [text, fraction] = [m[0], m[1]];
  const intDigits = text.replace(/^-/, '').split('.')[0]?.length ?? 0;
  // RFC 8941 §3.3.1/§3.3.2: at most 15 integer digits; decimals at most 12 integer and 3 fraction digits.
  if (fraction === undefined ? intDigits > 15 : intDigits > 12 || fraction.length - 1 > 3) {
    throw new ParseError('number out of range');
  }
  input.pos += text.length;
  return { type: fraction === undefined ? 'integer' : 'decimal', value: Number(text) };
}

function parseString(input: Input): BareItem {
  input.next(); // '"'
  let out = '';
  while (!input.empty) {
    const c = input.next();
    if (c === '\\') {
      const escaped = input.next();
      if (escaped !== '"' && escaped !== '\\') throw new ParseError('bad escape');
      out += escaped;
    } else if (c === '"') {
      return { type: 'string', value: out };
    } else if (c < ' ' || c > '~') {
      throw new ParseError('character not allowed in a string');
    } else {
      out += c;
    }
  }
  throw new ParseError('unterminated string');
}

function parseToken(input: Input): BareItem {
  let out = input.next();
  while (/^[!#$%&'*+\-.^_`|~0-9A-Za-z:/]$/.test(input.peek())) out += input.next();
  return { type: 'token', value: out };
}

function parseBytes(input: Input): BareItem {
  input.next(); // ":"
  const end = input.s.indexOf(':', input.pos);
  if (end === -1) throw new ParseError('unterminated byte sequence');
  const b64 = input.s.slice(input.pos, end);
  if (!/^[A-Za-z0-9+/=]*$/.test(b64)) throw new ParseError('bad base64');
  input.pos = end + 1;
  return { type: 'bytes', value: b64 };
}

function parseBoolean(input: Input): BareItem {
  input.next(); // "?"
  const c = input.next();
  if (c !== '0' && c !== '1') throw new ParseError('bad boolean');
  return { type: 'boolean', value: c === '1' };
}

/** A bare item written back in field syntax (strings quoted), for showing an allowlist. */
export function serializeBareItem(item: BareItem): string {
  switch (item.type) {
    case 'string':
      return `"${item.value.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
    case 'bytes':
      return `:${item.value}:`;
    case 'boolean':
      return item.value ? '?1' : '?0';
    default:
      return String(item.value);
  }
}
