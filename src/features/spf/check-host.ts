/**
 * check_host() of RFC 7208 §4: the SPF result for one client address, sender
 * and domain, with the trace a person needs to fix the record. Record syntax
 * is the one parser of record.ts (a record with any syntax error is
 * a permerror before anything is evaluated, §4.6); macros are macros.ts's;
 * DNS is the shared MailDns view (resolver chain, cache, attribution).
 *
 * Errors that end the whole evaluation (the limits of §4.6.4, temperror from
 * DNS, permerror from a record reached through include or redirect) are
 * thrown as SpfAbort and become the result at the top; every level they pass
 * through writes its result into the trace on the way out.
 *
 * Why one file: check_host() is one recursive evaluation, and every mechanism
 * reads and writes its state (the lookup and void counters that end it, the
 * trace, the validated PTR names shared by `ptr` and %{p}); split by
 * mechanism, that state would be handed around instead of held.
 */

import { clip } from '../../text.js';
import { reverseNames } from '../email/mail-dns.js';
import type { DnsOutcome, MailDns } from '../email/types.js';
import {
  expandDomainName,
  expandMacros,
  inNetwork,
  type MacroValues,
  tokenizeMacroString,
} from './macros.js';
import {
  isTopLabel,
  parseSpfRecord,
  type SpfMechanism,
  type SpfModifier,
  type SpfQualifier,
  spfRecords,
} from './record.js';
import {
  EXPLANATION_LIMITS,
  LOOKUP_LIMIT,
  NAMES_PER_LOOKUP_LIMIT,
  type SpfCheckInput,
  type SpfCheckOutcome,
  type SpfMatch,
  type SpfResult,
  type SpfTraceEntry,
  type SpfTraceOutcome,
  TRACE_LIMITS,
  VOID_LOOKUP_LIMIT,
} from './spf-types.js';
import { SpfTrace, type TraceLevel } from './trace.js';

export const QUALIFIER_RESULT: Record<SpfQualifier, SpfResult> = {
  '+': 'pass',
  '-': 'fail',
  '~': 'softfail',
  '?': 'neutral',
};

/** Ends the whole evaluation with permerror or temperror. */
class SpfAbort extends Error {
  constructor(
    readonly result: 'permerror' | 'temperror',
    message: string,
  ) {
    super(message);
  }
}

interface LevelResult {
  result: SpfResult;
  explanation?: Explanation;
  matched?: SpfMatch;
}

/** The outcome of reading exp= (§6.2): the text, a note on why it is absent or cut, or both. */
interface Explanation {
  text?: string;
  note?: string;
}

/** Evaluates check_host(<ip>, <domain>, <sender>) with the given DNS view. */
export async function checkHost(dns: MailDns, input: SpfCheckInput): Promise<SpfCheckOutcome> {
  const run = new Evaluation(dns, input);
  try {
    const top = await run.checkHost(input.domain, 0, 'check');
    const { text, note } = top.explanation ?? {};
    return {
      result: top.result,
      ...(text === undefined ? {} : { explanation: text }),
      ...(note === undefined ? {} : { explanationNote: note }),
      ...(top.matched ? { matched: top.matched } : {}),
      lookups: run.lookups,
      void_lookups: run.voids,
      trace: run.trace.entries,
      usedLocalPart: run.usedLocalPart,
    };
  } catch (err) {
    if (!(err instanceof SpfAbort)) throw err;
    return {
      result: err.result,
      lookups: run.lookups,
      void_lookups: run.voids,
      trace: run.trace.entries,
      problem: clip(err.message, TRACE_LIMITS.detail),
      usedLocalPart: run.usedLocalPart,
    };
  }
}

class Evaluation {
  lookups = 0;
  voids = 0;
  usedLocalPart = false;
  readonly trace = new SpfTrace();
  private validated: Promise<string[]> | undefined;

  constructor(
    private readonly dns: MailDns,
    private readonly input: SpfCheckInput,
  ) {}

