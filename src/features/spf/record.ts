/**
 * SPF record syntax (RFC 7208): record selection, the terms of one record
 * (macros checked, never expanded), domain-spec checks, and the warnings a
 * record earns on its own. No DNS here: the tree walk (tree.ts) and
 * check_host() (check-host.ts) call parseSpfRecord on every record they reach.
 */
import { isIPv4, isIPv6 } from '../../net/address.js';
import { type DnsOutcome, type Finding, finding } from '../email/types.js';
import { tokenizeMacroString } from './macros.js';

export type SpfQualifier = '+' | '-' | '~' | '?';
export type SpfMechanismName = 'all' | 'include' | 'a' | 'mx' | 'ptr' | 'ip4' | 'ip6' | 'exists';

export interface SpfMechanism {
  kind: 'mechanism';
  /** The term as written. */
  text: string;
  qualifier: SpfQualifier;
  name: SpfMechanismName;
  /** The target domain-spec, when the term names one. */
  domainSpec?: string;
  /** ip4/ip6 network. */
  network?: string;
  cidr4?: number;
  cidr6?: number;
}

export interface SpfModifier {
  kind: 'modifier';
  text: string;
  name: string;
  value: string;
}

export type SpfTerm = SpfMechanism | SpfModifier;

export interface ParsedSpfRecord {
  terms: SpfTerm[];
  /** Syntax errors: any one makes the record a permerror (RFC 7208 §4.6). */
  errors: Finding[];
  warnings: Finding[];
}

/** RFC 7208 §3.4: keep the record under 450 octets so the whole answer fits a 512-octet UDP message. */
export const SPF_RECOMMENDED_MAX_LENGTH = 450;

const MECHANISMS: ReadonlySet<string> = new Set(['all', 'include', 'a', 'mx', 'ptr', 'ip4', 'ip6', 'exists']);

/** RFC 7208 §4.5: a record starts with exactly "v=spf1", then a space or the end (compared case-insensitively, §4.6.1). */
export function isSpfRecord(text: string): boolean {
  return /^v=spf1(?: |$)/i.test(text);
}

/** The `v=spf1` records among a TXT answer (RFC 7208 §4.5). */
export function spfRecords(answer: DnsOutcome<string>): string[] {
  return answer.kind === 'answer' ? answer.records.filter(isSpfRecord) : [];
}

/** Parses one SPF record (its text after TXT string concatenation). */
export function parseSpfRecord(text: string): ParsedSpfRecord {
  const errors: Finding[] = [];
  const warnings: Finding[] = [];
  const terms: SpfTerm[] = [];
  if (!isSpfRecord(text)) {
    errors.push(finding('error', 'The record does not start with "v=spf1".', 'RFC 7208 §4.5'));
    return { terms, errors, warnings };
  }
  const body = text.slice(6);
  if (/[^\x20-\x7e]/.test(body)) {
    errors.push(
      finding(
        'error',
        'The record contains characters other than printable ASCII and spaces.',
        'RFC 7208 §12',
      ),
    );
  }
  const seen: Record<string, number> = {};
  for (const raw of body.split(' ')) {
    if (raw === '') continue;
    const term = parseTerm(raw);
    if (typeof term === 'string') {
      errors.push(finding('error', `"${raw}": ${term}.`, 'RFC 7208 §4.6.1'));
      continue;
    }
    terms.push(term);
    const key = term.kind === 'modifier' ? term.name : term.name === 'all' ? 'all' : '';
    if (key) seen[key] = (seen[key] ?? 0) + 1;
  }
  for (const modifier of ['redirect', 'exp']) {
    if ((seen[modifier] ?? 0) > 1) {
      errors.push(finding('error', `The "${modifier}" modifier appears more than once.`, 'RFC 7208 §6'));
    }
  }
  warnings.push(...termWarnings(terms, seen, text));
  return { terms, errors, warnings };
}

