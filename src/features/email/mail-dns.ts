/**
 * The checks' view of DNS, backed by the shared DnsResolver (its provider
 * chain, cache and single-flight). Each distinct question is asked once per
 * check run, so every check sees the same answer; failures become `error`
 * outcomes instead of exceptions, because one failed lookup makes one check
 * `error`, not the whole response. The attempts are collected for the
 * response's attribution.
 *
 * A broken chain of trust is a diagnosis, not an outage: a validating
 * resolver answers SERVFAIL for every name under it. When a question fails
 * that way and netdiag's own validation (`verdicts`) finds it bogus, the
 * question is listed in `stats().bogus` with the broken link, and, reading
 * bogus answers (`readBogus`, or the `readingBogus()` view), its outcome is
 * the answer the authoritative servers serve, as netdiag's engine read it,
 * marked `bogus`: what a resolver that does not validate still sees.
 */

import { ENGINE_PROVIDER } from '../../dns-engine/provider.js';
import { type AppError, isUpstreamFailed, type ProviderAttempt } from '../../errors.js';
import { parseIpBytes } from '../../net/address.js';
import { reverseName } from '../../net/names.js';
import { InvalidDnsNameError } from '../../providers/dns/names.js';
import type { DnsResolver } from '../../providers/dns/resolver.js';
import type { DnsAnswer, DnsRecordType } from '../../providers/dns/types.js';
import type { Attribution } from '../../providers/types.js';
import type { Reason, RequestVerdicts } from '../dnssec/verdicts.js';
import type { DnsOutcome, MailDns, MxRecord, TlsaRecord } from './types.js';

/** A question a validating resolver refused and netdiag's own validation finds bogus. */
export interface BogusQuestion {
  name: string;
  type: DnsRecordType;
  reason: Reason;
}

export interface MailDnsStats {
  /** Distinct questions asked. */
  queries: number;
  /** Questions that got an answer (NOERROR or NXDOMAIN), from a resolver or, when bogus answers are read, netdiag's engine. */
  answered: number;
  /** Every provider consulted, in first-use order; `failed` if it ever failed (with its first error). */
  providersTried: ProviderAttempt[];
  /** The provider that answered the most questions. */
  source: { name: string; id: string } | undefined;
  /** The first resolver failure, for a 502 when nothing was answered at all. */
  firstFailure: AppError | undefined;
  /** The questions refused for a broken chain of trust, in the order asked. */
  bogus: BogusQuestion[];
}

export interface TrackedMailDns extends MailDns {
  stats(): MailDnsStats;
  /**
   * The answer's attribution: the resolver that answered the most questions;
   * when nothing was answered, the first one tried; `none` when no question
   * was needed at all.
   */
  attribution(): Attribution;
  /** The same questions and stats, with bogus answers read (for a second pass over the same questions). */
  readingBogus(): TrackedMailDns;
}

export interface MailDnsOptions {
  signal?: AbortSignal;
  /** netdiag's own validation, asked about a question the resolvers answered SERVFAIL. */
  verdicts?: RequestVerdicts;
  /** Answer a bogus question with what netdiag's engine read (see the header). Default false. */
  readBogus?: boolean;
}

/** One question as asked: the resolver's answer or why there is none, and the engine's answer when it is bogus. */
type Asked =
  | { answer: DnsAnswer }
  | {
      failure: Extract<DnsOutcome<never>, { kind: 'error' | 'invalid_name' }>;
      bogus?: { reason: Reason; answer: DnsAnswer | undefined };
    };