  async checkHost(
    rawDomain: string,
    depth: number,
    via: 'check' | 'include' | 'redirect',
  ): Promise<LevelResult> {
    const domain = rawDomain.replace(/\.$/, '');
    const level = this.trace.level(depth, domain);
    const note = (result: SpfResult, detail: string): LevelResult => {
      this.trace.push({ step: 'result', depth, domain, result, detail });
      return { result };
    };
    const malformed = domainProblem(domain);
    if (malformed) {
      this.trace.push({ step: 'record', depth, domain, via, detail: `not looked up: ${malformed}` });
      return note('none', `${domain} is not a usable domain name (${malformed}), so it has no SPF policy`);
    }
    const answer = await this.dns.txt(domain);
    if (answer.kind === 'error') {
      this.trace.push({ step: 'record', depth, domain, via, detail: `TXT lookup failed: ${answer.message}` });
      this.abortNote(depth, domain, 'temperror', `DNS lookup of TXT ${domain} failed: ${answer.message}`);
    }
    const records = spfRecords(answer);
    if (records.length === 0) {
      const why =
        answer.kind === 'invalid_name'
          ? answer.message
          : answer.kind === 'answer' && answer.rcode === 'NXDOMAIN'
            ? 'the domain does not exist (NXDOMAIN)'
            : 'no TXT record starting with "v=spf1"';
      this.trace.push({ step: 'record', depth, domain, via, detail: `no SPF record: ${why}` });
      return note('none', `${domain} publishes no SPF record`);
    }
    if (records.length > 1) {
      this.trace.push({
        step: 'record',
        depth,
        domain,
        via,
        detail: `${records.length} "v=spf1" records: ${records.map((r) => JSON.stringify(r)).join(', ')}`,
      });
      this.abortNote(depth, domain, 'permerror', `${domain} publishes ${records.length} SPF records (§4.5)`);
    }
    const record = records[0]!;
    this.trace.push({ step: 'record', depth, domain, via, record, detail: `TXT ${domain}: ${record}` });
    const parsed = parseSpfRecord(record);
    if (parsed.errors.length > 0) {
      const first = parsed.errors[0]!.message.replace(/\.$/, '');
      this.abortNote(
        depth,
        domain,
        'permerror',
        `syntax error in the SPF record of ${domain}: ${first} (§4.6)`,
      );
    }
    const mechanisms = parsed.terms.filter((t): t is SpfMechanism => t.kind === 'mechanism');
    const modifier = (name: string) =>
      parsed.terms.find((t): t is SpfModifier => t.kind === 'modifier' && t.name === name);

    try {
      for (const [index, mechanism] of mechanisms.entries()) {
        const matched = await this.evaluate(mechanism, domain, level);
        if (!matched) continue;
        for (const rest of mechanisms.slice(index + 1)) {
          this.trace.pushQuiet(level, {
            step: 'term',
            depth,
            domain,
            term: rest.text,
            outcome: 'not_reached',
            detail: 'not evaluated: an earlier mechanism matched',
          });
        }
        const result = QUALIFIER_RESULT[mechanism.qualifier];
        const match =
          typeof matched === 'object'
            ? matched
            : { mechanism: clip(mechanism.text, TRACE_LIMITS.term), record_domain: domain, depth };
        const explanation = result === 'fail' ? await this.explain(modifier('exp'), domain) : undefined;
        this.trace.push({
          step: 'result',
          depth,
          domain,
          result,
          detail: `"${clip(mechanism.text, TRACE_LIMITS.term)}" matched: ${result}`,
        });
        return { result, matched: match, ...(explanation === undefined ? {} : { explanation }) };
      }
      const redirect = modifier('redirect');
      if (redirect) {
        const target = await this.countedTarget(redirect.text, redirect.value, domain, depth);
        this.trace.push({
          step: 'term',
          depth,
          domain,
          term: redirect.text,
          target,
          lookup: true,
          outcome: 'match',
          detail: `no mechanism matched: the policy of ${target} applies`,
        });
        const sub = await this.checkHost(target, depth + 1, 'redirect');
        if (sub.result === 'none') {
          this.abortNote(
            depth,
            domain,
            'permerror',
            `redirect=${target}: ${target} has no SPF record (§6.1)`,
          );
        }
        this.trace.push({
          step: 'result',
          depth,
          domain,
          result: sub.result,
          detail: `the result of redirect=${target}`,
        });
        return sub;
      }
      return note('neutral', 'no mechanism matched and there is no redirect: the default result is neutral');
    } catch (err) {
      if (err instanceof SpfAbort && !this.noted.has(err)) {
        this.noted.add(err);
        this.trace.push({ step: 'result', depth, domain, result: err.result, detail: err.message });
      }
      throw err;
    }
  }

  /** Abort errors already written into the trace at the level that raised them. */
  private readonly noted = new WeakSet<SpfAbort>();