function termWarnings(terms: SpfTerm[], seen: Record<string, number>, text: string): Finding[] {
  const out: Finding[] = [];
  const allIndex = terms.findIndex((t) => t.kind === 'mechanism' && t.name === 'all');
  const all = allIndex >= 0 ? (terms[allIndex] as SpfMechanism) : undefined;
  if ((seen.all ?? 0) > 1) {
    out.push(
      finding('warning', '"all" appears more than once; only the first can ever match.', 'RFC 7208 §5.1'),
    );
  }
  if (all) {
    const after = terms.slice(allIndex + 1).filter((t) => t.kind === 'mechanism');
    if (after.length > 0) {
      out.push(
        finding(
          'warning',
          `Mechanisms after "all" are never evaluated: ${after.map((t) => t.text).join(' ')}.`,
          'RFC 7208 §5.1',
        ),
      );
    }
    if (seen.redirect) {
      out.push(
        finding('warning', '"redirect" is ignored because the record contains "all".', 'RFC 7208 §6.1'),
      );
    }
  }
  for (const t of terms) {
    if (t.kind !== 'mechanism') continue;
    if (t.name === 'ptr') {
      out.push(
        finding(
          'warning',
          `"${t.text}": the ptr mechanism is slow and unreliable and should not be used.`,
          'RFC 7208 §5.5',
        ),
      );
    }
    if (t.name === 'ip4' && t.cidr4 !== undefined && t.cidr4 < 8) {
      out.push(finding('warning', `"${t.text}" authorizes more than 16 million addresses.`, 'RFC 7208 §5.6'));
    }
    if (t.name === 'ip6' && t.cidr6 !== undefined && t.cidr6 < 16) {
      out.push(finding('warning', `"${t.text}" authorizes an enormous address range.`, 'RFC 7208 §5.6'));
    }
  }
  for (const t of terms) {
    if (t.kind === 'modifier' && t.name !== 'redirect' && t.name !== 'exp') {
      out.push(finding('info', `Unknown modifier "${t.name}" is ignored.`, 'RFC 7208 §6'));
    }
  }
  const octets = Buffer.byteLength(text);
  if (octets > SPF_RECOMMENDED_MAX_LENGTH) {
    out.push(
      finding(
        'warning',
        `The record is ${octets} octets; above ${SPF_RECOMMENDED_MAX_LENGTH} the DNS answer may not fit a 512-octet UDP message.`,
        'RFC 7208 §3.4',
      ),
    );
  }
  return out;
}

// RFC 7208 §12: name = ALPHA *( ALPHA / DIGIT / "-" / "_" / "." ).
const MODIFIER = /^([A-Za-z][A-Za-z0-9_.-]*)=(.*)$/;
const CIDR = /^(?:0|[1-9][0-9]{0,2})$/;

/** One term, or why it is not valid. */
function parseTerm(raw: string): SpfTerm | string {
  const modifier = MODIFIER.exec(raw);
  if (modifier) {
    const name = modifier[1]!.toLowerCase();
    const value = modifier[2]!;
    const problem = name === 'redirect' || name === 'exp' ? domainSpecError(value) : macroStringError(value);
    return problem ? `${name}= ${problem}` : { kind: 'modifier', text: raw, name, value };
  }
  const qualifier = '+-~?'.includes(raw[0]!) ? (raw[0] as SpfQualifier) : '+';
  const rest = '+-~?'.includes(raw[0]!) ? raw.slice(1) : raw;
  const nameEnd = rest.search(/[:/]/);
  const name = (nameEnd < 0 ? rest : rest.slice(0, nameEnd)).toLowerCase();
  const arg = nameEnd < 0 ? '' : rest.slice(nameEnd);
  if (!MECHANISMS.has(name)) return `unknown mechanism "${name}"`;
  const base = { kind: 'mechanism' as const, text: raw, qualifier, name: name as SpfMechanismName };
  switch (name) {
    case 'all':
      return arg === '' ? base : '"all" takes no argument';
    case 'include':
    case 'exists': {
      if (!arg.startsWith(':') || arg.length === 1) return `"${name}" needs ":domain"`;
      const spec = arg.slice(1);
      const problem = domainSpecError(spec);
      return problem ? `${name} target ${problem}` : { ...base, domainSpec: spec };
    }
    case 'ptr': {
      if (arg === '') return base;
      if (!arg.startsWith(':')) return '"ptr" takes only ":domain"';
      const problem = domainSpecError(arg.slice(1));
      return problem ? `ptr target ${problem}` : { ...base, domainSpec: arg.slice(1) };
    }
    case 'a':
    case 'mx':
      return parseAOrMx(base, arg);
    case 'ip4':
    case 'ip6':
      return parseIpNetwork(base, arg, name);
    default:
      return `unknown mechanism "${name}"`;
  }
}

