/**
 * GET /api/spf: the SPF result for one client address and sender (RFC 7208
 * check_host()), with the trace, the Received-SPF value and the
 * Authentication-Results clause. The identities and defaults are §2.3–§4.3's;
 * the evaluation is check-host.ts's, over the shared DNS view.
 *
 * A DNS failure inside the evaluation is the SPF result `temperror` (what a
 * receiver would conclude, §2.6.6). Only when no resolver could be reached at
 * all (nothing answered, and every failure was the resolver's own: network,
 * TLS, HTTP) is it the service's failure: a 502 with providers_tried.
 *
 * A SERVFAIL that netdiag's own validation finds DNSSEC-bogus is a diagnosis:
 * the result stays what a validating receiver concludes (temperror), and
 * `dnssec` names the broken link and what check_host() concludes on the
 * records as published (a receiver that does not validate).
 */
import { domainToASCII } from 'node:url';
import { type CachedLoader, type Freshness, freshness } from '../../cache/cached.js';
import { badInput, type ProviderAttempt } from '../../errors.js';
import { normalizeDomain } from '../../net/names.js';
import type { DnsResolver } from '../../providers/dns/resolver.js';
import { type DnssecValidator, describeReason, RequestVerdicts } from '../dnssec/verdicts.js';
import { type BogusQuestion, createMailDns } from '../email/mail-dns.js';
import { checkHost } from './check-host.js';
import { parseSpfIp, type SpfIp } from './macros.js';
import type { SpfQuery, SpfResponse } from './spf.schema.js';
import { LOOKUP_LIMIT, type SpfCheckOutcome, type SpfResult, VOID_LOOKUP_LIMIT } from './spf-types.js';

/** Seconds a result is reused; a temperror is never stored. */
export const SPF_TTL = 300;

export interface SpfDeps {
  dns: Pick<DnsResolver, 'resolve'>;
  /**
   * The host performing the check, for %{r} and `receiver=` (§7.3, §9.1): the service's own
   * name (SMTP_HELO_NAME's value), never the machine's host name, which every caller would learn.
   */
  receiver: string;
  clock: () => number;
  loader: Pick<CachedLoader, 'load'>;
  /** netdiag's own DNSSEC validation (features/dnssec/verdicts.ts), asked about a refused answer. */
  dnssec: DnssecValidator;
}

export interface SpfInput {
  ip: SpfIp;
  /** <sender> after the defaults: `local@domain`. */
  sender: string;
  helo: string | null;
  domain: string;
  identity: 'mailfrom' | 'helo';
}

/** Validates the query and applies RFC 7208's defaults, or throws a 400 naming the parameter. */
export function parseSpfInput(query: SpfQuery): SpfInput {
  const ip = parseSpfIp(query.ip.trim());
  if (!ip) throw badInput('ip', `"${query.ip}" is not an IPv4 or IPv6 address`);
  for (const [param, value] of [
    ['sender', query.sender],
    ['helo', query.helo],
  ] as const) {
    // Printable ASCII and space: what SMTP carries in MAIL FROM and HELO (RFC 5321 §4.1.2, RFC 6531 aside).
    if (value !== undefined && /[^\x20-\x7e\u0080-\uffff]/.test(value))
      throw badInput(param, 'contains control characters');
  }
  const helo = query.helo?.trim() || null;
  const sender = (query.sender ?? '').trim().replace(/^<(.*)>$/, '$1');
  let identity: SpfInput['identity'] = 'mailfrom';
  let fullSender: string;
  let senderDomain: string | undefined;
  if (sender === '') {
    // §2.4: a null reverse-path is checked as postmaster@<HELO>.
    identity = 'helo';
    if (helo) fullSender = `postmaster@${helo}`;
    else fullSender = '';
    senderDomain = helo ?? undefined;
  } else {
    const at = sender.lastIndexOf('@');
    const local = at < 0 ? '' : sender.slice(0, at);
    senderDomain = asciiDomain(at < 0 ? sender : sender.slice(at + 1));
    if (senderDomain === '') throw badInput('sender', 'has no domain after "@"');
    fullSender = `${local || 'postmaster'}@${senderDomain}`;
  }
  let domain: string;
  if (query.domain !== undefined && query.domain.trim() !== '') {
    domain = normalizeDomain(query.domain, { param: 'domain' });
    if (!fullSender) fullSender = `postmaster@${domain}`;
  } else if (senderDomain) {
    domain = senderDomain;
  } else {
    throw badInput('sender', 'is missing: give a sender, a HELO name or a domain to check');
  }
  return { ip, sender: fullSender, helo, domain, identity };
}

