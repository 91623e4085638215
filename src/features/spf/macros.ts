/**
 * The SPF macro language (RFC 7208 §7): one tokenizer for both syntax checks
 * (a record's domain-specs and modifiers, §7.1) and expansion at evaluation
 * time (§7.3), so what the parser accepts is exactly what the evaluator can
 * expand. Explanation text (§6.2) is the same language plus spaces and the
 * letters c, r and t.
 */
import { formatIpBytes as formatIp, matches, parseIpBytes as parseIp, unmapIp } from '../../net/address.js';

export type MacroToken =
  | { kind: 'literal'; text: string }
  | {
      kind: 'macro';
      /** Lower-case macro letter. */
      letter: string;
      /** Upper-case letter: URL-escape the expansion (§7.3). */
      escape: boolean;
      /** Keep only this many right-hand parts; undefined keeps all. */
      parts?: number;
      reverse: boolean;
      /** Characters to split on; "." when none are given. */
      delimiters: string;
    };

const LETTERS = 'slodiphv';
const EXPLANATION_LETTERS = 'crt';
const MACRO_BODY = /^([a-z])([0-9]*)(r?)([.\-+,/_=]*)$/i;

/**
 * The tokens of a macro-string, or why it is not one. `explanation` accepts
 * the explain-string grammar: spaces, and the letters c, r and t (§7.1).
 */
export function tokenizeMacroString(value: string, explanation = false): MacroToken[] | string {
  const tokens: MacroToken[] = [];
  let literal = '';
  for (let i = 0; i < value.length; i++) {
    const ch = value[i]!;
    const code = value.charCodeAt(i);
    if (ch !== '%') {
      // macro-literal = %x21-24 / %x26-7E; explain-string adds SP.
      if ((code < 0x21 || code > 0x7e) && !(explanation && code === 0x20))
        return `contains the invalid character ${JSON.stringify(ch)}`;
      literal += ch;
      continue;
    }
    const next = value[i + 1];
    if (next === '%' || next === '_' || next === '-') {
      literal += next === '%' ? '%' : next === '_' ? ' ' : '%20';
      i += 1;
      continue;
    }
    if (next !== '{') return 'has a "%" that does not start a macro (%{x}, %%, %_ or %-)';
    const close = value.indexOf('}', i + 2);
    if (close < 0) return 'has an unterminated macro';
    const body = value.slice(i + 2, close);
    const m = MACRO_BODY.exec(body);
    if (!m) return `has an invalid macro "%{${body}}"`;
    const letter = m[1]!.toLowerCase();
    if (!LETTERS.includes(letter) && !EXPLANATION_LETTERS.includes(letter))
      return `has an invalid macro "%{${body}}"`;
    if (!explanation && EXPLANATION_LETTERS.includes(letter))
      return `uses macro letter "${m[1]}", allowed only in explanation text`;
    if (m[2] !== '' && Number(m[2]) === 0) return `has a zero digit transformer in "%{${body}}"`;
    if (literal) tokens.push({ kind: 'literal', text: literal });
    literal = '';
    tokens.push({
      kind: 'macro',
      letter,
      escape: m[1] !== letter,
      ...(m[2] === '' ? {} : { parts: Number(m[2]) }),
      reverse: m[3] !== '',
      delimiters: m[4] || '.',
    });
    i = close;
  }
  if (literal) tokens.push({ kind: 'literal', text: literal });
  return tokens;
}

/** What the macro letters stand for in one evaluation (RFC 7208 §7.3). */
export interface MacroValues {
  /** <sender>: `local-part@domain`. */
  sender: string;
  local: string;
  senderDomain: string;
  /** <domain>: the domain whose record is being evaluated. */
  domain: string;
  ip: SpfIp;
  helo: string;
  /** %{r}: the host performing the check. */
  receiver: string;
  /** %{t}: seconds since the epoch. */
  now: number;
  /** %{p}: the validated domain name of <ip>, or "unknown"; looked up only when a macro asks. */
  validatedName: () => Promise<string>;
}

export interface SpfIp {
  /** The address as compared: IPv4 dotted quad, or IPv6 in RFC 5952 form (an IPv4-mapped address is IPv4). */
  address: string;
  family: 4 | 6;
  bytes: Uint8Array;
}

/** Parses an address strictly; an IPv4-mapped IPv6 address is its IPv4 address (RFC 7208 §5). */
export function parseSpfIp(text: string): SpfIp | undefined {
  const parsed = parseIp(text);
  if (!parsed) return undefined;
  const bytes = unmapIp(parsed);
  return { address: formatIp(bytes), family: bytes.length === 4 ? 4 : 6, bytes };
}

