/**
 * DNS names as every feature takes them from a user: a domain name normalized
 * to its wire spelling (IDN → A-labels, trailing dot dropped, lower-cased, LDH
 * with `_` where owner names use it), and the reverse name of an address.
 * Pure functions, no I/O.
 */
import { domainToASCII, domainToUnicode } from 'node:url';
import ipaddr from 'ipaddr.js';
import { AppError } from '../errors.js';

/** Why a name was refused, for callers that add to the message (tests assert on it too). */
export type InvalidNameReason =
  | 'empty'
  | 'too_long'
  /** `.` alone: the root is no name to ask about. */
  | 'root'
  /** URL syntax (`/`, `?`, `%`, `:`, ...) that would make the name another one. */
  | 'not_bare'
  /** UTS #46 (IDNA) could not map it. */
  | 'not_idna'
  | 'empty_label'
  | 'label_too_long'
  /** `_` in a label where only host names are accepted. */
  | 'underscore'
  | 'invalid_label'
  /** An all-numeric last label: an IP address or nonsense, never a TLD. */
  | 'numeric_tld'
  /** A special-use name (RFC 6761, RFC 6762, RFC 7686, RFC 9476) no DNS server is asked about. */
  | 'special_use'
  /** Letters of several scripts in one label (UTS #39 §5.2), the look-alike pattern. */
  | 'mixed_scripts';

/** A 400 naming the parameter, as badInput writes it, with the reason kept apart from the text. */
export class InvalidNameError extends AppError {
  readonly reason: InvalidNameReason;
  readonly param: string;
  /** The message without the parameter name, for a caller that adds a hint to it. */
  readonly detail: string;

  constructor(reason: InvalidNameReason, param: string, detail: string) {
    super(400, 'bad_request', `${param} ${detail}`);
    this.reason = reason;
    this.param = param;
    this.detail = detail;
  }
}

const PLAIN_ASCII = /^[A-Za-z0-9._-]+$/;
/**
 * URL syntax. domainToASCII is the WHATWG URL *host* parser: it percent-decodes
 * (`example%2Ecom` → example.com) and cuts at a path, query or fragment
 * (`evil.test?example.com` → evil.test), so such input would be answered for
 * another name than the one given. None of these belong in a name. (White
 * space and control characters make domainToASCII fail: "not a valid domain name".)
 */