/** A U-label domain in its A-label form; anything else (a literal, garbage) as given, for check_host to judge. */
function asciiDomain(domain: string): string {
  if (/^[\x20-\x7e]*$/.test(domain)) return domain;
  return domainToASCII(domain) || domain;
}

export async function lookupSpf(
  deps: SpfDeps,
  query: SpfQuery,
): Promise<{ body: SpfResponse; cache: Freshness }> {
  const input = parseSpfInput(query);
  const key = `spf:${JSON.stringify([input.ip.address, input.sender, input.helo, input.domain, input.identity])}`;
  const result = await deps.loader.load(key, async () => {
    const body = await checkSpf(deps, input);
    // A DNS failure is no lasting answer: never cached (docs/architecture.md §1).
    return { value: body, ttl: body.result === 'temperror' ? 0 : SPF_TTL };
  });
  return { body: result.value, cache: freshness(result) };
}

export async function checkSpf(
  deps: Pick<SpfDeps, 'dns' | 'clock' | 'receiver' | 'dnssec'>,
  input: SpfInput,
): Promise<SpfResponse> {
  const dns = createMailDns(deps.dns, { verdicts: new RequestVerdicts(deps.dnssec) });
  const now = deps.clock();
  const args = {
    ip: input.ip,
    sender: input.sender,
    helo: input.helo ?? '',
    domain: input.domain,
    receiver: deps.receiver,
    now: now / 1000,
  };
  const outcome = await checkHost(dns, args);
  const bogus = dns.stats().bogus;
  // The same questions again, the refused ones answered as published: a non-validating receiver's view.
  const unvalidated = bogus.length > 0 ? await checkHost(dns.readingBogus(), args) : undefined;
  const stats = dns.stats();
  if (stats.answered === 0 && stats.firstFailure && stats.providersTried.every(resolverUnreachable))
    throw stats.firstFailure;
  return {
    domain: input.domain,
    ip: input.ip.address,
    sender: input.sender,
    helo: input.helo,
    identity: input.identity,
    result: outcome.result,
    ...(outcome.explanation === undefined ? {} : { explanation: outcome.explanation }),
    ...(outcome.explanationNote === undefined ? {} : { explanation_note: outcome.explanationNote }),
    ...(outcome.problem === undefined ? {} : { problem: outcome.problem }),
    ...(outcome.matched ? { matched: outcome.matched } : {}),
    lookups: outcome.lookups,
    lookup_limit: LOOKUP_LIMIT,
    void_lookups: outcome.void_lookups,
    void_lookup_limit: VOID_LOOKUP_LIMIT,
    trace: outcome.trace,
    received_spf: receivedSpf(input, outcome, deps.receiver),
    authentication_results: authenticationResults(input, outcome),
    ...(unvalidated ? { dnssec: dnssecBogus(bogus, outcome.result, unvalidated.result) } : {}),
    dns_queries: stats.queries,
    checked_at: new Date(now).toISOString(),
    ...dns.attribution(),
  };
}

function dnssecBogus(
  bogus: BogusQuestion[],
  result: SpfResult,
  unvalidated: SpfResult,
): NonNullable<SpfResponse['dnssec']> {
  const questions = bogus.map(({ name, type }) => ({ name, type }));
  const reason = bogus[0]!.reason;
  return {
    status: 'bogus',
    reason,
    questions,
    unvalidated_result: unvalidated,
    message:
      `DNSSEC bogus: ${questions.map((q) => `${q.type} ${q.name}`).join(', ')} fail${questions.length === 1 ? 's' : ''} netdiag's own validation; the chain of trust is broken at ${describeReason(reason)}. ` +
      `Receivers whose resolver validates get SERVFAIL and conclude ${result}; a receiver that does not validate reads the records as published and concludes ${unvalidated}.`,
  };
}

