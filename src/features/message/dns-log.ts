/**
 * The one DNS path of a message's analysis: every question (DKIM and ARC keys,
 * SPF's check_host, the DMARC tree walk) goes through this recorder on the
 * configured resolvers, so the answer can list each lookup it made and no
 * message can ask more than MAX_MESSAGE_LOOKUPS of them. Past the bound a
 * question fails as a resolver failure would (the verdicts that needed it are
 * temperror), and the answer says so.
 */
import { AppError } from '../../errors.js';
import type { DnsResolver } from '../../providers/dns/resolver.js';
import type { DnsRecordType } from '../../providers/dns/types.js';

/**
 * Ten signatures' keys, a sealed chain's keys, SPF's ten lookups with their voids and the
 * DMARC tree walk's eight: a message that needs more is built to make us ask.
 */
export const MAX_MESSAGE_LOOKUPS = 64;

export interface DnsLookup {
  name: string;
  type: string;
  result: 'answer' | 'nxdomain' | 'nodata' | 'error';
  purpose: string;
}

/** What a question is for, told from its name (RFC 6376 §3.6.2.1, RFC 7489 §6.1; SPF otherwise). */
function purposeOf(name: string): string {
  if (/\._domainkey\./i.test(name)) return 'dkim/arc key';
  if (/^_dmarc\./i.test(name)) return 'dmarc';
  return 'spf';
}

export class DnsLog {
  readonly lookups: DnsLookup[] = [];
  #exhausted = false;

  constructor(private readonly dns: Pick<DnsResolver, 'resolve'>) {}

  /** True once a question was refused for the bound. */
  get exhausted(): boolean {
    return this.#exhausted;
  }

  /** The resolver every part of the analysis asks through. */
  readonly resolver: Pick<DnsResolver, 'resolve'> = {
    resolve: async (name, type, opts) => {
      const entry: DnsLookup = {
        name: name.replace(/\.$/, '').toLowerCase(),
        type,
        result: 'error',
        purpose: purposeOf(name),
      };
      if (this.lookups.length >= MAX_MESSAGE_LOOKUPS) {
        this.#exhausted = true;
        throw new AppError(
          502,
          'upstream_failed',
          `not asked: this message's analysis may make ${MAX_MESSAGE_LOOKUPS} DNS lookups, and has`,
          { providersTried: [] },
        );
      }
      this.lookups.push(entry);
      const result = await this.dns.resolve(name, type as DnsRecordType, opts);
      const answer = result.value;
      entry.result =
        answer.rcode === 'NXDOMAIN'
          ? 'nxdomain'
          : answer.answers.some((rr) => rr.type === type)
            ? 'answer'
            : 'nodata';
      return result;
    },
  };
}
