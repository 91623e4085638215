/**
 * Provider contracts shared by every adapter and by the chain.
 *
 * An adapter either returns an answer (which may be a valid negative answer:
 * NXDOMAIN, an RDAP 404, an empty CT history) or throws a ProviderError for an
 * operational failure. Only the latter lets the chain move on to a fallback.
 */

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

/**
 * What one provider did with one question: answered (`ok`), answered that it
 * holds nothing for it (`no_data`: the next provider is asked, and this one
 * did not fail), or failed operationally (`failed`, with `error`).
 */
export interface ProviderAttempt {
  id: string;
  name: string;
  status: 'ok' | 'no_data' | 'failed';
  error?: string;
}

/** The attribution every provider-backed answer carries. */
export interface Attribution {
  source: string;
  source_id: string;
  providers_tried: ProviderAttempt[];
}

/**
 * Kinds of operational failure (docs/architecture.md §1). Each one lets the chain try
 * the next provider; none of them is ever cached.
 */
export type ProviderFailureKind =
  | 'timeout'
  | 'network'
  | 'tls'
  | 'http_status'
  | 'rate_limited'
  | 'bad_response'
  | 'upstream_error';

export class ProviderError extends Error {
  override readonly name = 'ProviderError';
  constructor(
    readonly kind: ProviderFailureKind,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
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

export function isProviderError(err: unknown): err is ProviderError {
  return err instanceof ProviderError;
}

/** Every adapter exposes its static facts; its query methods are its own. */
export interface Provider {
  readonly info: ProviderInfo;
}
