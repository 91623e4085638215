/**
 * The lookup session (docs/architecture.md §5): a self-verifying value, so any
 * instance holding SESSION_SECRET can check it without shared state.
 *
 *   nd1.<issued ms>.<expires ms>.<id>.<signature>
 *
 * `id` is 128 random bits (base64url) that make every session distinct;
 * `signature` is base64url(HMAC-SHA256(secret, everything before it)).
 * Pure: no I/O, time and randomness come from the caller.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** Lifetime of a session (contract §8: 15 minutes). */
export const SESSION_TTL_SECONDS = 15 * 60;

const VERSION = 'nd1';
const ID_BYTES = 16;
// 16 bytes → 22 base64url characters, no padding.
const ID_PATTERN = /^[A-Za-z0-9_-]{22}$/;
// Epoch milliseconds, canonical (no leading zero, no sign), at most 15 digits.
const MS_PATTERN = /^(0|[1-9]\d{0,14})$/;

export interface Session {
  id: string;
  /** Epoch milliseconds. */
  issuedAt: number;
  /** Epoch milliseconds; the session is valid strictly before this instant. */
  expiresAt: number;
}

function sign(secret: string, payload: string): string {
  return createHmac('sha256', secret).update(payload).digest('base64url');
}

/** A new session starting at `now`, and the signed value to put in the cookie. */
export function issueSession(
  secret: string,
  now: number,
  id: string = randomBytes(ID_BYTES).toString('base64url'),
): { session: Session; value: string } {
  const session: Session = { id, issuedAt: now, expiresAt: now + SESSION_TTL_SECONDS * 1000 };
  const payload = `${VERSION}.${session.issuedAt}.${session.expiresAt}.${session.id}`;
  return { session, value: `${payload}.${sign(secret, payload)}` };
}

/** Clock difference tolerated between instances that share SESSION_SECRET. */
const CLOCK_SKEW_MS = 60_000;

/**
 * The session a cookie value carries, or undefined when it is malformed,
 * signed with another secret, altered in any byte, expired at `now`, or
 * claiming a lifetime this service never issues (longer than 15 minutes, or
 * starting in the future): a signature proves who made a value, not that its
 * terms are ours, so a leaked secret or a format change cannot mint long sessions.
 */
export function verifySession(secret: string, value: string, now: number): Session | undefined {
  const cut = value.lastIndexOf('.');
  if (cut < 0) return undefined;
  const payload = value.slice(0, cut);
  const given = Buffer.from(value.slice(cut + 1), 'utf8');
  const expected = Buffer.from(sign(secret, payload), 'utf8');
  // The encoded strings are compared, not the decoded bytes: base64url decoding
  // ignores the spare low bits of the last character, so two different
  // strings can decode to the same MAC and a one-byte alteration would pass.
  // Lengths are public (a MAC is always 43 characters); contents are compared
  // in constant time so the comparison leaks nothing about the expected MAC.
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;

  // Only a value we signed gets this far; the checks below guard against our own format drift.
  const [version, issued, expires, id, ...rest] = payload.split('.');
  if (rest.length > 0 || version !== VERSION || id === undefined || !ID_PATTERN.test(id)) return undefined;
  if (issued === undefined || expires === undefined || !MS_PATTERN.test(issued) || !MS_PATTERN.test(expires))
    return undefined;
  const session: Session = { id, issuedAt: Number(issued), expiresAt: Number(expires) };
  if (!(now < session.expiresAt)) return undefined;
  const lifetime = session.expiresAt - session.issuedAt;
  if (lifetime <= 0 || lifetime > SESSION_TTL_SECONDS * 1000) return undefined;
  if (session.issuedAt > now + CLOCK_SKEW_MS) return undefined;
  return session;
}
