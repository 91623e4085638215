/**
 * The checks' view of DNS, backed by the shared DnsResolver (its provider
 * chain, cache and single-flight). Each distinct question is asked once per
 * check run, so every check sees the same answer; failures become `error`
 * outcomes instead of exceptions, because one failed lookup makes one check
 * `error`, not the whole response. The attempts are collected for the
 * response's attribution.
 */
import { type AppError, isUpstreamFailed, type ProviderAttempt } from '../../errors.js';
import { parseIpBytes } from '../../net/address.js';
import { reverseName } from '../../net/names.js';
import { InvalidDnsNameError } from '../../providers/dns/names.js';
import type { DnsResolver } from '../../providers/dns/resolver.js';
import type { DnsAnswer, DnsRecordType } from '../../providers/dns/types.js';
import type { Attribution } from '../../providers/types.js';
import type { DnsOutcome, MailDns, MxRecord, TlsaRecord } from './types.js';

export interface MailDnsStats {
  /** Distinct questions asked. */
  queries: number;
  /** Questions that got an answer (NOERROR or NXDOMAIN). */
  answered: number;
  /** Every provider consulted, in first-use order; `failed` if it ever failed (with its first error). */
  providersTried: ProviderAttempt[];
  /** The provider that answered the most questions. */
  source: { name: string; id: string } | undefined;
  /** The first resolver failure, for a 502 when nothing was answered at all. */
  firstFailure: AppError | undefined;
}

export interface TrackedMailDns extends MailDns {
  stats(): MailDnsStats;
  /**
   * The answer's attribution: the resolver that answered the most questions;
   * when nothing was answered, the first one tried; `none` when no question
   * was needed at all.
   */
  attribution(): Attribution;
}

export function createMailDns(resolver: Pick<DnsResolver, 'resolve'>, signal?: AbortSignal): TrackedMailDns {
  const asked = new Map<string, Promise<DnsOutcome<unknown>>>();
  const attempts = new Map<string, ProviderAttempt>();
  const answeredBy = new Map<string, { name: string; id: string; count: number }>();
  let answered = 0;
  let firstFailure: AppError | undefined;

  const record = (tried: readonly ProviderAttempt[]) => {
    for (const attempt of tried) {
      const known = attempts.get(attempt.id);
      if (!known || (known.status === 'ok' && attempt.status === 'failed'))
        attempts.set(attempt.id, { ...attempt });
    }
  };

  const ask = <T>(
    name: string,
    type: DnsRecordType,
    pick: (answer: DnsAnswer) => T[],
  ): Promise<DnsOutcome<T>> => {
    const key = `${name.toLowerCase().replace(/\.$/, '')}:${type}`;
    const existing = asked.get(key);
    if (existing) return existing as Promise<DnsOutcome<T>>;
    const pending = (async (): Promise<DnsOutcome<T>> => {
      try {
        const result = await resolver.resolve(name, type, { signal });
        record(result.providers_tried);
        answered += 1;
        const by = answeredBy.get(result.source_id) ?? {
          name: result.source,
          id: result.source_id,
          count: 0,
        };
        by.count += 1;
        answeredBy.set(result.source_id, by);
        const answer = result.value;
        return {
          kind: 'answer',
          rcode: answer.rcode === 'NXDOMAIN' ? 'NXDOMAIN' : 'NOERROR',
          records: pick(answer),
          aliases: answer.answers.flatMap((rr) => (rr.type === 'CNAME' ? [rr.data.target] : [])),
          ad: answer.flags.ad,
        };
      } catch (err) {
        if (err instanceof InvalidDnsNameError) return { kind: 'invalid_name', message: err.message };
        if (isUpstreamFailed(err)) {
          record(err.providersTried ?? []);
          firstFailure ??= err;
          return { kind: 'error', message: describeFailure(err) };
        }
        throw err;
      }
    })();
    asked.set(key, pending);
    return pending;
  };

  return {
    txt: (name) =>
      ask(name, 'TXT', (a) => a.answers.flatMap((rr) => (rr.type === 'TXT' ? [rr.data.text] : []))),
    mx: (name) =>
      ask<MxRecord>(name, 'MX', (a) =>
        a.answers.flatMap((rr) =>
          rr.type === 'MX' ? [{ priority: rr.data.priority, exchange: rr.data.exchange }] : [],
        ),
      ),
    a: (name) => ask(name, 'A', (a) => a.answers.flatMap((rr) => (rr.type === 'A' ? [rr.data.address] : []))),
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
      const stats = this.stats();
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
      };
    },
  };
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
