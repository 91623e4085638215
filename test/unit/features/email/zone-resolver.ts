/**
 * A DnsResolver stand-in for unit tests: answers from fixture zones with the
 * fake DNS server's own `lookup` (CNAMEs followed, NXDOMAIN vs NODATA), no
 * sockets, AD as the zones say (`testZone(..., { ad: true })`). `fail` makes
 * chosen questions fail the way the real resolver does
 * when every provider fails (a 502 AppError with providers_tried), `servfail`
 * as it does when the resolver answers SERVFAIL, and `asked` records every
 * question in order.
 */
import { upstreamFailed } from '../../../../src/errors.js';
import type { DnssecValidator, DnssecVerdict, Reason } from '../../../../src/features/dnssec/verdicts.js';
import type { ChainResult } from '../../../../src/providers/chain.js';
import type { DnsResolver } from '../../../../src/providers/dns/resolver.js';
import type { DnsAnswer, DnsRecordType, DnsRR } from '../../../../src/providers/dns/types.js';
import { lookup } from '../../../fakes/dns-server.js';
import {
  characterStrings,
  type FakeRecord,
  type FakeSoa,
  type FakeZone,
  testZone,
} from '../../../fakes/dns-zones.js';

export interface ZoneResolver extends Pick<DnsResolver, 'resolve'> {
  asked: { name: string; type: DnsRecordType }[];
}

export const FAKE_PROVIDER = { id: 'doh-fake', name: 'Fake DoH' };

export function zoneResolver(
  zones: readonly FakeZone[],
  opts: {
    fail?: (name: string, type: DnsRecordType) => boolean;
    /** Questions answered SERVFAIL, as a validating resolver answers a bogus name. */
    servfail?: (name: string, type: DnsRecordType) => boolean;
    gate?: RoundGate;
  } = {},
): ZoneResolver {
  const asked: ZoneResolver['asked'] = [];
  return {
    asked,
    async resolve(name: string, type: DnsRecordType): Promise<ChainResult<DnsAnswer>> {
      const qname = name.toLowerCase().replace(/\.$/, '');
      asked.push({ name: qname, type });
      if (opts.gate) await opts.gate.wait();
      if (opts.fail?.(qname, type)) {
        throw upstreamFailed('dns', [
          { ...FAKE_PROVIDER, status: 'failed', error: 'timeout: no answer within 5000 ms' },
        ]);
      }
      const result = lookup(zones, qname, type);
      if (opts.servfail?.(qname, type)) result.rcode = 'SERVFAIL';
      if (result.rcode === 'REFUSED' || result.rcode === 'SERVFAIL') {
        throw upstreamFailed('dns', [
          { ...FAKE_PROVIDER, status: 'failed', error: `upstream_error: ${result.rcode}` },
        ]);
      }
      const value: DnsAnswer = {
        rcode: result.rcode,
        flags: { aa: false, tc: false, rd: true, ra: true, ad: result.ad, cd: false },
        answers: result.answers.map(toRR),
        authorities: result.authorities.map(toRR),
        ede: [],
      };
      return {
        value,
        source: FAKE_PROVIDER.name,
        source_id: FAKE_PROVIDER.id,
        providers_tried: [{ ...FAKE_PROVIDER, status: 'ok' }],
        cache: { hit: false, maxAge: 0, expiresAt: 0 },
      };
    },
  };
}

function toRR(r: FakeRecord): DnsRR {
  const base = { name: r.name.toLowerCase(), ttl: r.ttl ?? 300 };
  switch (r.type) {
    case 'A':
    case 'AAAA':
      return { ...base, type: r.type, data: { address: String(r.data) } };
    case 'CNAME':
      return { ...base, type: 'CNAME', data: { target: String(r.data).toLowerCase() } };
    case 'MX': {
      const mx = r.data as { preference: number; exchange: string };
      return {
        ...base,
        type: 'MX',
        data: { priority: mx.preference, exchange: mx.exchange === '' ? '.' : mx.exchange.toLowerCase() },
      };
    }
    case 'TXT': {
      const strings = (Array.isArray(r.data) ? r.data : [r.data]).map(String);
      return { ...base, type: 'TXT', data: { text: strings.join(''), strings } };
    }
    case 'TLSA': {
      const t = r.data as { usage: number; selector: number; matchingType: number; certificate: Buffer };
      const data = { usage: t.usage, selector: t.selector, matchingType: t.matchingType };
      return { ...base, type: 'TLSA', data: { ...data, data: t.certificate.toString('hex').toUpperCase() } };
    }
    case 'SOA':
      // The fake server's SOA record: the zone's SOA without its TTL, which is the record's.
      return { ...base, type: 'SOA', data: r.data as Omit<FakeSoa, 'ttl'> };
    default:
      throw new Error(`zoneResolver: no conversion for ${r.type}`);
  }
}