/** `a` / `mx` [":" domain-spec] [ip4-cidr-length] ["//" ip6-cidr-length] (RFC 7208 §5.3, §5.4). */
function parseAOrMx(base: SpfMechanism, arg: string): SpfMechanism | string {
  let rest = arg;
  const out: SpfMechanism = { ...base };
  const v6 = /\/\/([0-9]+)$/.exec(rest);
  if (v6) {
    if (!CIDR.test(v6[1]!) || Number(v6[1]) > 128) return `invalid IPv6 prefix length "${v6[1]}"`;
    out.cidr6 = Number(v6[1]);
    rest = rest.slice(0, v6.index);
  }
  const v4 = /\/([0-9]+)$/.exec(rest);
  if (v4 && !rest.endsWith(`//${v4[1]}`)) {
    if (!CIDR.test(v4[1]!) || Number(v4[1]) > 32) return `invalid IPv4 prefix length "${v4[1]}"`;
    out.cidr4 = Number(v4[1]);
    rest = rest.slice(0, v4.index);
  }
  if (rest === '') return out;
  if (!rest.startsWith(':') || rest.length === 1)
    return `"${base.name}" argument must be ":domain" and/or a prefix length`;
  const spec = rest.slice(1);
  const problem = domainSpecError(spec);
  return problem ? `${base.name} target ${problem}` : { ...out, domainSpec: spec };
}

/** ip4:network[/len] and ip6:network[/len] (RFC 7208 §5.6). */
function parseIpNetwork(base: SpfMechanism, arg: string, name: 'ip4' | 'ip6'): SpfMechanism | string {
  if (!arg.startsWith(':')) return `"${name}" needs ":network"`;
  const value = arg.slice(1);
  const slash = value.lastIndexOf('/');
  const network = slash < 0 ? value : value.slice(0, slash);
  const len = slash < 0 ? undefined : value.slice(slash + 1);
  const max = name === 'ip4' ? 32 : 128;
  const valid = name === 'ip4' ? isIPv4(network) : isIPv6(network);
  if (!valid) return `"${network}" is not an ${name === 'ip4' ? 'IPv4' : 'IPv6'} address`;
  if (len !== undefined && (!CIDR.test(len) || Number(len) > max)) return `invalid prefix length "/${len}"`;
  const cidr = len === undefined ? undefined : Number(len);
  return name === 'ip4' ? { ...base, network, cidr4: cidr } : { ...base, network, cidr6: cidr };
}

/** Checks macro-string syntax (RFC 7208 §7.1) without expanding anything; undefined when valid. */
export function macroStringError(value: string): string | undefined {
  const tokens = tokenizeMacroString(value);
  return typeof tokens === 'string' ? tokens : undefined;
}

// RFC 7208 §7.1: toplabel = ( *alphanum ALPHA *alphanum ) / ( 1*alphanum "-" *( alphanum / "-" ) alphanum ).
const TOPLABEL = /^(?:[A-Za-z0-9]*[A-Za-z][A-Za-z0-9]*|[A-Za-z0-9]+-[A-Za-z0-9-]*[A-Za-z0-9])$/;

/** A valid last label of a domain-spec or <domain> (RFC 7208 §7.1): not all digits, no dash at an end. */
export function isTopLabel(label: string): boolean {
  return TOPLABEL.test(label);
}

/** domain-spec = macro-string domain-end (RFC 7208 §7.1, §4.8); undefined when valid. */
export function domainSpecError(spec: string): string | undefined {
  if (spec === '') return 'is empty';
  const macro = macroStringError(spec);
  if (macro) return macro;
  if (!/%\{[^}]*\}$/.test(spec)) {
    const name = spec.endsWith('.') ? spec.slice(0, -1) : spec;
    const dot = name.lastIndexOf('.');
    if (dot < 0) return `"${spec}" is not a fully qualified domain name`;
    if (!isTopLabel(name.slice(dot + 1))) return `"${spec}" does not end in a valid top-level label`;
  }
  if (!hasMacros(spec)) {
    const name = spec.endsWith('.') ? spec.slice(0, -1) : spec;
    if (name.length > 253) return `"${spec}" is longer than 253 characters`;
    if (name.split('.').some((l) => l.length === 0 || l.length > 63))
      return `"${spec}" has an empty or overlong label`;
  }
  return undefined;
}

export function hasMacros(spec: string): boolean {
  return spec.includes('%{');
}
