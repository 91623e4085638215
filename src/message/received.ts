/**
 * Received header fields (RFC 5321 §4.4) read into hops, in the forms real
 * MTAs write them: Postfix, Exim, Sendmail, qmail, OpenSMTPD, Microsoft
 * Exchange / Outlook.com and Gmail, each with its own way of saying who
 * connected (the TCP-info comment) and with what TLS. Pure, never throws: a
 * part that cannot be read is null (docs/message.md lists the forms).
 */
import type { ReceivedHop } from '../features/message/message.schema.js';
import { formatIpBytes, parseIpBytes } from '../net/address.js';
import { parseMailDate } from './date.js';
import type { HeaderField } from './headers.js';

export { type ReceivingHop, type ReceivingHopOptions, receivingHop } from './receiving-hop.js';
export type { ReceivedHop };

/** Every Received field, top (newest) first, each with its delay from the hop below it. */
export function receivedHops(fields: readonly HeaderField[]): ReceivedHop[] {
  const hops = fields.filter((f) => f.key === 'received').map((f, index) => parseReceived(f.value, index));
  for (let i = 0; i < hops.length - 1; i++) {
    const here = hops[i]!.time;
    const before = hops[i + 1]!.time;
    // Negative when the clocks disagree: kept as written, for the caller to say so.
    if (here !== null && before !== null)
      hops[i]!.delay_seconds = (Date.parse(here) - Date.parse(before)) / 1000;
  }
  return hops;
}

type Part = { kind: 'word' | 'comment'; text: string };

/** RFC 5321 §4.4's clauses, and Exim's "tls <cipher>" after its protocol. */
const CLAUSES = new Set(['from', 'by', 'via', 'with', 'id', 'for', 'tls']);

interface Clause {
  words: string[];
  comments: string[];
}

/** One Received value (unfolded) → a hop; `delay_seconds` is left null (receivedHops sets it). */
export function parseReceived(value: string, index: number): ReceivedHop {
  const { parts, date } = split(value);
  const clauses = new Map<string, Clause>();
  const comments: string[] = [];
  let current: Clause | null = null;
  for (const part of parts) {
    if (part.kind === 'comment') {
      comments.push(part.text);
      current?.comments.push(part.text);
      continue;
    }
    const keyword = part.text.toLowerCase();
    // A keyword starts a clause once; a second "with" or "for" is part of a value (Exchange's "via ...").
    if (CLAUSES.has(keyword) && !clauses.has(keyword) && (current === null || current.words.length > 0)) {
      current = { words: [], comments: [] };
      clauses.set(keyword, current);
    } else {
      current?.words.push(part.text);
    }
  }
  const exim = comments.some((c) => /^Exim\b/i.test(c) || /\bhelo=/i.test(c));
  const from = clauses.get('from');
  const tcp = tcpInfo(from?.words[0] ?? null, from?.comments ?? [], exim);
  const withText = clauses.get('with')?.words.join(' ') || null;
  const protocol = withText && PROTOCOL.test(withText) ? withText.toUpperCase() : withText;
  return {
    index,
    from: tcp.helo,
    from_address: tcp.address,
    from_reverse: tcp.reverse,
    by: name(clauses.get('by')?.words[0]),
    with: protocol,
    tls: tlsOf(comments, clauses.get('tls')?.words[0] ?? null, protocol),
    id: clauses.get('id')?.words[0]?.replace(/^<(.*)>$/, '$1') || null,
    for: clauses.get('for')?.words[0]?.replace(/^<(.*)>$/, '$1') || null,
    envelope_from: envelopeFrom(comments),
    time: date === null ? null : parseMailDate(date),
    delay_seconds: null,
  };
}

/** RFC 3848's registry of "with" protocols (SMTP, ESMTPSA, LMTPS, UTF8SMTPA, ...), written in upper case. */
const PROTOCOL = /^(?:UTF8)?(?:E?SMTP|LMTP)S?A?$/i;

/**
 * Words and comments before the date, and the date: what follows the last
 * ";" outside comments (the date is the one part every form ends with).
 */
function split(value: string): { parts: Part[]; date: string | null } {
  const parts: Part[] = [];
  let date: string | null = null;
  let partsAtSemicolon = -1;
  let dateStart = -1;
  let i = 0;
  while (i < value.length) {
    const c = value[i]!;
    if (c === '(') {
      let depth = 0;
      const start = i;
      for (; i < value.length; i++) {
        if (value[i] === '\\') i++;
        else if (value[i] === '(') depth++;
        else if (value[i] === ')' && --depth === 0) break;
      }
      parts.push({ kind: 'comment', text: value.slice(start + 1, i).trim() });
      i++;
    } else if (c === ';') {
      partsAtSemicolon = parts.length;
      dateStart = i + 1;
      i++;
    } else if (/\s/.test(c) || c === ')') {
      i++; // a stray ")" closes nothing
    } else {
      const start = i;
      while (i < value.length && !/[\s();]/.test(value[i]!)) i++;
      parts.push({ kind: 'word', text: value.slice(start, i) });
    }
  }
  if (dateStart >= 0) {
    date = value.slice(dateStart);
    parts.length = partsAtSemicolon;
  }
  return { parts, date };
}

interface TcpInfo {
  helo: string | null;
  address: string | null;
  reverse: string | null;
}

/**
 * Who connected, from the from clause and its comments:
 *   Postfix, Sendmail, Gmail  from HELO (REVERSE [IP])   REVERSE "unknown" when it did not resolve
 *   RFC 5321 TCP-info         from HELO ([IP])            no reverse name
 *   Exim                      from REVERSE ([IP]:port helo=HELO), from [IP] (helo=HELO)
 *   Exchange / Outlook.com    from HELO (IP)
 *   qmail                     from REVERSE (HELO helo) (IP)
 */