  private abortNote(
    depth: number,
    domain: string,
    result: 'permerror' | 'temperror',
    message: string,
  ): never {
    const err = new SpfAbort(result, message);
    this.noted.add(err);
    this.trace.push({ step: 'result', depth, domain, result, detail: message });
    throw err;
  }

  /**
   * Whether one mechanism matches (§5); writes its trace entry. An include
   * that matched returns the mechanism that matched inside it, so `matched`
   * names the range or name that actually let the address through.
   */
  private async evaluate(m: SpfMechanism, domain: string, level: TraceLevel): Promise<boolean | SpfMatch> {
    const { depth } = level;
    const entry = (fields: Partial<SpfTraceEntry> & { outcome: SpfTraceOutcome; detail: string }) =>
      this.trace.push({ step: 'term', depth, domain, term: m.text, ...fields });
    const ip = this.input.ip;
    switch (m.name) {
      case 'all':
        entry({ outcome: 'match', detail: 'matches every address' });
        return true;
      case 'ip4':
      case 'ip6': {
        const family = m.name === 'ip4' ? 4 : 6;
        const bits = (family === 4 ? m.cidr4 : m.cidr6) ?? (family === 4 ? 32 : 128);
        const range = `${m.network}/${bits}`;
        const hit = ip.family === family && inNetwork(ip, m.network!, bits);
        const detail =
          ip.family !== family
            ? `${ip.address} is not an IPv${family} address`
            : `${ip.address} is ${hit ? '' : 'not '}in ${range}`;
        if (hit) entry({ outcome: 'match', detail });
        else
          this.trace.pushQuiet(level, {
            step: 'term',
            depth,
            domain,
            term: m.text,
            outcome: 'no_match',
            detail,
          });
        return hit;
      }
      case 'a': {
        const target = await this.countedTarget(m.text, m.domainSpec, domain, depth);
        const answer = await this.addresses(target);
        const addresses = this.checked(answer, m, target, domain, depth);
        const isVoid = addresses.length === 0;
        const hit = addresses.some((a) => inNetwork(ip, a, this.prefix(m)));
        entry({
          target,
          lookup: true,
          void: isVoid,
          outcome: hit ? 'match' : 'no_match',
          detail: `${ip.family === 4 ? 'A' : 'AAAA'} ${target} → ${list(addresses)}; ${ip.address} ${hit ? 'matches' : 'does not match'}${this.prefixNote(m)}`,
        });
        if (isVoid) this.countVoid(m.text, target, domain);
        return hit;
      }
      case 'mx': {
        const target = await this.countedTarget(m.text, m.domainSpec, domain, depth);
        const answer = await this.dns.mx(target);
        const hosts = this.checked(answer, m, target, domain, depth)
          .sort((x, y) => x.priority - y.priority)
          .map((r) => r.exchange)
          .filter((h) => h !== '.' && h !== '');
        const isVoid = answer.kind !== 'answer' || answer.records.length === 0;
        if (hosts.length > NAMES_PER_LOOKUP_LIMIT) {
          entry({ target, lookup: true, outcome: 'error', detail: `MX ${target} → ${hosts.length} hosts` });
          throw new SpfAbort(
            'permerror',
            `"${m.text}" at ${domain}: MX ${target} has ${hosts.length} hosts; more than ${NAMES_PER_LOOKUP_LIMIT} is a permerror (§4.6.4)`,
          );
        }
        for (const host of hosts) {
          const addresses = this.checked(await this.addresses(host), m, host, domain, depth);
          if (addresses.some((a) => inNetwork(ip, a, this.prefix(m)))) {
            entry({
              target,
              lookup: true,
              outcome: 'match',
              detail: `MX ${target} → ${list(hosts)}; ${host} has ${ip.address}${this.prefixNote(m)}`,
            });
            return true;
          }
        }
        entry({
          target,
          lookup: true,
          void: isVoid,
          outcome: 'no_match',
          detail: `MX ${target} → ${list(hosts)}; none has ${ip.address}${this.prefixNote(m)}`,
        });
        if (isVoid) this.countVoid(m.text, target, domain);
        return false;
      }
      case 'ptr': {
        const target = await this.countedTarget(m.text, m.domainSpec, domain, depth);
        const names = await this.validatedNames();
        const wanted = target.toLowerCase();
        const hit = names.find((n) => n === wanted || n.endsWith(`.${wanted}`));
        entry({
          target,
          lookup: true,
          outcome: hit ? 'match' : 'no_match',
          detail:
            names.length === 0
              ? `${ip.address} has no validated host name`
              : `validated names of ${ip.address}: ${list(names)}; ${hit ? `${hit} is within ${target}` : `none is within ${target}`}`,
        });
        return hit !== undefined;
      }
      case 'exists': {
        const target = await this.countedTarget(m.text, m.domainSpec, domain, depth);
        // §5.7: always an A query, whatever the client's address family.
        const answer = await this.dns.a(target);
        const addresses = this.checked(answer, m, target, domain, depth);
        const hit = addresses.length > 0;
        entry({
          target,
          lookup: true,
          void: !hit,
          outcome: hit ? 'match' : 'no_match',
          detail: `A ${target} → ${list(addresses)}`,
        });
        if (!hit) this.countVoid(m.text, target, domain);
        return hit;
      }
      case 'include': {
        const target = await this.countedTarget(m.text, m.domainSpec, domain, depth);
        const slot = entry({
          target,
          lookup: true,
          outcome: 'no_match',
          detail: `evaluating the policy of ${target}`,
        });
        let sub: LevelResult;
        try {
          sub = await this.checkHost(target, depth + 1, 'include');
        } catch (err) {
          slot.outcome = 'error';
          slot.detail = `${target} returned ${err instanceof SpfAbort ? err.result : 'an error'}`;
          throw err;
        }
        // §5.2: the included policy's result decides whether this mechanism matches.
        switch (sub.result) {
          case 'pass':
            slot.outcome = 'match';
            slot.detail = `${target} returned pass`;
            return sub.matched ?? true;
          case 'fail':
          case 'softfail':
          case 'neutral':
            slot.detail = `${target} returned ${sub.result}: no match`;
            return false;
          default:
            slot.outcome = 'error';
            slot.detail = `${target} returned none: an include of a domain without SPF is a permerror`;
            throw new SpfAbort(
              'permerror',
              `include:${target} at ${domain}: ${target} has no SPF record (§5.2)`,
            );
        }
      }
    }
  }

