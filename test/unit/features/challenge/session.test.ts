import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { issueSession, SESSION_TTL_SECONDS, verifySession } from '../../../../src/session/session.js';

const SECRET = 'a-session-secret-of-at-least-32-chars!';
const T0 = Date.parse('2026-03-01T12:00:00Z');

describe('session signing', () => {
  it('round-trips: a value it issued verifies to the same session', () => {
    const { session, value } = issueSession(SECRET, T0);
    expect(session.issuedAt).toBe(T0);
    expect(session.expiresAt).toBe(T0 + 15 * 60 * 1000);
    expect(session.id).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(verifySession(SECRET, value, T0)).toEqual(session);
  });

  it('gives every session its own random id', () => {
    const ids = new Set(Array.from({ length: 50 }, () => issueSession(SECRET, T0).session.id));
    expect(ids.size).toBe(50);
  });

  it('is valid for 15 minutes and not one millisecond longer', () => {
    expect(SESSION_TTL_SECONDS).toBe(900);
    const { value } = issueSession(SECRET, T0);
    expect(verifySession(SECRET, value, T0 + 900_000 - 1)).toBeDefined();
    expect(verifySession(SECRET, value, T0 + 900_000)).toBeUndefined();
    expect(verifySession(SECRET, value, T0 + 86_400_000)).toBeUndefined();
  });

  // Issue 16: any correctly signed lifetime was accepted, a 10-year cookie included.
  it('refuses a correctly signed value whose lifetime is not one this service issues', () => {
    const sign = (payload: string) =>
      `${payload}.${createHmac('sha256', SECRET).update(payload).digest('base64url')}`;
    const id = 'AAAAAAAAAAAAAAAAAAAAAA';
    const tenYears = sign(`nd1.${T0}.${T0 + 10 * 365 * 86_400_000}.${id}`);
    expect(verifySession(SECRET, tenYears, T0 + 60_000)).toBeUndefined();
    const sixteenMinutes = sign(`nd1.${T0}.${T0 + 16 * 60_000}.${id}`);
    expect(verifySession(SECRET, sixteenMinutes, T0)).toBeUndefined();
    const backwards = sign(`nd1.${T0}.${T0 - 1}.${id}`);
    expect(verifySession(SECRET, backwards, T0 - 10)).toBeUndefined();
    // Issued an hour from now: no instance's clock is that far ahead.
    const future = sign(`nd1.${T0 + 3_600_000}.${T0 + 3_600_000 + 900_000}.${id}`);
    expect(verifySession(SECRET, future, T0)).toBeUndefined();
    // The exact format it issues is still accepted, with a minute of clock skew between instances.
    const skewed = sign(`nd1.${T0 + 30_000}.${T0 + 30_000 + 900_000}.${id}`);
    expect(verifySession(SECRET, skewed, T0)).toBeDefined();
  });

  it('refuses a value signed with another secret', () => {
    const { value } = issueSession('another-secret-that-is-32-chars-long!', T0);
    expect(verifySession(SECRET, value, T0)).toBeUndefined();
  });

  it('refuses the value altered in any single byte, at every position', () => {
    const { value } = issueSession(SECRET, T0, 'AAAAAAAAAAAAAAAAAAAAAA');
    // Every position, and for each a handful of replacements; the signature's
    // last character is the one base64url decoding would partly ignore.
    const replacements = ['A', 'B', 'Q', 'g', 'w', '0', '9', '-', '_', '.', 'z'];
    let tried = 0;
    for (let i = 0; i < value.length; i++) {
      for (const r of replacements) {
        if (value[i] === r) continue;
        const altered = value.slice(0, i) + r + value.slice(i + 1);
        expect(verifySession(SECRET, altered, T0), `position ${i} → ${r}`).toBeUndefined();
        tried++;
      }
    }
    expect(tried).toBeGreaterThan(value.length * 5);
  });

  it('refuses a signature whose last character differs only in bits base64url decoding drops', () => {
    const { value } = issueSession(SECRET, T0);
    const last = value.at(-1) ?? '';
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const index = alphabet.indexOf(last);
    // 32 bytes → 43 characters: the last one carries 4 data bits and 2 spare ones.
    const sibling = alphabet[(index & ~3) | ((index + 1) & 3)] ?? '';
    const altered = value.slice(0, -1) + sibling;
    expect(Buffer.from(altered.split('.').at(-1) ?? '', 'base64url')).toEqual(
      Buffer.from(value.split('.').at(-1) ?? '', 'base64url'),
    );
    expect(verifySession(SECRET, altered, T0)).toBeUndefined();
  });

  it('refuses truncated, extended and malformed values', () => {
    const { value } = issueSession(SECRET, T0);
    for (const bad of [
      '',
      '.',
      'nd1',
      value.slice(0, -1),
      `${value}A`,
      `${value}.x`,
      value.slice(value.indexOf('.') + 1),
      value.replace('nd1.', 'nd2.'),
      'nd1.1.2.id.sig',
    ]) {
      expect(verifySession(SECRET, bad, T0), JSON.stringify(bad)).toBeUndefined();
    }
  });

  it('refuses a value whose expiry was pushed forward, even with a forged-looking layout', () => {
    const { value } = issueSession(SECRET, T0);
    const parts = value.split('.');
    parts[2] = String(T0 + 10 * 86_400_000);
    expect(verifySession(SECRET, parts.join('.'), T0 + 900_000)).toBeUndefined();
  });
});
