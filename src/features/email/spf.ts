/**
 * SPF (RFC 7208): record selection, full term syntax (macros checked, never
 * expanded), and the evaluation tree through include and redirect with the
 * DNS-lookup and void-lookup counts that decide a permerror.
 *
 * The tree is walked one level at a time: every DNS query a level needs (the
 * include/redirect targets' TXT and the a/mx/exists lookups) is sent at once,
 * so the wall time is about the depth of the tree in round trips, not the
 * number of queries.
 */
import { isIPv4, isIPv6 } from 'node:net';
import { type CheckStatus, type DnsOutcome, type Finding, finding, isVoid, type MailDns } from './types.js';

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

/** RFC 7208 §4.6.4: at most 10 terms that cause DNS queries, at most 2 void lookups. */
export const SPF_LOOKUP_LIMIT = 10;
export const SPF_VOID_LIMIT = 2;
/** RFC 7208 §4.6.4: an `mx` term may cause at most 10 address lookups, so at most 10 MX records. */
export const SPF_MX_HOST_LIMIT = 10;
/** RFC 7208 §3.4: keep the record under 450 octets so the whole answer fits a 512-octet UDP message. */
export const SPF_RECOMMENDED_MAX_LENGTH = 450;
/** Bounds on our own work, far above any legitimate tree (the 10-lookup limit stops real evaluators first). */
const MAX_RECORDS_FOLLOWED = 40;
const MAX_TERMINAL_QUERIES = 40;

const MECHANISMS: ReadonlySet<string> = new Set(['all', 'include', 'a', 'mx', 'ptr', 'ip4', 'ip6', 'exists']);
/** Terms that cost a DNS query (RFC 7208 §4.6.4); `redirect` is counted where it is used. */
const LOOKUP_MECHANISMS: ReadonlySet<SpfMechanismName> = new Set(['include', 'a', 'mx', 'ptr', 'exists']);

