/**
 * RFC5322.From: the author address DMARC protects, read from the From
 * field's address list (RFC 5322 §3.4, with the obsolete forms of §4.4:
 * routes, phrases with dots) and RFC 2047 encoded-words decoded only for the
 * display name. The address is read from the raw field, never from decoded
 * text, so `=?utf-8?Q?ceo@example.com?= <x@evil.example>` is x@evil.example.
 * Pure, never throws.
 */
import type { HeaderField } from './headers.js';

export interface FromAddress {
  /** The first author mailbox's address (local@domain as written), or null. */
  address: string | null;
  /** Its domain, lower case, no trailing dot; null for none or an address literal. */
  domain: string | null;
  /** Its display name, encoded-words decoded (for display only). */
  name: string | null;
  /** Every author address, in order (more than one is a finding). */
  addresses: string[];
  /** What is odd about the From field, in words. */
  notes: string[];
}

/** The message's From: its first mailbox, and notes on several From fields or addresses. */
export function headerFrom(fields: readonly HeaderField[]): FromAddress {
  const from = fields.filter((f) => f.key === 'from');
  const notes: string[] = [];
  if (from.length === 0) {
    return {
      address: null,
      domain: null,
      name: null,
      addresses: [],
      notes: ['The message has no From field.'],
    };
  }
  if (from.length > 1) {
    notes.push(
      `The message has ${from.length} From fields (RFC 5322 allows one; DMARC receivers may reject it): the first is read.`,
    );
  }
  const mailboxes = parseAddressList(from[0]!.value);
  if (mailboxes.length === 0) {
    notes.push(`The From field names no address: ${JSON.stringify(from[0]!.value.slice(0, 200))}.`);
    return { address: null, domain: null, name: null, addresses: [], notes };
  }
  const first = mailboxes[0]!;
  if (mailboxes.length > 1) {
    const domains = new Set(mailboxes.map((m) => domainOf(m.address)));
    notes.push(
      `From names ${mailboxes.length} addresses (${mailboxes.map((m) => m.address).join(', ')})` +
        (domains.size > 1 ? ' in different domains: DMARC cannot protect one of them alone.' : '.'),
    );
  }
  const domain = domainOf(first.address);
  if (domain === null) notes.push(`The From address ${first.address} has no domain name.`);
  return {
    address: first.address,
    domain,
    name: first.name,
    addresses: mailboxes.map((m) => m.address),
    notes,
  };
}

function domainOf(address: string): string | null {
  const at = address.lastIndexOf('@');
  const domain = address
    .slice(at + 1)
    .toLowerCase()
    .replace(/\.$/, '');
  if (at <= 0 || domain === '' || domain.startsWith('[')) return null;
  return domain;
}

interface Token {
  kind: 'atom' | 'quoted' | 'special' | 'literal';
  text: string;
  /** White space or a comment came before it. */
  space: boolean;
}

/** RFC 5322 §3.2.3 specials, less the dot (which obs-phrase allows in names). */
const SPECIALS = '()<>[]:;@\\,."';

function tokenize(value: string): { tokens: Token[]; comments: string[] } {
  const tokens: Token[] = [];
  const comments: string[] = [];
  let space = false;
  let i = 0;
  while (i < value.length) {
    const c = value[i]!;
    if (c === ' ' || c === '\t' || c === '\r' || c === '\n') {
      space = true;
      i++;
    } else if (c === '(') {
      let depth = 0;
      let text = '';
      for (; i < value.length; i++) {
        const d = value[i]!;
        if (d === '\\') text += value[++i] ?? '';
        else if (d === '(' && depth++ > 0) text += d;
        else if (d === ')' && --depth === 0) break;
        else if (d !== '(') text += d;
      }
      i++;
      comments.push(text.trim());
      space = true;
    } else if (c === '"') {
      let text = '';
      for (i++; i < value.length && value[i] !== '"'; i++)
        text += value[i] === '\\' ? (value[++i] ?? '') : value[i];
      i++;
      tokens.push({ kind: 'quoted', text, space });
      space = false;
    } else if (c === '[') {
      const end = value.indexOf(']', i);
      const stop = end === -1 ? value.length : end + 1;
      tokens.push({ kind: 'literal', text: value.slice(i, stop), space });
      i = stop;
      space = false;
    } else if (SPECIALS.includes(c)) {
      tokens.push({ kind: 'special', text: c, space });
      i++;
      space = false;
    } else {
      let j = i;
      while (j < value.length && !SPECIALS.includes(value[j]!) && !/[ \t\r\n]/.test(value[j]!)) j++;
      tokens.push({ kind: 'atom', text: value.slice(i, j), space });
      i = j;
      space = false;
    }
  }
  return { tokens, comments };
}