  /** Counts a DNS-querying term (§4.6.4) and expands its target; the 11th is a permerror. */
  private async countedTarget(
    term: string,
    spec: string | undefined,
    domain: string,
    depth: number,
  ): Promise<string> {
    this.lookups += 1;
    if (this.lookups > LOOKUP_LIMIT) {
      this.trace.push({
        step: 'term',
        depth,
        domain,
        term,
        lookup: true,
        outcome: 'error',
        detail: `the ${ordinal(this.lookups)} DNS-querying term: over the limit of ${LOOKUP_LIMIT}`,
      });
      throw new SpfAbort(
        'permerror',
        `more than ${LOOKUP_LIMIT} DNS-querying terms: "${term}" at ${domain} is the ${ordinal(this.lookups)} (§4.6.4)`,
      );
    }
    return spec === undefined ? domain : this.expandDomainSpec(spec, domain);
  }

  private countVoid(term: string, target: string, domain: string): void {
    this.voids += 1;
    if (this.voids > VOID_LOOKUP_LIMIT)
      throw new SpfAbort(
        'permerror',
        `more than ${VOID_LOOKUP_LIMIT} void lookups: "${term}" at ${domain} found nothing at ${target}, the ${ordinal(this.voids)} (§4.6.4)`,
      );
  }

  /** The records of an answer; a DNS failure ends the evaluation with temperror (§5). */
  private checked<T>(
    answer: DnsOutcome<T>,
    m: SpfMechanism,
    target: string,
    domain: string,
    depth: number,
  ): T[] {
    if (answer.kind === 'error') {
      this.trace.push({
        step: 'term',
        depth,
        domain,
        term: m.text,
        target,
        outcome: 'error',
        detail: `DNS lookup of ${target} failed: ${answer.message}`,
      });
      throw new SpfAbort(
        'temperror',
        `"${m.text}" at ${domain}: DNS lookup of ${target} failed: ${answer.message}`,
      );
    }
    return answer.kind === 'answer' ? answer.records : [];
  }

  private addresses(name: string): Promise<DnsOutcome<string>> {
    return this.input.ip.family === 4 ? this.dns.a(name) : this.dns.aaaa(name);
  }

  private prefix(m: SpfMechanism): number {
    return this.input.ip.family === 4 ? (m.cidr4 ?? 32) : (m.cidr6 ?? 128);
  }

