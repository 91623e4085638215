/**
 * Fake AddressResolvers (the part of the DNS client src/net/ uses) for unit tests of the
 * outbound-safety layer: answers made in memory, every question recorded in `asked` as
 * `name TYPE`, failures shaped as the real resolver's (a 502 AppError).
 *
 *   const resolver = hostsResolver({ 'site.test': [site.address], 'down.test': 'servfail' });
 *   const scripted = scriptedResolver({ A: ok(a('x.test', '192.0.2.1')), AAAA: fail });
 */
import { upstreamFailed } from '../../src/errors.js';
import type { AddressResolver } from '../../src/net/resolve-target.js';
import type { DnsAnswer, DnsRR } from '../../src/providers/dns/types.js';

type AddressType = 'A' | 'AAAA';
type Answer = { value: DnsAnswer };

export interface FakeAddressResolver extends AddressResolver {
  /** Every question, in order, as `name TYPE`. */
  asked: string[];
}

const FLAGS = { aa: false, tc: false, rd: true, ra: true, ad: false, cd: false };

export function dnsAnswer(rcode: string, answers: DnsRR[]): Answer {
  return { value: { rcode, flags: FLAGS, answers, authorities: [], ede: [] } };
}
export const a = (name: string, address: string): DnsRR => ({ name, type: 'A', ttl: 60, data: { address } });
export const aaaa = (name: string, address: string): DnsRR => ({
  name,
  type: 'AAAA',
  ttl: 60,
  data: { address },
});
export const cname = (name: string, target: string): DnsRR => ({
  name,
  type: 'CNAME',
  ttl: 60,
  data: { target },
});

/** An answer step: NOERROR with these records. */
export const ok =
  (...rrs: DnsRR[]) =>
  (): Promise<Answer> =>
    Promise.resolve(dnsAnswer('NOERROR', rrs));

/** A failure step: what the DNS client throws when every provider failed. */
export const fail = (): Promise<Answer> =>
  Promise.reject(
    upstreamFailed('dns', [
      { id: 'fake-dns', name: 'Fake DNS', status: 'failed', error: 'upstream_error: SERVFAIL' },
    ]),
  );

function recording(
  answer: (name: string, type: AddressType, signal: AbortSignal | undefined) => Promise<Answer>,
): FakeAddressResolver {
  const asked: string[] = [];
  return {
    asked,
    resolve(name, type, opts) {
      asked.push(`${name} ${type}`);
      return answer(name, type, opts?.signal);
    },
  };
}

/** Answers each type from its step, whatever the name; a type without one is an empty NOERROR. */
export function scriptedResolver(
  script: Partial<Record<AddressType, () => Promise<Answer>>>,
): FakeAddressResolver {
  return recording((_name, type) => script[type]?.() ?? ok()());
}

/** What a name answers: its addresses (IPv4 ones for A, IPv6 ones for AAAA), or a failure. */
export type HostAnswer = readonly string[] | 'servfail' | 'hang';

/**
 * Answers from a table of names. A function entry is asked again on every question (an
 * answer that changes between questions, as in DNS rebinding). A name not in the table is
 * NXDOMAIN; 'servfail' fails as the DNS client does; 'hang' answers nothing until the
 * caller's signal aborts.
 */
export function hostsResolver(hosts: Record<string, HostAnswer | (() => HostAnswer)>): FakeAddressResolver {
  return recording((name, type, signal) => {
    const entry = hosts[name];
    if (entry === undefined) return Promise.resolve(dnsAnswer('NXDOMAIN', []));
    const answer = typeof entry === 'function' ? entry() : entry;
    if (answer === 'servfail') return fail();
    if (answer === 'hang') {
      return new Promise((_resolve, reject) => {
        signal?.addEventListener('abort', () => reject(signal.reason), { once: true });
      });
    }
    const v6 = (address: string) => address.includes(':');
    const records = answer
      .filter((address) => (type === 'AAAA') === v6(address))
      .map((address) => (type === 'A' ? a(name, address) : aaaa(name, address)));
    return Promise.resolve(dnsAnswer('NOERROR', records));
  });
}
