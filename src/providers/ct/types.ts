/**
 * Certificate-transparency shapes shared by the adapters (crt.sh, Cert
 * Spotter) and the CT lookups. Every adapter maps its vendor rows onto
 * CtIssuance; the lookups filter, merge, sort and cap them.
 *
 * Values are plain JSON so the provider chain can cache them in memory or
 * Redis unchanged.
 */
import type { Provider } from '../types.js';

export interface CtIssuer {
  /** The issuing CA's common name (CN), or its whole distinguished name when it has no CN. */
  name: string;
  /** The issuer's organization (O), when its name carries one. */
  organization: string | null;
}

/** One certificate issuance, as one provider reported it. */
export interface CtIssuance {
  /** The provider's own id for the record (crt.sh certificate id, Cert Spotter issuance id). */
  id: string;
  /** Id of the provider the record came from ("crtsh", "certspotter"). */
  source_id: string;
  /** Serial number, lower-case hex without separators; null when the provider does not give it. */
  serial: string | null;
  issuer: CtIssuer;
  /** Subject common name; null when the provider does not give it. */
  common_name: string | null;
  /** DNS names the provider listed for it: lower-case A-labels, `*.` kept on wildcard names, sorted. */
  dns_names: string[];
  /** ISO 8601 UTC. */
  not_before: string;
  /** ISO 8601 UTC. */
  not_after: string;
  /** When the provider first saw it logged (ISO 8601 UTC), where it says. */
  entry_timestamp?: string;
  /** Present only when the provider reports revocation status. */
  revoked?: boolean;
}

/**
 * Why a provider's records are not the domain's whole CT history:
 * - `result_cap`: the provider stopped at its own result limit and returned an
 *   arbitrary subset of the matches (crt.sh's 10 000 matching names);
 * - `page_cap`: we stopped paging before the provider's last page (Cert Spotter);
 * - `expired_excluded`: the full history failed in time, so only unexpired
 *   certificates were asked for (crt.sh with `exclude=expired`);
 * - `unexpired_only`: the provider lists unexpired certificates only (Cert Spotter).
 */
export type CtGapReason = 'result_cap' | 'page_cap' | 'expired_excluded' | 'unexpired_only';

export interface CtGap {
  reason: CtGapReason;
  /** One sentence for the reader of the answer, naming the provider and its limit. */
  detail: string;
}

/** What one adapter call returns: its records and how complete they are. */
export interface CtRecords {
  /** May hold several records of one issuance (precertificate and certificate): the lookup merges them. */
  issuances: CtIssuance[];
  /** Empty when the records are the provider's whole history for the domain. */
  gaps: CtGap[];
}

/** A CT search provider: issuances for a domain and every name below it. */
export interface CtProvider extends Provider {
  /**
   * Resolves with the history (possibly empty: an answer, not a failure);
   * throws a ProviderError for every operational failure. `domain` is
   * already normalized (lower-case A-labels, no trailing dot).
   */
  issuances(domain: string, signal: AbortSignal): Promise<CtRecords>;
}