function tcpInfo(word: string | null, comments: readonly string[], exim: boolean): TcpInfo {
  let address: string | null = null;
  let reverse: string | null = null;
  let literalFirst = false;
  for (const comment of comments) {
    const bracket = /(?:^|\s)(?:([^\s[\]()]+)\s+)?\[(?:IPv6:)?([0-9A-Fa-f:.]+)\]/i.exec(comment);
    const found = bracket ? canonicalIp(bracket[2]!) : bareIp(comment);
    if (found === null) continue;
    address = found;
    const named = bracket?.[1];
    if (named && !/^unknown$/i.test(named) && canonicalIp(named.replace(/^\[|\]$/g, '')) === null) {
      reverse = name(named);
    }
    literalFirst = bracket !== null && comment.startsWith('[');
    break;
  }
  const all = comments.join(' ');
  const heloItem = /\bhelo=([^\s)]+)/i.exec(all)?.[1] ?? /^(?:HELO|EHLO)\s+(\S+)/im.exec(all)?.[1] ?? null;
  const wordIp = word?.startsWith('[') ? canonicalIp(word.replace(/^\[(?:IPv6:)?|\]$/gi, '')) : null;
  if (address === null && wordIp !== null) address = wordIp;
  // Exim and qmail write the verified host name where others write HELO, and HELO inside the comment.
  const nameFirst = (exim && literalFirst) || heloItem !== null;
  if (nameFirst && wordIp === null && word !== null && !/^unknown$/i.test(word) && reverse === null) {
    reverse = name(word);
  }
  let helo: string | null = word;
  if (heloItem !== null) helo = heloItem;
  else if (exim && literalFirst && wordIp === null) helo = word; // Exim: HELO was the host name itself
  return { helo, address, reverse };
}

/** An address as text (no brackets) in canonical form, or null. */
function canonicalIp(text: string): string | null {
  const bytes = parseIpBytes(text.replace(/^IPv6:/i, ''));
  return bytes ? formatIpBytes(bytes) : null;
}

/** Exchange and qmail write the address bare in the comment: "(203.0.113.5)". */
function bareIp(comment: string): string | null {
  for (const word of comment.split(/[\s,]+/)) {
    const ip = canonicalIp(word);
    if (ip !== null) return ip;
  }
  return null;
}

function name(text: string | undefined): string | null {
  if (!text) return null;
  return text.replace(/\.$/, '') || null;
}

/** Exim's (and some others') "(envelope-from <a@b>)"; "" for a bounce's null path. */
function envelopeFrom(comments: readonly string[]): string | null {
  for (const c of comments) {
    const m = /\benvelope-from\s*[= ]?\s*(<[^>]*>|[^\s()>;]+)/i.exec(c);
    if (m) return m[1]!.replace(/^<(.*)>$/, '$1');
  }
  return null;
}

/**
 * TLS as each MTA writes it:
 *   Postfix            (using TLSv1.3 with cipher TLS_AES_256_GCM_SHA384 (256/256 bits) ...)
 *   Gmail, Sendmail    (version=TLS1_3 cipher=TLS_AES_256_GCM_SHA384 bits=256/256)
 *   Exchange           (version=TLS1_2, cipher=TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384)
 *   Exim 4.9x          with esmtps (TLS1.3) tls TLS_AES_256_GCM_SHA384
 *   Exim older         with esmtps (TLS1.2:ECDHE-RSA-AES256-GCM-SHA384:256)
 *   OpenSMTPD          (TLSv1.3:TLS_AES_256_GCM_SHA384:256:NO)
 * A protocol ending in S or SA (ESMTPS, RFC 3848) says TLS without saying which.
 * The version is written as OpenSSL names it (TLSv1, TLSv1.2, TLSv1.3).
 */
function tlsOf(
  comments: readonly string[],
  eximCipher: string | null,
  protocol: string | null,
): ReceivedHop['tls'] {
  let version: string | null = null;
  let cipher: string | null = eximCipher;
  for (const c of comments) {
    const postfix = /\busing\s+((?:TLS|SSL)v?[\d._]+)\s+with\s+cipher\s+([A-Za-z0-9_-]+)/i.exec(c);
    const keyed = /\bversion=((?:TLS|SSL)v?[\d._]+)/i.exec(c);
    const colon = /^((?:TLS|SSL)v?[\d._]+)(?::([A-Za-z0-9_-]+))?/i.exec(c);
    if (postfix) {
      version = postfix[1]!;
      cipher = postfix[2]!;
    } else if (keyed) {
      version = keyed[1]!;
      cipher = /\bcipher=([A-Za-z0-9_-]+)/i.exec(c)?.[1] ?? cipher;
    } else if (colon) {
      version = colon[1]!;
      cipher = colon[2] ?? cipher;
    } else {
      continue;
    }
    break;
  }
  if (version === null && cipher === null) {
    const saysTls = protocol !== null && PROTOCOL.test(protocol) && /SA?$/.test(protocol);
    return saysTls ? { version: null, cipher: null } : null;
  }
  return { version: version === null ? null : tlsVersion(version), cipher };
}

/** "TLS1_2", "TLS1.2", "TLSv1.2" → "TLSv1.2"; TLS 1.0 is "TLSv1", as OpenSSL and Node name it. */
function tlsVersion(text: string): string {
  const m = /^TLSv?1(?:[._](\d))?$/i.exec(text);
  if (!m) return text;
  return m[1] === undefined || m[1] === '0' ? 'TLSv1' : `TLSv1.${m[1]}`;
}