/**
 * A stand-in for netdiag's own DNSSEC validator (features/dnssec/verdicts.ts) over the same
 * zones: a zone made with `ad: true` counts as signed (its answers validate secure), any other as
 * unsigned (insecure, the chain of trust ending at its origin); `bogus` breaks the chain of the
 * zones it names, with that reason. Answers are read from the zones as the engine would read them.
 */
export function zoneValidator(
  zones: readonly FakeZone[],
  opts: { bogus?: Record<string, Reason> } = {},
): DnssecValidator & { asked: string[] } {
  const asked: string[] = [];
  return {
    available: true,
    asked,
    async verdict(name: string, type: string): Promise<DnssecVerdict> {
      const qname = name.toLowerCase().replace(/\.$/, '');
      asked.push(`${type} ${qname}`);
      const result = lookup(zones, qname, type);
      // The zone of the last name of a CNAME chain: the one whose keys would sign the answer.
      const last = String(
        result.answers.filter((r) => r.type === 'CNAME').at(-1)?.data ?? qname,
      ).toLowerCase();
      const zone = [...zones]
        .filter((z) => last === z.origin || last.endsWith(`.${z.origin}`))
        .sort((a, b) => b.origin.length - a.origin.length)[0];
      const answer: DnssecVerdict['answer'] =
        result.rcode === 'NOERROR' || result.rcode === 'NXDOMAIN'
          ? { rcode: result.rcode, records: result.answers.map(toRR) }
          : null;
      const broken = zone && opts.bogus?.[zone.origin];
      if (broken) return { status: 'bogus', reason: broken, answer };
      if (result.ad) return { status: 'secure', reason: null, answer };
      const origin = zone?.origin ?? last;
      return {
        status: 'insecure',
        reason: {
          code: 'no_ds',
          zone: origin,
          detail: `${origin} is delegated without DS: the zone is unsigned`,
        },
        answer,
      };
    },
  };
}

/** A validator on an instance that does not validate (no root hint it may ask). */
export const NOT_VALIDATING: DnssecValidator = {
  available: false,
  async verdict() {
    return {
      status: 'indeterminate',
      reason: { code: 'validator_unavailable', zone: '.', detail: 'netdiag does not validate DNSSEC here' },
      answer: null,
    };
  },
};

/**
 * Holds every DNS question until the test releases a round: all questions
 * in flight at once are answered together, like queries sent in parallel
 * whose answers arrive after one round trip. The number of rounds a lookup
 * needs is then its wall time in round trips, measured without a clock.
 */
export class RoundGate {
  #waiting: (() => void)[] = [];
  /** Rounds released so far. */
  rounds = 0;
  /** The largest number of questions answered in one round. */
  widest = 0;

  wait(): Promise<void> {
    return new Promise((resolve) => this.#waiting.push(resolve));
  }

  /** Runs `work` to completion, answering everything in flight each time nothing else can move. */
  async run<T>(work: Promise<T>): Promise<T> {
    let settled = false;
    const done = work.finally(() => {
      settled = true;
    });
    done.catch(() => {});
    for (;;) {
      // Let every continuation run, so all questions of this round are asked before it is answered.
      for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
      if (settled) return done;
      const batch = this.#waiting;
      if (batch.length === 0) throw new Error('RoundGate: work is stuck with no question in flight');
      this.#waiting = [];
      this.rounds += 1;
      this.widest = Math.max(this.widest, batch.length);
      for (const release of batch) release();
    }
  }
}

/**
 * A zone for a unit test: `[name, type, data]` rows, TXT data as plain text (split into 255-octet
 * strings); `ad` signs it, as far as the AD bit tells (every answer from it carries AD).
 */
export function makeZone(
  origin: string,
  rows: [string, string, unknown][],
  opts: { ad?: boolean } = {},
): FakeZone {
  const records = rows.map(([name, type, data]) => ({
    name,
    type,
    data: type === 'TXT' && typeof data === 'string' ? characterStrings(data) : data,
  }));
  return testZone(origin, records, { ttl: 300, ...opts });
}

/** The .test top-level zone, so lookups that leave every fixture zone end in NXDOMAIN rather than REFUSED. */
export const TLD_ZONE = makeZone('test', []);
