/**
 * The two ways a connection to a user-named target ends early.
 *
 * UnsafeTargetError (400): the destination is refused before any connection
 * is attempted (non-public address, port, scheme, no address at all). It is
 * an AppError, so the error handler renders it as `{error, code: 'bad_request'}`;
 * `reason` is the machine-readable cause for callers and tests.
 *
 * TargetError: the destination was acceptable but talking to it failed
 * (refused, timed out, TLS handshake failed, malformed HTTP). It is a
 * ProviderError so a service can report it as a 502 naming the stage.
 */
import { AppError, ProviderError, type ProviderFailureKind } from '../errors.js';

export type UnsafeTargetReason =
  /** An address outside public space and outside UNSAFE_ALLOW_TARGET_CIDRS. */
  | 'not_public'
  /** NXDOMAIN, or a name without A/AAAA records. */
  | 'no_address'
  /** Not a name and not a valid IP literal. */
  | 'invalid_host'
  | 'port'
  | 'scheme'
  /** A URL carrying user:password. */
  | 'credentials';

export class UnsafeTargetError extends AppError {
  readonly reason: UnsafeTargetReason;
  /** The refused address and its class, for `not_public`. */
  readonly address: string | undefined;
  readonly range: string | undefined;

  constructor(
    reason: UnsafeTargetReason,
    message: string,
    opts: { address?: string; range?: string; cause?: unknown } = {},
  ) {
    super(400, 'bad_request', message, { cause: opts.cause });
    this.reason = reason;
    this.address = opts.address;
    this.range = opts.range;
  }
}

/** Where a connection attempt stood when it failed. */
export type TargetStage =
  | 'dns'
  | 'connect'
  /** A plaintext conversation before TLS (SMTP's banner, EHLO and STARTTLS). */
  | 'starttls'
  | 'tls handshake'
  | 'request'
  | 'response headers'
  | 'response body';

export class TargetError extends ProviderError {
  readonly stage: TargetStage;

  constructor(
    kind: ProviderFailureKind,
    stage: TargetStage,
    message: string,
    opts: { cause?: unknown } = {},
  ) {
    super(kind, message, opts);
    this.stage = stage;
  }
}
