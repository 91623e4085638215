/**
 * netdiag's own DNSSEC verdict on one question, for the features that act on it: the DNSSEC
 * check and score of /api/email-security, DANE in /api/mail-tls, and the diagnosis of an answer
 * a validating resolver refused (SERVFAIL) in every mail lookup (email/mail-dns.ts). No
 * resolver's AD bit enters any of them.
 *
 * Each verdict is a validation of GET /api/dnssec's, under the same cache key
 * (dnssec.service.ts validatedQuestion), so a name validated for one feature is not validated
 * again for another or for the API within its TTLs. Within one request (RequestVerdicts) a
 * question is validated once, and the first validation runs alone: it walks the chain from the
 * root (DS and DNSKEY into the engine's infrastructure cache), so the ones after it start under
 * a warm chain instead of all walking it at once.
 */
import { AppError } from '../../errors.js';
import type { DnsRR } from '../../providers/dns/types.js';
import { type DnssecDeps, dnssecQuestion, validatedQuestion } from './dnssec.service.js';
import type { Reason, ValidationStatus } from './validate.js';

export type { Reason, ValidationStatus } from './validate.js';

export interface DnssecVerdict {
  status: ValidationStatus;
  /** bogus: the first broken link; insecure: where the chain of trust ends; indeterminate: why none was reached. */
  reason: Reason | null;
  /** The answer as the authoritative servers serve it, read by netdiag's engine; null when it could not be read. */
  answer: { rcode: 'NOERROR' | 'NXDOMAIN'; records: DnsRR[] } | null;
}

/** The verdict's code when netdiag cannot validate at all here (no root hint it may ask). */
export const VALIDATOR_UNAVAILABLE = 'validator_unavailable';

export interface DnssecValidator {
  /**
   * false: outbound safety refuses every root hint (DNS_ROOT_HINTS), so nothing can be validated
   * on this instance; every verdict is then indeterminate (`validator_unavailable`), at once.
   */
  readonly available: boolean;
  verdict(name: string, type: string, signal?: AbortSignal): Promise<DnssecVerdict>;
}

const UNAVAILABLE: DnssecVerdict = {
  status: 'indeterminate',
  reason: {
    code: VALIDATOR_UNAVAILABLE,
    zone: '.',
    detail:
      'netdiag does not validate DNSSEC on this instance: none of its root hints (DNS_ROOT_HINTS) may be asked',
  },
  answer: null,
};

/** The app's validator: the engine and the trust anchors of the context, through /api/dnssec's cache. */
export function dnssecValidator(deps: DnssecDeps): DnssecValidator {
  const available = deps.dnsEngine.usable;
  return {
    available,
    async verdict(name, type, signal) {
      if (!available) return UNAVAILABLE;
      let question: { name: string; type: string };
      try {
        question = dnssecQuestion(name, type);
      } catch (err) {
        if (!(err instanceof AppError)) throw err;
        return {
          status: 'indeterminate',
          reason: { code: 'invalid_name', zone: name, detail: `${name} cannot be asked: ${err.message}` },
          answer: null,
        };
      }
      return (await validatedQuestion(deps, question, signal)).value.verdict;
    },
  };
}

/** What a request has validated: each question once, the first alone (see the header). */
export class RequestVerdicts {
  readonly #validator: DnssecValidator;
  readonly #signal: AbortSignal | undefined;
  readonly #asked = new Map<string, Promise<DnssecVerdict>>();
  #first: Promise<unknown> | undefined;

  constructor(validator: DnssecValidator, signal?: AbortSignal) {
    this.#validator = validator;
    this.#signal = signal;
  }

  get available(): boolean {
    return this.#validator.available;
  }

  verdict(name: string, type: string): Promise<DnssecVerdict> {
    const key = `${type.toUpperCase()}:${name.toLowerCase().replace(/\.$/, '')}`;
    const known = this.#asked.get(key);
    if (known) return known;
    const first = this.#first;
    const pending = (async () => {
      if (first) await first.catch(() => undefined);
      return this.#validator.verdict(name, type, this.#signal);
    })();
    this.#first ??= pending;
    this.#asked.set(key, pending);
    return pending;
  }
}

const RANK: Record<ValidationStatus, number> = { secure: 0, insecure: 1, indeterminate: 2, bogus: 3 };

/** The worse of two verdicts (bogus, then indeterminate, then insecure), the first on a tie. */
export function worseVerdict<V extends { status: ValidationStatus }>(a: V, b: V): V {
  return RANK[b.status] > RANK[a.status] ? b : a;
}

/** "the chain of trust is broken at example.com (signature_expired: ...)", for findings. */
export function describeReason(reason: Reason | null): string {
  if (!reason) return '';
  return `${reason.zone} (${reason.code}: ${reason.detail})`;
}