interface Mailbox {
  address: string;
  name: string | null;
}

/**
 * The mailboxes of an address list (groups opened, their names dropped).
 * Entries without an addr-spec (an empty group, a bare phrase) are skipped.
 */
export function parseAddressList(value: string): Mailbox[] {
  const { tokens } = tokenize(value);
  const out: Mailbox[] = [];
  let phrase: Token[] = [];
  let angle: Token[] | null = null;
  let inAngle = false;
  const finish = () => {
    const name = phrase.length > 0 && angle !== null ? decodeEncodedWords(joinPhrase(phrase)) : null;
    const spec = angle ?? phrase;
    const address = addrSpec(spec);
    if (address) out.push({ address, name: name || null });
    phrase = [];
    angle = null;
  };
  for (const t of tokens) {
    if (inAngle) {
      if (t.kind === 'special' && t.text === '>') inAngle = false;
      else angle!.push(t);
      continue;
    }
    if (t.kind === 'special' && t.text === '<') {
      inAngle = true;
      angle = [];
    } else if (t.kind === 'special' && t.text === ':' && angle === null) {
      phrase = []; // a group's display name: its members follow
    } else if (t.kind === 'special' && (t.text === ',' || t.text === ';')) {
      finish();
    } else {
      phrase.push(t);
    }
  }
  finish();
  return out;
}

/** local-part "@" domain from tokens, an obs-route ("@a,@b:") dropped; null without both sides. */
function addrSpec(tokens: readonly Token[]): string | null {
  const colon = tokens.findIndex((t) => t.kind === 'special' && t.text === ':');
  const spec = colon >= 0 && tokens[0]?.text === '@' ? tokens.slice(colon + 1) : tokens;
  const at = spec.map((t) => t.kind === 'special' && t.text === '@').lastIndexOf(true);
  if (at <= 0 || at === spec.length - 1) return null;
  const local = spec
    .slice(0, at)
    .map((t) => (t.kind === 'quoted' ? `"${t.text.replace(/(["\\])/g, '\\$1')}"` : t.text))
    .join('');
  const domain = spec
    .slice(at + 1)
    .map((t) => t.text)
    .join('');
  if (/[<>,;:@\s]/.test(domain) || local === '') return null;
  return `${local}@${domain}`;
}

function joinPhrase(tokens: readonly Token[]): string {
  return tokens
    .map((t, i) => (i > 0 && t.space ? ' ' : '') + t.text)
    .join('')
    .trim();
}

/**
 * RFC 2047 encoded-words (`=?charset[*lang]?B|Q?text?=`) decoded; white
 * space between two adjacent encoded-words dropped (§6.2). A word in an
 * unknown charset or with a broken encoding is left as written.
 */
export function decodeEncodedWords(text: string): string {
  const WORD = /=\?([^?\s*]+)(?:\*[^?\s]*)?\?([BbQq])\?([^?\s]*)\?=/g;
  return text
    .replace(/(=\?[^?\s]+\?[BbQq]\?[^?\s]*\?=)\s+(?==\?[^?\s]+\?[BbQq]\?[^?\s]*\?=)/g, '$1')
    .replace(WORD, (word, charset: string, enc: string, data: string) => {
      try {
        const bytes =
          enc.toUpperCase() === 'B'
            ? Buffer.from(data, 'base64')
            : Buffer.from(
                data
                  .replace(/_/g, ' ')
                  .replace(/=([0-9A-Fa-f]{2})/g, (_, h: string) =>
                    String.fromCharCode(Number.parseInt(h, 16)),
                  ),
                'latin1',
              );
        return new TextDecoder(charset.toLowerCase()).decode(bytes);
      } catch {
        return word; // TextDecoder throws RangeError for a charset it does not know
      }
    });
}
