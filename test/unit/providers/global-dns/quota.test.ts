/**
 * Globalping's quota as its create answers report it (headers as
 * jsdelivr/globalping rate-limiter-post.ts sets them), on a virtual clock.
 */

import { describe, expect, it } from 'vitest';
import { formatDateTime } from '../../../../src/client/words.js';
import { GlobalpingQuota } from '../../../../src/providers/global-dns/quota.js';

const START = Date.UTC(2025, 0, 1, 12);

function quota(authenticated = false) {
  let now = START;
  const q = new GlobalpingQuota({ clock: () => now, authenticated });
  return { q, advance: (ms: number) => (now += ms) };
}

/** The headers of a create answer: X-RateLimit-Reset is seconds to the window's end. */
const limits = (
  remaining: number,
  resetSeconds: number,
  limit = 250,
  extra: Record<string, string> = {},
) => ({
  'x-ratelimit-limit': String(limit),
  'x-ratelimit-consumed': '10',
  'x-ratelimit-remaining': String(remaining),
  'x-ratelimit-reset': String(resetSeconds),
  'x-request-cost': '10',
  ...extra,
});

describe('Globalping quota', () => {
  it('knows nothing before the first answer: no refusal, nothing listed', () => {
    const { q } = quota();
    expect(q.refusal(10)).toBeUndefined();
    expect(q.listing()).toBeUndefined();
  });

  it('lists the last answer: limit, remaining, reset as a date, when it was observed', () => {
    const { q } = quota();
    expect(q.observe(202, limits(240, 3600), 10)).toBe(false);
    expect(q.listing()).toEqual({
      limit: 250,
      remaining: 240,
      reset_at: new Date(START + 3_600_000).toISOString(),
      observed_at: new Date(START).toISOString(),
    });
    expect(q.refusal(10)).toBeUndefined();
  });

  it('a 429 refuses until the reset, with Retry-After counting down to it, then lets the next one through', () => {
    const { q, advance } = quota();
    expect(q.observe(429, limits(0, 1800), 10)).toBe(true);
    expect(q.refusal(10)).toEqual({
      resetAt: START + 1_800_000,
      retryAfterSeconds: 1800,
      reason: `0 of 250 tests left this hour, a measurement needs 10; resets at ${formatDateTime(new Date(START + 1_800_000))}`,
    });
    advance(1_799_500);
    expect(q.refusal(10)?.retryAfterSeconds).toBe(1);
    advance(500);
    expect(q.refusal(10)).toBeUndefined();
    // A new window: nothing spent in it yet.
    expect(q.listing()).toMatchObject({ limit: 250, remaining: 250, reset_at: null });
  });

  it('without a token, fewer tests left than a measurement needs is a certain refusal (Globalping prechecks)', () => {
    const { q } = quota();
    expect(q.observe(202, limits(5, 600), 10)).toBe(true);
    expect(q.refusal(10)?.reason).toMatch(/^5 of 250 tests left this hour, a measurement needs 10;/);
    // A smaller measurement would still fit.
    expect(q.refusal(5)).toBeUndefined();
  });

  it('with a token, a shortfall may be paid in credits: only a 429 refuses, and it names the credits left', () => {
    const { q } = quota(true);
    expect(q.observe(202, limits(5, 600, 500), 10)).toBe(false);
    expect(q.refusal(10)).toBeUndefined();
    q.observe(429, limits(5, 590, 500, { 'x-credits-consumed': '0', 'x-credits-remaining': '0' }), 10);
    expect(q.refusal(10)?.reason).toMatch(
      /^5 of 500 tests left this hour, 0 credits left, a measurement needs 10;/,
    );
  });

  it('says the quota became spent once, not again while it stays spent', () => {
    const { q, advance } = quota();
    expect(q.observe(202, limits(5, 600), 10)).toBe(true);
    expect(q.observe(429, limits(5, 590), 10)).toBe(false);
    advance(600_000);
    expect(q.observe(429, limits(0, 3600), 10)).toBe(true);
  });

  it('ignores an answer without the headers, or with unreadable ones (not Globalping’s limiter speaking)', () => {
    const { q } = quota();
    expect(q.observe(429, { 'retry-after': '1' }, 10)).toBe(false);
    expect(q.observe(429, limits(0, 3600, 250, { 'x-ratelimit-reset': 'soon' }), 10)).toBe(false);
    expect(q.observe(429, { ...limits(0, 60), 'x-ratelimit-remaining': '-1' }, 10)).toBe(false);
    expect(q.refusal(10)).toBeUndefined();
    expect(q.listing()).toBeUndefined();
  });
});
