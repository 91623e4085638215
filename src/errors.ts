/**
 * The one error model. Code throws AppError (or a ProviderError that the chain
 * turns into an AppError); the error-handler plugin renders every one of them
 * as JSON `{error, code?, providers_tried?}` with `Cache-Control: no-store`.
 * Tests assert on `code`, never on message text.
 *
 * It imports nothing of the service's own: net/ (whose TargetError is a
 * ProviderError) and providers/ both stand on it (test/unit/architecture.test.ts).
 */

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

export function isProviderError(err: unknown): err is ProviderError {
  return err instanceof ProviderError;
}

/** Every `code` an error body carries on the wire: ErrorBody and AppError take nothing else. */
export type ErrorCode =
  | 'bad_request'
  | 'not_found'
  | 'method_not_allowed'
  | 'expectation_failed'
  | 'not_registered'
  | 'no_rdap_service'
  | 'challenge_required'
  | 'challenge_failed'
  | 'rate_limited'
  | 'too_many_connections'
  | 'upstream_failed'
  | 'unavailable'
  | 'internal';

export interface ErrorBody {
  error: string;
  code?: ErrorCode;
  providers_tried?: ProviderAttempt[];
}

export class AppError extends Error {
  override readonly name = 'AppError';
  readonly statusCode: number;
  readonly code: ErrorCode;
  /** Extra response headers, e.g. Retry-After. */
  readonly headers: Readonly<Record<string, string>>;
  readonly providersTried: ProviderAttempt[] | undefined;
  /** Whether `code` is part of the public body (the contract names it for some errors only). */
  readonly exposeCode: boolean;

  constructor(
    statusCode: number,
    code: ErrorCode,
    message: string,
    opts: {
      headers?: Record<string, string>;
      providersTried?: ProviderAttempt[];
      exposeCode?: boolean;
      cause?: unknown;
    } = {},
  ) {
    super(message, { cause: opts.cause });
    this.statusCode = statusCode;
    this.code = code;
    this.headers = opts.headers ?? {};
    this.providersTried = opts.providersTried;
    this.exposeCode = opts.exposeCode ?? true;
  }

  toBody(): ErrorBody {
    const body: ErrorBody = { error: this.message };
    if (this.exposeCode) body.code = this.code;
    if (this.providersTried) body.providers_tried = this.providersTried;
    return body;
  }
}

/** 400 naming the parameter and why: `badInput('target', 'must be a domain name')`. */
export function badInput(param: string, why: string): AppError {
  return new AppError(400, 'bad_request', `${param} ${why}`);
}

export function upstreamFailed(what: string, providersTried: ProviderAttempt[]): AppError {
  return new AppError(502, 'upstream_failed', `${what}: every provider failed`, { providersTried });
}

/**
 * Whether `err` is upstreamFailed's answer (or another 502 `upstream_failed`): every provider
 * failed, a state of the world a caller may turn into its own outcome. Told by its code.
 */
export function isUpstreamFailed(err: unknown): err is AppError {
  return err instanceof AppError && err.code === 'upstream_failed';
}

/** Every provider asked answered that it holds nothing for this question: not a failure, not an answer. */
export function noProviderData(what: string, providersTried: ProviderAttempt[]): AppError {
  return new AppError(404, 'not_found', `${what}: no provider has data for this`, { providersTried });
}

/** A spent budget: `group`, and what it counts (`detail`) when the caller should be told. */
export function tooManyRequests(retryAfterSeconds: number, group: string, detail?: string): AppError {
  return new AppError(
    429,
    'rate_limited',
    `rate limit exceeded (${group}${detail ? `: ${detail}` : ''}); retry after ${retryAfterSeconds} s`,
    {
      headers: { 'retry-after': String(retryAfterSeconds) },
    },
  );
}

/**
 * Whether `err` is a state of the world a part of a multi-part answer may report as its
 * own failure: an AppError (an answer the service chose: a refusal, a 502 with
 * providers_tried) or a ProviderError (an upstream's operational failure). Anything else
 * is a bug: the part rethrows it, so it becomes the request's logged, counted 500 and
 * its text never reaches the client (docs/architecture.md §6).
 */
export function isOperational(err: unknown): err is AppError | ProviderError {
  return err instanceof AppError || err instanceof ProviderError;
}