/** Whether `ip` lies in `network`/`bits` of the same family (host bits of the network are ignored). */
export function inNetwork(ip: SpfIp, network: string, bits: number): boolean {
  const net = parseIp(network);
  return net !== undefined && net.length === ip.bytes.length && matches(net, bits, ip.bytes);
}

/**
 * Expands tokens checked by tokenizeMacroString, left to right. Expansion
 * stops at the first token that takes the text past `maxLength`: what is
 * returned is then longer than `maxLength` (by at most that token), which is
 * how a caller knows it was cut. Each token costs at most the size of one
 * letter's value, so the work is linear in what is returned.
 */
export async function expandMacros(
  tokens: readonly MacroToken[],
  values: MacroValues,
  maxLength = Number.POSITIVE_INFINITY,
): Promise<string> {
  let out = '';
  for (const token of tokens) {
    out += await expandToken(token, values);
    if (out.length > maxLength) break;
  }
  return out;
}

/**
 * Expands a domain-spec into the name to query (§4.8, §7.3): the expansion
 * with labels dropped from the left until it is at most 253 characters. Only
 * the rightmost characters can survive that, so tokens are expanded right to
 * left and the ones left of what the name keeps are never expanded: a record
 * of thousands of %{s} costs what one name of 253 characters does.
 */
export async function expandDomainName(tokens: readonly MacroToken[], values: MacroValues): Promise<string> {
  let out = '';
  for (let i = tokens.length - 1; i >= 0; i--) {
    out = (await expandToken(tokens[i]!, values)) + out;
    // What truncation keeps lies within the last 255 characters (253, the dot before them, and a
    // trailing dot): more on the left cannot change the name, only whether it had no dot at all.
    if (out.length > MAX_NAME + 2) {
      out = out.slice(-(MAX_NAME + 2));
      break;
    }
  }
  return truncateExpandedName(out);
}

async function expandToken(token: MacroToken, values: MacroValues): Promise<string> {
  if (token.kind === 'literal') return token.text;
  const raw = await letterValue(token.letter, values);
  let parts = splitOn(raw, token.delimiters);
  if (token.reverse) parts = parts.reverse();
  if (token.parts !== undefined && token.parts < parts.length) parts = parts.slice(-token.parts);
  const expanded = parts.join('.');
  return token.escape ? urlEscape(expanded) : expanded;
}

async function letterValue(letter: string, v: MacroValues): Promise<string> {
  switch (letter) {
    case 's':
      return v.sender;
    case 'l':
      return v.local;
    case 'o':
      return v.senderDomain;
    case 'd':
      return v.domain;
    case 'i':
      // IPv6 in dot-format, one nibble per label; upper-case hex as pyspf and the openspf suite write it.
      return v.ip.family === 4
        ? v.ip.address
        : [...v.ip.bytes]
            .flatMap((b) => [b >> 4, b & 15])
            .map((n) => n.toString(16).toUpperCase())
            .join('.');
    case 'p':
      return v.validatedName();
    case 'v':
      return v.ip.family === 4 ? 'in-addr' : 'ip6';
    case 'h':
      return v.helo;
    case 'c':
      return v.ip.address;
    case 'r':
      return v.receiver;
    case 't':
      return String(Math.floor(v.now));
    default:
      throw new Error(`macro letter ${letter} passed the tokenizer`);
  }
}

function splitOn(value: string, delimiters: string): string[] {
  const parts: string[] = [];
  let current = '';
  for (const ch of value) {
    if (delimiters.includes(ch)) {
      parts.push(current);
      current = '';
    } else current += ch;
  }
  parts.push(current);
  return parts;
}

/** Each octet as §7.3 writes it: RFC 3986 unreserved characters as they are, the rest %XX. */
const ESCAPED = Array.from({ length: 256 }, (_, byte) => {
  const ch = String.fromCharCode(byte);
  return /[A-Za-z0-9\-._~]/.test(ch) ? ch : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
});

/** RFC 7208 §7.3: upper-case macros are URL-escaped, octet by octet of the UTF-8 form. */
function urlEscape(value: string): string {
  const parts: string[] = [];
  for (const byte of Buffer.from(value, 'utf8')) parts.push(ESCAPED[byte]!);
  return parts.join('');
}

/** The longest name a DNS query may carry, in its text form without the trailing dot (RFC 1035 §2.3.4). */
const MAX_NAME = 253;

/**
 * RFC 7208 §4.8 / §7.3: an expanded name longer than 253 characters loses
 * labels from the left until it fits.
 */
export function truncateExpandedName(name: string): string {
  let out = name.endsWith('.') ? name.slice(0, -1) : name;
  while (out.length > MAX_NAME) {
    const dot = out.indexOf('.');
    if (dot < 0) return out;
    out = out.slice(dot + 1);
  }
  return out;
}
