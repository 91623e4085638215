/**
 * Authentication-Results (RFC 8601) and ARC-Authentication-Results (RFC
 * 8617 §4.1.1): parsed, placed (which ones the receiving side wrote, §5) and
 * compared with netdiag's own verdicts. Pure, never throws: what cannot be
 * read is left out, and a header that says nothing readable has no results
 * (docs/message.md, "Authentication-Results").
 */
import type { Static } from 'typebox';
import type { AuthenticationResultsSchema } from '../features/message/message.schema.js';
import type { HeaderField } from './headers.js';

type AuthenticationResults = Static<typeof AuthenticationResultsSchema>;
export type AuthResult = AuthenticationResults['results'][number];

export interface ParsedAuthenticationResults {
  /** The authserv-id; "" when the header has none (Microsoft writes none). */
  authserv_id: string;
  /** authres-version (§2.2), when written. */
  version: number | null;
  /** ARC-Authentication-Results' i=; null for Authentication-Results. */
  instance: number | null;
  /** method=result with its properties; "reason" among them when written (§2.2 reasonspec). */
  results: AuthResult[];
}

/**
 * One header's value. RFC 8601 §2.2:
 *   authserv-id [version] ( "; none" / *( ";" method[/version] "=" result [reason=...] *(ptype.property=value) ) )
 * Comments and quoted strings anywhere; properties without a ptype (Microsoft's
 * "action=none") kept under their own name; a segment without method=result
 * (Microsoft's stray "example.com;") skipped. `arc`: the value starts with "i=N;".
 */
export function parseAuthenticationResults(value: string, arc = false): ParsedAuthenticationResults {
  const segments = splitSegments(value);
  let instance: number | null = null;
  if (arc && segments.length > 0) {
    const i = /^i\s*=\s*(\d+)$/i.exec(segments[0]!.trim());
    if (i) {
      instance = Number(i[1]);
      segments.shift();
    }
  }
  let authservId = '';
  let version: number | null = null;
  const first = segments[0];
  if (first !== undefined && !hasEquals(first)) {
    const scanner = new Scanner(first);
    authservId = scanner.value();
    const v = scanner.value();
    if (/^\d+$/.test(v)) version = Number(v);
    segments.shift();
  }
  const results: AuthResult[] = [];
  for (const segment of segments) {
    const result = readResinfo(segment);
    if (result) results.push(result);
  }
  return { authserv_id: authservId, version, instance, results };
}

/** The value split at ";" outside quoted strings and comments. */
function splitSegments(value: string): string[] {
  const out: string[] = [];
  let current = '';
  let depth = 0;
  let quoted = false;
  for (let i = 0; i < value.length; i++) {
    const c = value[i]!;
    if (c === '\\' && (quoted || depth > 0)) {
      current += c + (value[++i] ?? '');
      continue;
    }
    if (quoted) {
      if (c === '"') quoted = false;
    } else if (c === '"' && depth === 0) quoted = true;
    else if (c === '(') depth++;
    else if (c === ')' && depth > 0) depth--;
    else if (c === ';' && depth === 0) {
      out.push(current);
      current = '';
      continue;
    }
    current += c;
  }
  out.push(current);
  return out.filter((s) => s.trim() !== '');
}

function hasEquals(segment: string): boolean {
  const scanner = new Scanner(segment);
  for (;;) {
    scanner.cfws();
    if (scanner.done()) return false;
    if (scanner.take('=')) return true;
    if (scanner.key() === '' && scanner.value() === '') scanner.skip(); // key() stops at "=" and quotes
  }
}

/** RFC 5322 lexical pieces, as RFC 8601 §2.2 uses them: CFWS, "=", value (token or quoted-string). */
class Scanner {
  private pos = 0;
  constructor(private readonly text: string) {}

  done(): boolean {
    return this.pos >= this.text.length;
  }

  skip(): void {
    this.pos++;
  }

  /** White space and comments (nested, with quoted pairs). */
  cfws(): void {
    while (this.pos < this.text.length) {
      const c = this.text[this.pos]!;
      if (c === ' ' || c === '\t' || c === '\r' || c === '\n') this.pos++;
      else if (c === '(') {
        let depth = 0;
        for (; this.pos < this.text.length; this.pos++) {
          const d = this.text[this.pos];
          if (d === '\\') this.pos++;
          else if (d === '(') depth++;
          else if (d === ')' && --depth === 0) break;
        }
        this.pos++;
      } else return;
    }
  }

  take(c: string): boolean {
    this.cfws();
    if (this.text[this.pos] !== c) return false;
    this.pos++;
    return true;
  }

