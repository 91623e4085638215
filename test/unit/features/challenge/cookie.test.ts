import { describe, expect, it } from 'vitest';
import {
  cookieValues,
  SESSION_COOKIE,
  sessionFromCookies,
  sessionSetCookie,
} from '../../../../src/session/cookie.js';
import { issueSession } from '../../../../src/session/session.js';

const SECRET = 'a-session-secret-of-at-least-32-chars!';
const T0 = Date.parse('2026-03-01T12:00:00Z');

describe('session cookie', () => {
  it('reads every value of a name from a Cookie header, quoted or not', () => {
    expect(cookieValues(undefined, 'a')).toEqual([]);
    expect(cookieValues('a=1; b=2; a="3"; ab=4;c', 'a')).toEqual(['1', '3']);
    expect(cookieValues('b=2', 'a')).toEqual([]);
  });

  it('writes HttpOnly, SameSite=Lax, Path=/, Max-Age=900, and Secure only when asked', () => {
    const plain = sessionSetCookie('v', false);
    expect(plain).toBe(`${SESSION_COOKIE}=v; Max-Age=900; Path=/; HttpOnly; SameSite=Lax`);
    expect(sessionSetCookie('v', true)).toBe(`${plain}; Secure`);
  });

  it('finds the valid session among several cookies of the same name', () => {
    const { session, value } = issueSession(SECRET, T0);
    const stale = issueSession(SECRET, T0 - 3_600_000).value;
    const header = `other=x; ${SESSION_COOKIE}=${stale}; ${SESSION_COOKIE}=${value}`;
    expect(sessionFromCookies(header, SECRET, T0)).toEqual(session);
    expect(sessionFromCookies(`${SESSION_COOKIE}=${stale}`, SECRET, T0)).toBeUndefined();
    expect(sessionFromCookies(undefined, SECRET, T0)).toBeUndefined();
  });
});
