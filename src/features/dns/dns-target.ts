/**
 * What GET /api/dns accepts as `target`, as pure functions: a domain name
 * (IDN → A-labels, trailing dot dropped, lower-cased, LDH with `_` where owner
 * names use it) or, for PTR, a public IP turned into its reverse name.
 */
import { isIP } from 'node:net';
import { domainToASCII, domainToUnicode } from 'node:url';
import ipaddr from 'ipaddr.js';
import { LRUCache } from 'lru-cache';
import { AppError, badInput } from '../../errors.js';
import { classifyAddress } from '../../net/address.js';

export const DNS_API_TYPES = ['A', 'AAAA', 'CNAME', 'MX', 'TXT', 'NS', 'SOA', 'CAA', 'SRV', 'PTR'] as const;
export type DnsApiType = (typeof DNS_API_TYPES)[number];

// Owner names of SRV (RFC 2782 `_service._proto`), TXT (`_dmarc`, `_mta-sts`,
// DKIM `s._domainkey`) and CNAME (DKIM selectors are often CNAMEs) carry `_`.
const UNDERSCORE_TYPES: ReadonlySet<DnsApiType> = new Set(['SRV', 'TXT', 'CNAME']);

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
 * Normalizes a domain name or throws a 400 naming `target`. `allowUnderscore`
 * admits service labels such as `_sip._tcp` and `_dmarc`.
 */
export function normalizeDomain(
  input: string,
  opts: { allowUnderscore?: boolean; param?: string } = {},
): string {
  const param = opts.param ?? 'target';
  if (input.length === 0) throw badInput(param, 'must not be empty');
  if (input.length > 1024) throw badInput(param, 'is too long to be a domain name');
  const withoutDot = input.endsWith('.') ? input.slice(0, -1) : input;
  if (withoutDot.length === 0) throw badInput(param, 'must be a domain name, not the root');
  const stray = NOT_IN_A_NAME.exec(withoutDot)?.[0];
  if (stray !== undefined) {
    throw badInput(
      param,
      `must be a bare domain name: "${stray}" is not allowed (no URL, port or percent-encoding)`,
    );
  }
  // domainToASCII applies UTS #46 (IDNA) mapping and returns '' for anything it cannot convert.
  // Underscore labels are not IDNA-valid, so they are checked without conversion.
  // Plain ASCII names (the common case) only need lower-casing; anything else, and A-labels whose
  // Punycode must be checked, goes through UTS #46. Underscore labels are not IDNA-valid at all.
  const plain = PLAIN_ASCII.test(withoutDot) && !withoutDot.toLowerCase().includes('xn--');
  const ascii = plain || withoutDot.includes('_') ? withoutDot.toLowerCase() : domainToASCII(withoutDot);
  if (ascii === '') throw badInput(param, 'is not a valid domain name');
  if (ascii.length > 253) throw badInput(param, 'must be at most 253 characters');
  const labels = ascii.split('.');
  const labelRule = opts.allowUnderscore ? LDH_UNDERSCORE_LABEL : LDH_LABEL;
  for (const label of labels) {
    if (label.length === 0) throw badInput(param, 'has an empty label');
    if (label.length > 63) throw badInput(param, 'has a label longer than 63 characters');
    if (!labelRule.test(label)) {
      const why =
        label.includes('_') && !opts.allowUnderscore
          ? `has "_" in label "${label}", which is not a host name label`
          : `has an invalid label "${label}" (letters, digits and inner hyphens only)`;
      throw badInput(param, why);
    }
  }
  // An all-numeric last label is an IP address or nonsense, never a TLD (RFC 3696 §2).
  if (/^[0-9]+$/.test(labels[labels.length - 1] ?? '')) {
    throw badInput(param, 'must be a domain name, not an IP address');
  }
  const special = SPECIAL_USE[labels[labels.length - 1] ?? ''];
  if (special !== undefined) throw badInput(param, `is ${special}`);
  // Only a name typed in Unicode is checked: its A-label (xn--...) remains the way to ask about one on purpose.
  if (!plain && /[^\p{ASCII}]/u.test(withoutDot)) {
    for (const label of labels) {
      if (!label.startsWith('xn--')) continue;
      const mixed = mixedScripts(domainToUnicode(label));
      if (mixed) {
        throw badInput(
          param,
          `mixes ${mixed.join(' and ')} letters in one label, the pattern of a look-alike (homograph) name ` +
            `(UTS #39 §5.2); to look it up on purpose, give its A-label form: ${label}`,
        );
      }
    }
  }
  return ascii;
}

/** The in-addr.arpa / ip6.arpa name of an address (RFC 1035 §3.5, RFC 3596 §2.5). */
export function reverseName(ip: string): string {
  const addr = ipaddr.parse(ip);
  if (addr.kind() === 'ipv4')
    return `${(addr as ipaddr.IPv4).octets.slice().reverse().join('.')}.in-addr.arpa`;
  const nibbles = (addr as ipaddr.IPv6)
    .toByteArray()
    .flatMap((b) => [b >> 4, b & 15])
    .map((n) => n.toString(16));
  return `${nibbles.reverse().join('.')}.ip6.arpa`;
}

export interface DnsQuestion {
  /** The name sent on the wire. */
  name: string;
  type: DnsApiType;
  /** For PTR: the address as given, normalized. */
  address?: string;
}

/**
 * Parsed questions by (type, target) as given: the same few names are asked again and
 * again, and parsing one (IDNA, label rules, address checks) costs more than the cache
 * hit that answers it. Only accepted input is kept; a refusal is parsed again each time.
 */
const parsed = new LRUCache<string, DnsQuestion>({ max: 10_000 });

export function parseDnsQuestion(target: string, type: DnsApiType): DnsQuestion {
  const key = `${type} ${target}`;
  let question = parsed.get(key);
  if (question === undefined) {
    question = Object.freeze(parseUncached(target, type));
    parsed.set(key, question);
  }
  return question;
}

function parseUncached(target: string, type: DnsApiType): DnsQuestion {
  if (type === 'PTR') {
    const literal = target.startsWith('[') && target.endsWith(']') ? target.slice(1, -1) : target;
    // node:net's isIP() accepts a zone id (fe80::1%eth0), which names an interface of the asking
    // host and has no reverse name: refused here, not left for classifyAddress to throw on (a 500).
    if (literal.includes('%')) throw badInput('target', 'must not carry an IPv6 zone id (%...)');
    if (isIP(literal) === 0) throw badInput('target', 'must be an IPv4 or IPv6 address for type=PTR');
    const address = ipaddr.process(literal).toString();
    const cls = classifyAddress(address);
    if (!cls.public) {
      throw new AppError(400, 'bad_request', `target ${address} is not a public address (${cls.range})`);
    }
    return { name: reverseName(address), type, address };
  }
  if (isIP(target) !== 0) throw badInput('target', 'must be a domain name (for an IP address use type=PTR)');
  try {
    return { name: normalizeDomain(target, { allowUnderscore: UNDERSCORE_TYPES.has(type) }), type };
  } catch (err) {
    // Only here does the hint make sense: the other endpoints take no record type.
    if (err instanceof AppError && err.message.includes('"_"')) {
      throw badInput(
        'target',
        `${err.message.slice('target '.length)} (allowed for SRV, TXT and CNAME lookups)`,
      );
    }
    throw err;
  }
}