export function createMailDns(
  resolver: Pick<DnsResolver, 'resolve'>,
  opts: MailDnsOptions = {},
): TrackedMailDns {
  const asked = new Map<string, Promise<Asked>>();
  const attempts = new Map<string, ProviderAttempt>();
  const answeredBy = new Map<string, { name: string; id: string; count: number }>();
  const bogus: BogusQuestion[] = [];
  const read = new Set<string>();
  let answered = 0;
  let firstFailure: AppError | undefined;

  const record = (tried: readonly ProviderAttempt[]) => {
    for (const attempt of tried) {
      const known = attempts.get(attempt.id);
      if (!known || (known.status === 'ok' && attempt.status === 'failed'))
        attempts.set(attempt.id, { ...attempt });
    }
  };
  const answeredFrom = (provider: { name: string; id: string }) => {
    answered += 1;
    const by = answeredBy.get(provider.id) ?? { ...provider, count: 0 };
    by.count += 1;
    answeredBy.set(provider.id, by);
  };

  const outcomeOf = <T>(
    answer: DnsAnswer,
    pick: (answer: DnsAnswer) => T[],
  ): Extract<DnsOutcome<T>, { kind: 'answer' }> => ({
    kind: 'answer',
    rcode: answer.rcode === 'NXDOMAIN' ? 'NXDOMAIN' : 'NOERROR',
    records: pick(answer),
    aliases: answer.answers.flatMap((rr) => (rr.type === 'CNAME' ? [rr.data.target] : [])),
  });

  /** A SERVFAIL from the resolvers: bogus by netdiag's own validation? */
  const diagnose = async (name: string, type: DnsRecordType, err: AppError) => {
    const servfail = (err.providersTried ?? []).some((a) =>
      /^upstream_error: SERVFAIL\b/.test(a.error ?? ''),
    );
    if (!servfail || !opts.verdicts) return undefined;
    const verdict = await opts.verdicts.verdict(name, type);
    if (verdict.status !== 'bogus' || !verdict.reason) return undefined;
    bogus.push({ name: name.toLowerCase().replace(/\.$/, ''), type, reason: verdict.reason });
    const answer: DnsAnswer | undefined = verdict.answer
      ? {
          rcode: verdict.answer.rcode,
          flags: { aa: false, tc: false, rd: true, ra: true, ad: false, cd: false },
          answers: verdict.answer.records,
          authorities: [],
          ede: [],
        }
      : undefined;
    return { reason: verdict.reason, answer };
  };

  const question = (name: string, type: DnsRecordType): Promise<Asked> => {
    const key = `${name.toLowerCase().replace(/\.$/, '')}:${type}`;
    const existing = asked.get(key);
    if (existing) return existing;
    const pending = (async (): Promise<Asked> => {
      try {
        const result = await resolver.resolve(name, type, opts.signal ? { signal: opts.signal } : {});
        record(result.providers_tried);
        answeredFrom({ name: result.source, id: result.source_id });
        return { answer: result.value };
      } catch (err) {
        if (err instanceof InvalidDnsNameError)
          return { failure: { kind: 'invalid_name', message: err.message } };
        if (!isUpstreamFailed(err)) throw err;
        record(err.providersTried ?? []);
        firstFailure ??= err;
        const found = await diagnose(name, type, err);
        const message = describeFailure(err);
        return {
          failure: {
            kind: 'error',
            message: found
              ? `${message}; netdiag's own validation finds it DNSSEC-bogus at ${found.reason.zone} (${found.reason.code})`
              : message,
          },
          ...(found ? { bogus: found } : {}),
        };
      }
    })();
    asked.set(key, pending);
    return pending;
  };

  const view = (readBogus: boolean): TrackedMailDns => {
    const ask = async <T>(
      name: string,
      type: DnsRecordType,
      pick: (answer: DnsAnswer) => T[],
    ): Promise<DnsOutcome<T>> => {
      const got = await question(name, type);
      if ('answer' in got) return outcomeOf(got.answer, pick);
      const found = got.bogus;
      if (!readBogus || !found?.answer) return got.failure;
      const key = `${name.toLowerCase().replace(/\.$/, '')}:${type}`;
      if (!read.has(key)) {
        read.add(key);
        record([{ ...ENGINE_PROVIDER, status: 'ok' }]);
        answeredFrom(ENGINE_PROVIDER);
      }
      return { ...outcomeOf(found.answer, pick), bogus: found.reason };
    };
    const self: TrackedMailDns = {
      txt: (name) =>
        ask(name, 'TXT', (a) => a.answers.flatMap((rr) => (rr.type === 'TXT' ? [rr.data.text] : []))),
      mx: (name) =>
        ask<MxRecord>(name, 'MX', (a) =>
          a.answers.flatMap((rr) =>
            rr.type === 'MX' ? [{ priority: rr.data.priority, exchange: rr.data.exchange }] : [],
          ),
        ),
      a: (name) =>
        ask(name, 'A', (a) => a.answers.flatMap((rr) => (rr.type === 'A' ? [rr.data.address] : []))),
      aaaa: (name) =>
        ask(name, 'AAAA', (a) => a.answers.flatMap((rr) => (rr.type === 'AAAA' ? [rr.data.address] : []))),
      ptr: (name) =>
        ask(name, 'PTR', (a) => a.answers.flatMap((rr) => (rr.type === 'PTR' ? [rr.data.host] : []))),
      tlsa: (name) =>
        ask<TlsaRecord>(name, 'TLSA', (a) =>
          a.answers.flatMap((rr) =>
            rr.type === 'TLSA'
              ? [
                  {
                    usage: rr.data.usage,
                    selector: rr.data.selector,
                    matchingType: rr.data.matchingType,
                    data: rr.data.data,
                  },
                ]
              : [],
          ),
        ),
      attribution() {
        const stats = self.stats();
        const source = stats.source ?? {
          name: stats.providersTried[0]?.name ?? 'none',
          id: stats.providersTried[0]?.id ?? 'none',
        };
        return { source: source.name, source_id: source.id, providers_tried: stats.providersTried };
      },
      stats: () => {
        const best = [...answeredBy.values()].sort((x, y) => y.count - x.count)[0];
        return {
          queries: asked.size,
          answered,
          providersTried: [...attempts.values()],
          source: best ? { name: best.name, id: best.id } : undefined,
          firstFailure,
          bogus: [...bogus],
        };
      },
      readingBogus: () => view(true),
    };
    return self;
  };
  return view(opts.readBogus ?? false);
}

/** "timeout: no answer within 5000 ms" from the last provider tried, or the error's own message. */
function describeFailure(err: AppError): string {
  const last = err.providersTried?.at(-1);
  return last?.error ?? err.message;
}

/**
 * The PTR names of `address` (the first `limit`) and those among them whose
 * addresses of its family include it: SPF's validated names (RFC 7208 §5.5)
 * and forward-confirmed reverse DNS alike. Undefined when the PTR lookup
 * itself failed; a failed forward lookup only leaves that name unconfirmed.
 */
export async function reverseNames(
  dns: MailDns,
  address: string,
  limit: number,
): Promise<{ names: string[]; confirmed: string[] } | undefined> {
  const bytes = parseIpBytes(address);
  if (!bytes) return undefined;
  const ptr = await dns.ptr(reverseName(address));
  if (ptr.kind !== 'answer') return undefined;
  const names = ptr.records.slice(0, limit);
  const same = (text: string) => {
    const other = parseIpBytes(text);
    return other?.length === bytes.length && other.every((b, i) => b === bytes[i]);
  };
  const forward = await Promise.all(names.map((n) => (bytes.length === 4 ? dns.a(n) : dns.aaaa(n))));
  const confirmed = names.filter((_, i) => {
    const answer = forward[i]!;
    return answer.kind === 'answer' && answer.records.some(same);
  });
  return { names, confirmed };
}