/** RFC 7208 §4.5: a record starts with exactly "v=spf1", then a space or the end (compared case-insensitively, §4.6.1). */
export function isSpfRecord(text: string): boolean {
  return /^v=spf1(?: |$)/i.test(text);
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

// RFC 7208 §7.1 macro-letter; c, r and t are only allowed in explanation text (§7.3), never in a domain-spec.
const MACRO = /^([slodiphcrtv])([0-9]*)(r?)([.\-+,/_=]*)$/i;

/** Checks macro-string syntax (RFC 7208 §7.1) without expanding anything; undefined when valid. */
export function macroStringError(value: string): string | undefined {
  for (let i = 0; i < value.length; i++) {
    const ch = value[i]!;
    const code = value.charCodeAt(i);
    if (ch !== '%') {
      if (code < 0x21 || code > 0x7e) return `contains the invalid character ${JSON.stringify(ch)}`;
      continue;
    }
    const next = value[i + 1];
    if (next === '%' || next === '_' || next === '-') {
      i += 1;
      continue;
    }
    if (next !== '{') return 'has a "%" that does not start a macro (%{x}, %%, %_ or %-)';
    const close = value.indexOf('}', i + 2);
    if (close < 0) return 'has an unterminated macro';
    const body = value.slice(i + 2, close);
    const m = MACRO.exec(body);
    if (!m) return `has an invalid macro "%{${body}}"`;
    if ('crt'.includes(m[1]!.toLowerCase()))
      return `uses macro letter "${m[1]}", allowed only in explanation text`;
    if (m[2] !== '' && Number(m[2]) === 0) return `has a zero digit transformer in "%{${body}}"`;
    i = close;
  }
  return undefined;
}

// RFC 7208 §7.1: toplabel = ( *alphanum ALPHA *alphanum ) / ( 1*alphanum "-" *( alphanum / "-" ) alphanum ).
const TOPLABEL = /^(?:[A-Za-z0-9]*[A-Za-z][A-Za-z0-9]*|[A-Za-z0-9]+-[A-Za-z0-9-]*[A-Za-z0-9])$/;

/** domain-spec = macro-string domain-end (RFC 7208 §7.1, §4.8); undefined when valid. */
export function domainSpecError(spec: string): string | undefined {
  if (spec === '') return 'is empty';
  const macro = macroStringError(spec);
  if (macro) return macro;
  if (!/%\{[^}]*\}$/.test(spec)) {
    const name = spec.endsWith('.') ? spec.slice(0, -1) : spec;
    const dot = name.lastIndexOf('.');
    if (dot < 0) return `"${spec}" is not a fully qualified domain name`;
    if (!TOPLABEL.test(name.slice(dot + 1))) return `"${spec}" does not end in a valid top-level label`;
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

// --- Evaluation tree ---------------------------------------------------------

export type SpfNodeState =
  /** Exactly one valid record. */
  | 'ok'
  /** No SPF record (the root has no policy; an include/redirect target without one is a permerror). */
  | 'none'
  | 'multiple_records'
  | 'syntax_error'
  | 'loop'
  /** Its domain-spec has macros: it depends on each message and is not followed. */
  | 'macro'
  /** Left out because the lookup limit was already exceeded, or our own work cap. */
  | 'not_followed'
  /** A DNS failure (temperror). */
  | 'error';

export interface SpfTermReport {
  term: string;
  /** DNS-querying terms this term counts (0 or 1, RFC 7208 §4.6.4). */
  lookups: number;
  /** This term's lookup found nothing (NOERROR with no records, or NXDOMAIN). */
  void: boolean;
  note?: string;
}

export interface SpfNode {
  domain: string;
  via: 'root' | 'include' | 'redirect';
  /** The qualifier of the include that led here (`+` for root and redirect). */
  qualifier: SpfQualifier;
  depth: number;
  /** Index of the parent node in the flat list; null for the root. */
  parent: number | null;
  state: SpfNodeState;
  record: string | null;
  /** DNS-querying terms in this record. */
  lookups: number;
  void_lookups: number;
  terms: SpfTermReport[];
  problem?: string;
}

export interface SpfEvaluation {
  /** none: no SPF record at the domain; error: a DNS failure made the result a temperror. */
  state: 'none' | 'evaluated' | 'error';
  /** `v=spf1` records at the domain. */
  recordCount: number;
  /** The domain's record (the first, when several). */
  record: string | null;
  /** One record at the domain and no syntax or structural error anywhere in the tree. */
  valid: boolean;
  /** Lookup, void-lookup and per-mx host limits all respected. */
  withinLimits: boolean;
  permerror: boolean;
  lookupCount: number;
  voidLookupCount: number;
  /** False when part of the tree was not followed (the count is then a lower bound). */
  lookupCountComplete: boolean;
  /** The `all` that ends evaluation at the top, through redirects; null when there is none. */
  effectiveAll: `${SpfQualifier}all` | null;
  tree: SpfNode[];
  status: CheckStatus;
  summary: string;
  findings: Finding[];
}

interface WorkNode extends SpfNode {
  id: number;
  children: number[];
  /** The first `all` qualifier in this record. */
  all?: SpfQualifier;
  /** Child id of the redirect followed from this record. */
  redirectChild?: number;
  path: string[];
}

interface Pending {
  id: number;
  domain: string;
  via: 'include' | 'redirect';
  qualifier: SpfQualifier;
  depth: number;
  parent: number;
  path: string[];
}

/**
 * Evaluates the SPF tree of `domain` statically: every branch is followed
 * (no client address is known), so the counts are what a receiver would
 * reach in the worst case.
 */
export async function evaluateSpf(domain: string, dns: MailDns): Promise<SpfEvaluation> {
  const nodes: WorkNode[] = [];
  const findings: Finding[] = [];
  const terminal: Promise<void>[] = [];
  const state = {
    lookups: 0,
    voids: 0,
    temperror: false,
    structural: false,
    mxOverLimit: false,
    complete: true,
    followed: 0,
    terminalQueries: 0,
  };

  const root: WorkNode = {
    id: 0,
    domain,
    via: 'root',
    qualifier: '+',
    depth: 0,
    parent: null,
    state: 'ok',
    record: null,
    lookups: 0,
    void_lookups: 0,
    terms: [],
    children: [],
    path: [domain],
  };
  nodes.push(root);

  const rootAnswer = await dns.txt(domain);
  if (rootAnswer.kind !== 'answer') return errorResult(domain, rootAnswer.message);
  const rootRecords = spfRecords(rootAnswer);
  const recordCount = rootRecords.length;
  if (recordCount === 0) {
    return {
      state: 'none',
      recordCount: 0,
      record: null,
      valid: false,
      withinLimits: false,
      permerror: false,
      lookupCount: 0,
      voidLookupCount: 0,
      lookupCountComplete: true,
      effectiveAll: null,
      tree: [],
      status: 'fail',
      summary: `No SPF record at ${domain}: any host may send mail as this domain.`,
      findings: [finding('error', `${domain} publishes no "v=spf1" TXT record.`, 'RFC 7208 §4.5')],
    };
  }

  let level: Pending[] = [];
  const visit = (node: WorkNode, answer: DnsOutcome<string>) => {
    const records = spfRecords(answer);
    if (answer.kind === 'error') {
      node.state = 'error';
      node.problem = `DNS lookup failed: ${answer.message}`;
      state.temperror = true;
      return;
    }
    if (answer.kind === 'invalid_name' || records.length === 0) {
      node.state = 'none';
      node.problem = 'no SPF record';
      if (node.via !== 'root') {
        state.structural = true;
        if (isVoid(answer)) state.voids += 1;
        findings.push(
          finding(
            'error',
            `${node.via}:${node.domain} has no SPF record, which makes the whole evaluation a permerror.`,
            node.via === 'include' ? 'RFC 7208 §5.2' : 'RFC 7208 §6.1',
          ),
        );
      }
      return;
    }
    node.record = records[0]!;
    if (records.length > 1) {
      node.state = 'multiple_records';
      node.problem = `${records.length} SPF records`;
      state.structural = true;
      findings.push(
        finding(
          'error',
          `${where(node)} publishes ${records.length} "v=spf1" records; more than one is a permerror.`,
          'RFC 7208 §4.5',
        ),
      );
      return;
    }
    const parsed = parseSpfRecord(node.record);
    for (const f of [...parsed.errors, ...parsed.warnings]) {
      findings.push(node.via === 'root' ? f : { ...f, message: `${where(node)}: ${f.message}` });
    }
    if (parsed.errors.length > 0) {
      node.state = 'syntax_error';
      node.problem = 'syntax error';
      state.structural = true;
      return;
    }
    expand(node, parsed.terms);
  };

  const expand = (node: WorkNode, terms: SpfTerm[]) => {
    const allIndex = terms.findIndex((t) => t.kind === 'mechanism' && t.name === 'all');
    const allTerm = allIndex >= 0 ? (terms[allIndex] as SpfMechanism) : undefined;
    node.all = allTerm?.qualifier;
    terms.forEach((term, index) => {
      const report: SpfTermReport = { term: term.text, lookups: 0, void: false };
      node.terms.push(report);
      // Terms after the first "all" are never reached; redirect is ignored when "all" is present (RFC 7208 §5.1, §6.1).
      if (allTerm && index > allIndex && term.kind === 'mechanism') {
        report.note = 'never evaluated (after "all")';
        return;
      }
      if (term.kind === 'modifier') {
        if (term.name !== 'redirect') return;
        if (allTerm) {
          report.note = 'ignored ("all" is present)';
          return;
        }
        report.lookups = 1;
        follow(node, term.value, 'redirect', '+', report);
        return;
      }
      if (!LOOKUP_MECHANISMS.has(term.name)) return;
      report.lookups = 1;
      if (term.name === 'include') {
        follow(node, term.domainSpec!, 'include', term.qualifier, report);
        return;
      }
      if (term.name === 'ptr') {
        report.note = 'needs the sending address; not resolved here';
        return;
      }
      const target = term.domainSpec ?? node.domain;
      if (hasMacros(target)) {
        report.note = 'has macros; expanded per message, not resolved here';
        return;
      }
      if (state.terminalQueries >= MAX_TERMINAL_QUERIES) {
        report.note = 'not resolved (work cap reached)';
        state.complete = false;
        return;
      }
      state.terminalQueries += 1;
      terminal.push(resolveTerminal(node, term, target, report));
    });
    node.lookups = node.terms.reduce((n, t) => n + t.lookups, 0);
    state.lookups += node.lookups;
  };

  const follow = (
    node: WorkNode,
    target: string,
    via: 'include' | 'redirect',
    qualifier: SpfQualifier,
    report: SpfTermReport,
  ) => {
    const child = newChild(node, target, via, qualifier);
    if (via === 'redirect') node.redirectChild = child.id;
    const lower = target.toLowerCase().replace(/\.$/, '');
    if (hasMacros(target)) {
      child.state = 'macro';
      child.problem = 'has macros; expanded per message, not followed';
      report.note = child.problem;
      return;
    }
    if (node.path.includes(lower)) {
      child.state = 'loop';
      child.problem = `loop: ${[...node.path, lower].join(' → ')}`;
      state.structural = true;
      findings.push(
        finding('error', `SPF ${via} loop: ${[...node.path, lower].join(' → ')}.`, 'RFC 7208 §4.6.4'),
      );
      return;
    }
    level.push({
      id: child.id,
      domain: lower,
      via,
      qualifier,
      depth: node.depth + 1,
      parent: node.id,
      path: [...node.path, lower],
    });
  };

  const newChild = (node: WorkNode, target: string, via: 'include' | 'redirect', qualifier: SpfQualifier) => {
    const child: WorkNode = {
      id: nodes.length,
      domain: target.toLowerCase().replace(/\.$/, ''),
      via,
      qualifier,
      depth: node.depth + 1,
      parent: node.id,
      state: 'ok',
      record: null,
      lookups: 0,
      void_lookups: 0,
      terms: [],
      children: [],
      path: [],
    };
    nodes.push(child);
    node.children.push(child.id);
    return child;
  };

  const resolveTerminal = async (
    node: WorkNode,
    term: SpfMechanism,
    target: string,
    report: SpfTermReport,
  ) => {
    if (term.name === 'mx') {
      const answer = await dns.mx(target);
      if (answer.kind === 'error') {
        state.temperror = true;
        report.note = `DNS lookup failed: ${answer.message}`;
        return;
      }
      if (answer.kind === 'answer' && answer.records.length > SPF_MX_HOST_LIMIT) {
        state.mxOverLimit = true;
        report.note = `${answer.records.length} MX hosts (limit ${SPF_MX_HOST_LIMIT})`;
        findings.push(
          finding(
            'error',
            `${where(node)}: "${term.text}" returns ${answer.records.length} MX hosts; more than ${SPF_MX_HOST_LIMIT} is a permerror.`,
            'RFC 7208 §4.6.4',
          ),
        );
      }
      markVoid(node, report, isVoid(answer) || answer.kind === 'invalid_name');
      return;
    }
    // a: an address of either family counts (the sender's family is unknown); exists: A only (RFC 7208 §5.7).
    const [a, aaaa] = await Promise.all([
      dns.a(target),
      term.name === 'a' ? dns.aaaa(target) : Promise.resolve(undefined),
    ]);
    if (a.kind === 'error' || aaaa?.kind === 'error') {
      state.temperror = true;
      report.note = `DNS lookup failed: ${a.kind === 'error' ? a.message : (aaaa as { message: string }).message}`;
      return;
    }
    const empty =
      (isVoid(a) || a.kind === 'invalid_name') && (!aaaa || isVoid(aaaa) || aaaa.kind === 'invalid_name');
    markVoid(node, report, empty);
  };

  const markVoid = (node: WorkNode, report: SpfTermReport, isVoidAnswer: boolean) => {
    if (!isVoidAnswer) return;
    report.void = true;
    node.void_lookups += 1;
    state.voids += 1;
  };

  // Level 0: the root record (already fetched).
  visit(root, rootAnswer);
  while (level.length > 0) {
    const current = level;
    level = [];
    // Evaluation stops at the 11th lookup (RFC 7208 §4.6.4): once past it, deeper levels add nothing.
    if (state.lookups > SPF_LOOKUP_LIMIT || state.followed + current.length > MAX_RECORDS_FOLLOWED) {
      for (const p of current) {
        const node = nodes[p.id]!;
        node.state = 'not_followed';
        node.problem =
          state.lookups > SPF_LOOKUP_LIMIT
            ? `not followed: the ${SPF_LOOKUP_LIMIT}-lookup limit is already exceeded`
            : 'not followed (work cap reached)';
      }
      state.complete = false;
      break;
    }
    state.followed += current.length;
    const answers = await Promise.all(current.map((p) => dns.txt(p.domain)));
    current.forEach((p, i) => {
      const node = nodes[p.id]!;
      node.path = p.path;
      visit(node, answers[i]!);
    });
  }
  await Promise.all(terminal);

  if (state.temperror) return errorResult(domain, 'a DNS lookup in the SPF tree failed', nodes);

  const effectiveAll = effectiveAllOf(nodes, 0);
  if (state.lookups > SPF_LOOKUP_LIMIT) {
    findings.push(
      finding(
        'error',
        `${state.lookups}${state.complete ? '' : '+'} DNS-querying terms (include, a, mx, ptr, exists, redirect); more than ${SPF_LOOKUP_LIMIT} is a permerror.`,
        'RFC 7208 §4.6.4',
      ),
    );
  }
  if (state.voids > SPF_VOID_LIMIT) {
    findings.push(
      finding(
        'error',
        `${state.voids} void lookups (NXDOMAIN or no records); more than ${SPF_VOID_LIMIT} is a permerror.`,
        'RFC 7208 §4.6.4',
      ),
    );
  }
  const valid = recordCount === 1 && !state.structural;
  const withinLimits =
    recordCount === 1 &&
    state.lookups <= SPF_LOOKUP_LIMIT &&
    state.voids <= SPF_VOID_LIMIT &&
    !state.mxOverLimit;
  const permerror = !valid || !withinLimits;
  if (effectiveAll === '+all') {
    findings.push(
      finding(
        'error',
        '"+all" authorizes every host on the Internet to send as this domain.',
        'RFC 7208 §5.1',
      ),
    );
  } else if (effectiveAll === '?all') {
    findings.push(
      finding(
        'warning',
        '"?all" (neutral) gives receivers no instruction for unlisted hosts.',
        'RFC 7208 §8.2',
      ),
    );
  } else if (effectiveAll === null && recordCount === 1 && root.state === 'ok') {
    findings.push(
      finding(
        'warning',
        'The record ends without "all" or "redirect": unlisted hosts get the default result, neutral.',
        'RFC 7208 §4.7',
      ),
    );
  }

  const status: CheckStatus = permerror
    ? 'fail'
    : effectiveAll === '-all' || effectiveAll === '~all'
      ? findings.some((f) => f.severity !== 'info')
        ? 'warn'
        : 'pass'
      : 'fail';
  const tree = flatten(nodes);
  return {
    state: 'evaluated',
    recordCount,
    record: rootRecords[0] ?? null,
    valid,
    withinLimits,
    permerror,
    lookupCount: state.lookups,
    voidLookupCount: state.voids,
    lookupCountComplete: state.complete,
    effectiveAll,
    tree,
    status,
    summary: summarize(recordCount, permerror, effectiveAll, state.lookups, state.complete),
    findings,
  };
}

function summarize(
  count: number,
  permerror: boolean,
  all: string | null,
  lookups: number,
  complete: boolean,
): string {
  const lookupText = `${lookups}${complete ? '' : '+'}/${SPF_LOOKUP_LIMIT} lookups`;
  if (count > 1) return `${count} SPF records: receivers treat this as a permerror (no SPF at all).`;
  if (permerror)
    return `SPF is a permerror (${lookupText}): receivers treat the domain as having no usable SPF.`;
  if (all === '-all' || all === '~all') return `One valid SPF record ending in "${all}" (${lookupText}).`;
  if (all === null)
    return `One valid SPF record without "all" (${lookupText}): unlisted senders are not refused.`;
  return `One valid SPF record ending in "${all}" (${lookupText}): unlisted senders are not refused.`;
}

function effectiveAllOf(nodes: WorkNode[], id: number): `${SpfQualifier}all` | null {
  const node = nodes[id];
  if (node?.state !== 'ok') return null;
  if (node.all) return `${node.all}all`;
  return node.redirectChild === undefined ? null : effectiveAllOf(nodes, node.redirectChild);
}

/** Pre-order (the order the terms are written in), with parent indexes into the flat list. */
function flatten(nodes: WorkNode[]): SpfNode[] {
  const out: SpfNode[] = [];
  const walk = (id: number, parent: number | null) => {
    const n = nodes[id]!;
    const index = out.length;
    const node: SpfNode = {
      domain: n.domain,
      via: n.via,
      qualifier: n.qualifier,
      depth: n.depth,
      parent,
      state: n.state,
      record: n.record,
      lookups: n.lookups,
      void_lookups: n.void_lookups,
      terms: n.terms,
    };
    if (n.problem) node.problem = n.problem;
    out.push(node);
    for (const child of n.children) walk(child, index);
  };
  walk(0, null);
  return out;
}

function where(node: SpfNode): string {
  return node.via === 'root' ? node.domain : `${node.via}:${node.domain}`;
}

/** The `v=spf1` records among a TXT answer (RFC 7208 §4.5). */
function spfRecords(answer: DnsOutcome<string>): string[] {
  return answer.kind === 'answer' ? answer.records.filter(isSpfRecord) : [];
}

function errorResult(domain: string, message: string, nodes: WorkNode[] = []): SpfEvaluation {
  return {
    state: 'error',
    recordCount: 0,
    record: nodes[0]?.record ?? null,
    valid: false,
    withinLimits: false,
    permerror: false,
    lookupCount: 0,
    voidLookupCount: 0,
    lookupCountComplete: false,
    effectiveAll: null,
    tree: nodes.length > 0 ? flatten(nodes) : [],
    status: 'error',
    summary: `SPF for ${domain} could not be evaluated (${message}): a temperror; this check is left out of the score.`,
    findings: [finding('warning', `Temporary DNS failure: ${message}.`, 'RFC 7208 §2.6.6')],
  };
}