/**
 * A failure that says the resolver itself could not be used (network, TLS,
 * HTTP, a reply we could not read), as opposed to the domain's DNS failing
 * behind it (a timeout or SERVFAIL, which any receiver would also see).
 */
function resolverUnreachable(attempt: ProviderAttempt): boolean {
  return (
    attempt.status === 'failed' &&
    !attempt.error?.startsWith('timeout:') &&
    !attempt.error?.startsWith('upstream_error:')
  );
}

/** The identity checked, as the comment of both headers names it. */
function who(input: SpfInput): string {
  return input.identity === 'helo' ? (input.helo ?? input.domain) : input.sender;
}

/** The human comment of §9.1's examples, per result. */
function comment(input: SpfInput, outcome: SpfCheckOutcome): string {
  const ip = input.ip.address;
  const whom = who(input);
  const messages: Record<SpfResult, string> = {
    pass: `domain of ${whom} designates ${ip} as permitted sender`,
    fail: `domain of ${whom} does not designate ${ip} as permitted sender`,
    softfail: `domain of transitioning ${whom} does not designate ${ip} as permitted sender`,
    neutral: `${ip} is neither permitted nor denied by domain of ${whom}`,
    none: `domain of ${whom} does not publish an SPF record`,
    temperror: `error in processing during lookup of ${whom}`,
    permerror: `domain of ${whom} uses a mechanism or record that is not valid SPF`,
  };
  return messages[outcome.result];
}

/** RFC 7208 §9.1: result, a comment, then key=value pairs. */
export function receivedSpf(input: SpfInput, outcome: SpfCheckOutcome, receiver: string): string {
  const pairs: [string, string][] = [
    ['client-ip', input.ip.address],
    // §9.1: envelope-from names the MAIL FROM identity, when that is the one checked.
    ...(input.identity === 'mailfrom' ? ([['envelope-from', input.sender]] as [string, string][]) : []),
    ...(input.helo ? ([['helo', input.helo]] as [string, string][]) : []),
    ['receiver', receiver],
    ['identity', input.identity],
  ];
  if (outcome.matched) pairs.push(['mechanism', outcome.matched.mechanism]);
  if (outcome.problem) pairs.push(['problem', outcome.problem]);
  const kv = pairs.map(([k, v]) => `${k}=${dotAtomOrQuoted(v)}`).join('; ');
  return `${outcome.result} (${receiver}: ${commentText(comment(input, outcome))}) ${kv};`;
}

/**
 * RFC 8601 §2.7.2: `spf=<result>` with the smtp.helo or smtp.mailfrom
 * property; the mailfrom value is the domain unless the policy used the local
 * part (%{l} or %{s}), as RFC 8601 asks and mailauth's strict mode does.
 */
export function authenticationResults(input: SpfInput, outcome: SpfCheckOutcome): string {
  const property = input.identity === 'helo' ? 'smtp.helo' : 'smtp.mailfrom';
  const value =
    input.identity === 'helo'
      ? (input.helo ?? input.domain)
      : outcome.usedLocalPart
        ? input.sender
        : input.sender.slice(input.sender.lastIndexOf('@') + 1);
  return `spf=${outcome.result} (${commentText(comment(input, outcome))}) ${property}=${dotAtomOrQuoted(value)}`;
}

// RFC 5322 §3.2.3 dot-atom text, plus "@" and ":" as an address or IPv6 literal needs.
const DOT_ATOM = /^[A-Za-z0-9!#$%&'*+\-/=?^_`{|}~.@:]+$/;

function dotAtomOrQuoted(value: string): string {
  return DOT_ATOM.test(value) ? value : `"${value.replace(/["\\]/g, '\\$&')}"`;
}

/** A header comment may not hold unbalanced parentheses or backslashes (RFC 5322 §3.2.2). */
function commentText(text: string): string {
  return text.replace(/[()\\]/g, '\\$&');
}
