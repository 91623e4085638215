/**
 * Provider contracts shared by every adapter and by the chain. The failure an
 * adapter throws (ProviderError) and the attempts an answer lists
 * (ProviderAttempt) are in src/errors.ts, the error model below every layer.
 *
 * An adapter either returns an answer (which may be a valid negative answer:
 * NXDOMAIN, an RDAP 404, an empty CT history) or throws a ProviderError for an
 * operational failure. Only the latter lets the chain move on to a fallback.
 */

import type { ProviderAttempt } from '../errors.js';

export type ProviderAccess = 'none' | 'api_key';

/** What /api/providers lists for each upstream; static facts about it. */
export interface ProviderInfo {
  readonly id: string;
  readonly name: string;
  /** Capabilities this provider serves, e.g. "dns", "rdap", "ct". */
  readonly capabilities: readonly string[];
  readonly docs_url: string;
  readonly access: ProviderAccess;
  /** false when it needs a key that is not set: the chain skips it, it is never tried. */
  readonly configured: boolean;
  /** Base URL or address it talks to (shown to operators; never carries secrets). */
  readonly endpoint: string;
}

/** The attribution every provider-backed answer carries. */
export interface Attribution {
  source: string;
  source_id: string;
  providers_tried: ProviderAttempt[];
}

/**
 * Returned (never thrown) by a chain call whose provider answered but has no
 * data for the question, e.g. an address an offline database does not list.
 * Unlike a valid negative answer (NXDOMAIN, an RDAP 404), which ends the
 * chain, it passes the question on; unlike a failure, it is not held against
 * the provider.
 */
export const NO_DATA: unique symbol = Symbol('no data');
export type NoData = typeof NO_DATA;

/** Every adapter exposes its static facts; its query methods are its own. */
export interface Provider {
  readonly info: ProviderInfo;
}