  private prefixNote(m: SpfMechanism): string {
    const cidr = this.input.ip.family === 4 ? m.cidr4 : m.cidr6;
    return cidr === undefined ? '' : ` (compared as /${cidr})`;
  }

  private macroValues(domain: string): MacroValues {
    const { sender, helo, ip, receiver, now } = this.input;
    const at = sender.lastIndexOf('@');
    return {
      sender,
      local: sender.slice(0, at),
      senderDomain: sender.slice(at + 1),
      domain,
      ip,
      helo,
      receiver,
      now,
      validatedName: async () => pickValidated(await this.validatedNames(), domain),
    };
  }

  private async expandDomainSpec(spec: string, domain: string): Promise<string> {
    const tokens = tokenizeMacroString(spec);
    // The parser already refused a record whose domain-spec does not tokenize (§4.6).
    if (typeof tokens === 'string') throw new SpfAbort('permerror', `domain-spec "${spec}" ${tokens}`);
    if (tokens.some((t) => t.kind === 'macro' && (t.letter === 'l' || t.letter === 's')))
      this.usedLocalPart = true;
    return expandDomainName(tokens, this.macroValues(domain));
  }

  /**
   * The explanation of a fail (§6.2): the TXT record at the expanded exp=
   * domain, macro-expanded. Any DNS problem, a count other than one record,
   * or a syntax error in the text means no explanation, never an error; so
   * does a text past EXPLANATION_LIMITS, and an expansion past them is cut:
   * the domain writes the text, so the note says which it was.
   */
  private async explain(exp: SpfModifier | undefined, domain: string): Promise<Explanation | undefined> {
    if (!exp) return undefined;
    const target = await this.expandDomainSpec(exp.value, domain);
    const answer = await this.dns.txt(target);
    if (answer.kind !== 'answer' || answer.records.length !== 1) return undefined;
    const text = answer.records[0]!;
    const { txtChars, macros, chars } = EXPLANATION_LIMITS;
    const unused = (why: string) => ({ note: `The exp= text at ${target} is not used: ${why}.` });
    if (text.length > txtChars)
      return unused(`it is ${text.length} characters long, more than the ${txtChars} read`);
    const tokens = tokenizeMacroString(text, true);
    if (typeof tokens === 'string') return undefined;
    const count = tokens.filter((t) => t.kind === 'macro').length;
    if (count > macros) return unused(`it has ${count} macros, more than the ${macros} expanded`);
    const expanded = await expandMacros(tokens, this.macroValues(domain), chars);
    if (expanded.length <= chars) return { text: expanded };
    return {
      text: clip(expanded, chars),
      note: `The explanation from ${target} was shortened to ${chars} characters.`,
    };
  }

  /**
   * The validated host names of <ip> (§5.5): at most 10 PTR names, each kept
   * when one of its addresses is <ip>. Lookup failures only drop names.
   */
  private validatedNames(): Promise<string[]> {
    this.validated ??= reverseNames(this.dns, this.input.ip.address, NAMES_PER_LOOKUP_LIMIT).then(
      (found) => found?.confirmed ?? [],
    );
    return this.validated;
  }
}

/** %{p} (§7.3): <domain> itself when validated, else a validated subdomain of it, else any, else "unknown". */
function pickValidated(names: string[], domain: string): string {
  const d = domain.toLowerCase();
  return names.find((n) => n === d) ?? names.find((n) => n.endsWith(`.${d}`)) ?? names[0] ?? 'unknown';
}

/** Why a <domain> is malformed for check_host (§4.3), or undefined. */
function domainProblem(domain: string): string | undefined {
  if (domain === '') return 'empty';
  if (domain.length > 253) return 'longer than 253 characters';
  const labels = domain.split('.');
  if (labels.length < 2) return 'not a multi-label domain name';
  if (labels.some((l) => l === '')) return 'it has an empty label';
  if (labels.some((l) => l.length > 63)) return 'it has a label longer than 63 characters';
  if (!isTopLabel(labels.at(-1)!)) return 'it does not end in a valid top-level label';
  return undefined;
}

function list(items: readonly string[]): string {
  if (items.length === 0) return 'nothing';
  return items.length > 6 ? `${items.slice(0, 6).join(', ')}, … (${items.length})` : items.join(', ');
}

export function ordinal(n: number): string {
  const suffix = n % 100 >= 11 && n % 100 <= 13 ? 'th' : (['th', 'st', 'nd', 'rd'][n % 10] ?? 'th');
  return `${n}${suffix}`;
}