const NOT_IN_A_NAME = /[/?#\\%@:[\]<>"'`|^{}]/u;

/**
 * Special-use names no DNS server is asked about (IANA Special-Use Domain Names
 * registry): localhost (RFC 6761 §6.3: resolution APIs "SHOULD NOT send queries
 * for localhost names" to DNS servers), invalid (RFC 6761 §6.4: an immediate
 * negative answer), local (RFC 6762 §3: multicast DNS on the local link only),
 * onion (RFC 7686 §2: software that does not speak Tor "SHOULD generate an
 * error") and alt (RFC 9476 §2: not DNS names at all).
 */
const SPECIAL_USE: Readonly<Record<string, string>> = {
  localhost: 'a localhost name (RFC 6761 §6.3): it always means this machine and is never asked of DNS',
  invalid: 'under .invalid (RFC 6761 §6.4), which is guaranteed not to exist',
  local: 'a multicast DNS name (.local, RFC 6762): it exists only on a local network',
  onion: 'a Tor onion service name (.onion, RFC 7686): it is not resolvable through DNS',
  alt: 'under .alt (RFC 9476), reserved for names outside the DNS',
};

/**
 * UTS #39 §5.2 "Highly Restrictive": the letters of one label come from one
 * script, or from one of the combinations in everyday use in East Asia. A
 * label mixing, say, Latin and Cyrillic is the classic homograph (pаypal.com).
 */
const SCRIPTS = [
  'Latin',
  'Greek',
  'Cyrillic',
  'Armenian',
  'Hebrew',
  'Arabic',
  'Syriac',
  'Thaana',
  'Devanagari',
  'Bengali',
  'Gurmukhi',
  'Gujarati',
  'Oriya',
  'Tamil',
  'Telugu',
  'Kannada',
  'Malayalam',
  'Sinhala',
  'Thai',
  'Lao',
  'Tibetan',
  'Myanmar',
  'Georgian',
  'Hangul',
  'Ethiopic',
  'Cherokee',
  'Khmer',
  'Mongolian',
  'Hiragana',
  'Katakana',
  'Bopomofo',
  'Han',
].map((name) => ({ name, re: new RegExp(`^\\p{Script=${name}}$`, 'u') }));
const NEUTRAL = /^[\p{Script=Common}\p{Script=Inherited}]$/u;
const EAST_ASIAN_SETS = [
  new Set(['Latin', 'Han', 'Hiragana', 'Katakana']),
  new Set(['Latin', 'Han', 'Bopomofo']),
  new Set(['Latin', 'Han', 'Hangul']),
];

/** The scripts of a label's letters when they are not an allowed combination, else undefined. */
function mixedScripts(label: string): string[] | undefined {
  const scripts = new Set<string>();
  for (const ch of label) {
    if (NEUTRAL.test(ch)) continue;
    scripts.add(SCRIPTS.find((s) => s.re.test(ch))?.name ?? 'another script');
  }
  if (scripts.size <= 1) return undefined;
  if (EAST_ASIAN_SETS.some((set) => [...scripts].every((s) => set.has(s)))) return undefined;
  return [...scripts];
}
const LDH_LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
const LDH_UNDERSCORE_LABEL = /^(?:_[a-z0-9-]{1,62}|[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?)$/;

/**
 * Normalizes a domain name or throws an InvalidNameError (400) naming `param`
 * (default `target`). `allowUnderscore` admits service labels such as
 * `_sip._tcp` and `_dmarc`.
 */
export function normalizeDomain(
  input: string,
  opts: { allowUnderscore?: boolean; param?: string } = {},
): string {
  const param = opts.param ?? 'target';
  const refuse = (reason: InvalidNameReason, detail: string) => new InvalidNameError(reason, param, detail);
  if (input.length === 0) throw refuse('empty', 'must not be empty');
  if (input.length > 1024) throw refuse('too_long', 'is too long to be a domain name');
  const withoutDot = input.endsWith('.') ? input.slice(0, -1) : input;
  if (withoutDot.length === 0) throw refuse('root', 'must be a domain name, not the root');
  const stray = NOT_IN_A_NAME.exec(withoutDot)?.[0];
  if (stray !== undefined) {
    throw refuse(
      'not_bare',
      `must be a bare domain name: "${stray}" is not allowed (no URL, port or percent-encoding)`,
    );
  }
  // domainToASCII applies UTS #46 (IDNA) mapping and returns '' for anything it cannot convert.
  // Plain ASCII names (the common case) only need lower-casing; anything else, and A-labels whose
  // Punycode must be checked, goes through UTS #46. Underscore labels are not IDNA-valid at all,
  // so they are checked without conversion.
  const plain = PLAIN_ASCII.test(withoutDot) && !withoutDot.toLowerCase().includes('xn--');
  const ascii = plain || withoutDot.includes('_') ? withoutDot.toLowerCase() : domainToASCII(withoutDot);
  if (ascii === '') throw refuse('not_idna', 'is not a valid domain name');
  if (ascii.length > 253) throw refuse('too_long', 'must be at most 253 characters');
  const labels = ascii.split('.');
  const labelRule = opts.allowUnderscore ? LDH_UNDERSCORE_LABEL : LDH_LABEL;
  for (const label of labels) {
    if (label.length === 0) throw refuse('empty_label', 'has an empty label');
    if (label.length > 63) throw refuse('label_too_long', 'has a label longer than 63 characters');
    if (!labelRule.test(label)) {
      throw label.includes('_') && !opts.allowUnderscore
        ? refuse('underscore', `has "_" in label "${label}", which is not a host name label`)
        : refuse('invalid_label', `has an invalid label "${label}" (letters, digits and inner hyphens only)`);
    }
  }
  // An all-numeric last label is an IP address or nonsense, never a TLD (RFC 3696 §2).
  if (/^[0-9]+$/.test(labels[labels.length - 1] ?? '')) {
    throw refuse('numeric_tld', 'must be a domain name, not an IP address');
  }
  const special = SPECIAL_USE[labels[labels.length - 1] ?? ''];
  if (special !== undefined) throw refuse('special_use', `is ${special}`);
  // Only a name typed in Unicode is checked: its A-label (xn--...) remains the way to ask about one on purpose.
  if (!plain && /[^\p{ASCII}]/u.test(withoutDot)) {
    for (const label of labels) {
      if (!label.startsWith('xn--')) continue;
      const mixed = mixedScripts(domainToUnicode(label));
      if (mixed) {
        throw refuse(
          'mixed_scripts',
          `mixes ${mixed.join(' and ')} letters in one label, the pattern of a look-alike (homograph) name ` +
            `(UTS #39 §5.2); to look it up on purpose, give its A-label form: ${label}`,
        );
      }
    }
  }
  return ascii;
}

/** An address as reverse names write it, without a suffix: octets (IPv4) or nibbles (IPv6), last first. */
function reversedAddress(ip: string): { labels: string; kind: 'ipv4' | 'ipv6' } {
  const addr = ipaddr.parse(ip);
  if (addr.kind() === 'ipv4')
    return { labels: (addr as ipaddr.IPv4).octets.slice().reverse().join('.'), kind: 'ipv4' };
  const nibbles = (addr as ipaddr.IPv6)
    .toByteArray()
    .flatMap((b) => [b >> 4, b & 15])
    .map((n) => n.toString(16));
  return { labels: nibbles.reverse().join('.'), kind: 'ipv6' };
}

/** The in-addr.arpa / ip6.arpa name of an address (RFC 1035 §3.5, RFC 3596 §2.5). */
export function reverseName(ip: string): string {
  const { labels, kind } = reversedAddress(ip);
  return `${labels}.${kind === 'ipv4' ? 'in-addr.arpa' : 'ip6.arpa'}`;
}

/**
 * The name a DNS blocklist is asked (RFC 5782): an address reversed as for reverse DNS but
 * under the list's zone (§2.1 octets, §2.4 nibbles: an IPv4-mapped IPv6 address stays IPv6),
 * or a domain as it is, prefixed to the zone (§3.1). The domain must already be normalized.
 */
export function blocklistQueryName(subject: { ip: string } | { domain: string }, zone: string): string {
  const prefix = 'ip' in subject ? reversedAddress(subject.ip).labels : subject.domain.replace(/\.$/, '');
  return `${prefix}.${zone.replace(/\.$/, '')}`;
}