  /** A key: up to white space, "(", "=" or a quote. */
  key(): string {
    this.cfws();
    const start = this.pos;
    while (this.pos < this.text.length && !/[\s("=]/.test(this.text[this.pos]!)) this.pos++;
    return this.text.slice(start, this.pos);
  }

  /**
   * A value: a quoted-string (unquoted), or up to white space or "(". An "="
   * inside stays: "header.b=AbC+/8=" is base64 with its padding.
   */
  value(): string {
    this.cfws();
    if (this.text[this.pos] === '"') {
      let out = '';
      for (this.pos++; this.pos < this.text.length && this.text[this.pos] !== '"'; this.pos++) {
        out += this.text[this.pos] === '\\' ? (this.text[++this.pos] ?? '') : this.text[this.pos];
      }
      this.pos++;
      return out;
    }
    const start = this.pos;
    while (this.pos < this.text.length && !/[\s(]/.test(this.text[this.pos]!)) this.pos++;
    return this.text.slice(start, this.pos);
  }
}

/** method[/version] "=" result, then key=value pairs; null when the segment starts otherwise. */
function readResinfo(segment: string): AuthResult | null {
  const scanner = new Scanner(segment);
  const method = scanner.key();
  if (method === '' || !scanner.take('=')) return null;
  const result = scanner.value();
  if (result === '' || result.includes('=')) return null;
  const properties: Record<string, string> = {};
  for (;;) {
    scanner.cfws();
    if (scanner.done()) break;
    const key = scanner.key().toLowerCase();
    if (key === '') {
      scanner.skip(); // a stray "=" or quote: not a property
      continue;
    }
    if (!scanner.take('=')) continue; // a word without a value (Microsoft's stray words)
    const value = scanner.value();
    if (!(key in properties)) properties[key] = value;
  }
  return { method: method.replace(/\/.*$/, '').toLowerCase(), result: result.toLowerCase(), properties };
}

// ---------------------------------------------------------------------------
// Trust: RFC 8601 §5

export type PlacedAuthenticationResults = Omit<AuthenticationResults, 'disagreements'>;

/**
 * Every Authentication-Results field, marked trusted when it stands above
 * the receiving side's Received header (`receivingIndex`, its position among
 * the Received fields as receivingHop gives it): the receiving side adds its
 * own on top as it receives, so those above are its own; any below were in
 * the message when it arrived, and the sender or a system on the way could
 * have written them. Without a receiving hop none is trusted.
 */
export function trustAuthenticationResults(
  fields: readonly HeaderField[],
  receivingIndex: number | null,
): PlacedAuthenticationResults[] {
  const received = fields.filter((f) => f.key === 'received');
  const boundary = receivingIndex === null ? undefined : received[receivingIndex];
  return fields
    .filter((f) => f.key === 'authentication-results')
    .map((f, index) => {
      const parsed = parseAuthenticationResults(f.value);
      const who = parsed.authserv_id ? ` (${parsed.authserv_id})` : '';
      let trusted = false;
      let why: string;
      if (boundary === undefined) {
        why =
          receivingIndex === null
            ? 'No Received header shows where the message entered the receiving system, so none of its Authentication-Results can be told from ones the sender wrote.'
            : `There is no Received header ${receivingIndex}.`;
      } else if (f.index < boundary.index) {
        trusted = true;
        why = `Written${who} above Received header ${receivingIndex}, where the receiving side took the message from outside: its own (RFC 8601 §5).`;
      } else {
        why = `Below Received header ${receivingIndex}, where the receiving side took the message from outside: it was in the message when it arrived, and the sender or a system on the way could have written it, whatever authserv-id it names.`;
      }
      return { index, authserv_id: parsed.authserv_id, trusted, why, results: parsed.results };
    });
}

// ---------------------------------------------------------------------------
// Disagreements with netdiag's own verdicts

export interface OwnVerdicts {
  dkim: { domain: string | null; selector: string | null; result: string; reason?: string | null }[];
  spf: string | null;
  dmarc: string | null;
  arc: string | null;
}

/** Results that say the same in other words: RFC 5451's "hardfail", Microsoft's "bestguesspass" (no DMARC record). */
function sameResult(method: string, theirs: string, ours: string): boolean {
  const t = theirs === 'hardfail' ? 'fail' : theirs;
  if (t === ours) return true;
  return method === 'dmarc' && t === 'bestguesspass' && ours === 'none';
}

/**
 * Where a header's results differ from netdiag's, in words. A DKIM result is
 * matched to netdiag's signature of the same d= (header.d, or header.i's
 * domain) and s= when the header names one; null verdicts (not judged) are
 * not compared.
 */
export function disagreements(header: Pick<AuthenticationResults, 'results'>, ours: OwnVerdicts): string[] {
  const out: string[] = [];
  for (const r of header.results) {
    if (r.method === 'dkim') {
      const said = dkimDisagreement(r, ours.dkim);
      if (said) out.push(said);
      continue;
    }
    if (r.method !== 'spf' && r.method !== 'dmarc' && r.method !== 'arc') continue;
    const own = ours[r.method];
    if (own === null || sameResult(r.method, r.result, own)) continue;
    const about =
      r.method === 'spf'
        ? (r.properties['smtp.mailfrom'] ?? r.properties['smtp.helo'])
        : r.method === 'dmarc'
          ? r.properties['header.from']
          : undefined;
    out.push(`says ${r.method}=${r.result}${about ? ` for ${about}` : ''}; netdiag: ${own}`);
  }
  return out;
}

function dkimDisagreement(r: AuthResult, ours: OwnVerdicts['dkim']): string | null {
  const domain = (r.properties['header.d'] ?? r.properties['header.i']?.replace(/^.*@/, '') ?? '')
    .toLowerCase()
    .replace(/\.$/, '');
  const selector = r.properties['header.s'] ?? null;
  const named = `${domain ? ` for ${domain}` : ''}${selector ? ` (s=${selector})` : ''}`;
  if (r.result === 'none') {
    return ours.length > 0 ? `says dkim=none; netdiag: ${ours.length} signature(s) found` : null;
  }
  const candidates = ours.filter(
    (s) =>
      (!domain || s.domain?.toLowerCase() === domain) &&
      (selector === null || s.selector?.toLowerCase() === selector.toLowerCase()),
  );
  if (candidates.length === 0) {
    return `says dkim=${r.result}${named}; netdiag: no such signature in the message`;
  }
  if (candidates.some((s) => sameResult('dkim', r.result, s.result))) return null;
  const s = candidates[0]!;
  return `says dkim=${r.result}${named}; netdiag: ${s.result}${s.reason ? ` (${s.reason})` : ''}`;
}
