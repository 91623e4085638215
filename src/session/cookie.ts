/**
 * The session cookie on the wire: reading it from a Cookie header and writing
 * its Set-Cookie line (RFC 6265). Small enough not to need a cookie plugin,
 * and kept pure so the gate and the routes share one reading of it.
 */
import { SESSION_TTL_SECONDS, type Session, verifySession } from './session.js';

export const SESSION_COOKIE = 'nd_session';

/** Every value the header carries for `name` (a browser may send two with different paths). */
export function cookieValues(header: string | undefined, name: string): string[] {
  if (!header) return [];
  const values: string[] = [];
  for (const pair of header.split(';')) {
    const eq = pair.indexOf('=');
    if (eq < 0 || pair.slice(0, eq).trim() !== name) continue;
    let value = pair.slice(eq + 1).trim();
    // RFC 6265 §4.1.1 allows the value in double quotes.
    if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) value = value.slice(1, -1);
    values.push(value);
  }
  return values;
}

/** The valid session the request's cookies carry, if any. */
export function sessionFromCookies(
  header: string | undefined,
  secret: string,
  now: number,
): Session | undefined {
  for (const value of cookieValues(header, SESSION_COOKIE)) {
    const session = verifySession(secret, value, now);
    if (session) return session;
  }
  return undefined;
}

/**
 * HttpOnly: page scripts never see it. SameSite=Lax: not sent on cross-site
 * subrequests, so another site cannot spend a visitor's session. Secure only
 * when the request arrived over HTTPS, or a plain-HTTP deployment (a lab, a
 * test) would get a cookie the browser never sends back.
 */
export function sessionSetCookie(value: string, secure: boolean): string {
  const attributes = [
    `${SESSION_COOKIE}=${value}`,
    `Max-Age=${SESSION_TTL_SECONDS}`,
    'Path=/',
    'HttpOnly',
    'SameSite=Lax',
  ];
  if (secure) attributes.push('Secure');
  return attributes.join('; ');
}
