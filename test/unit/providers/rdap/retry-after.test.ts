import { describe, expect, it } from 'vitest';
import { ProviderError } from '../../../../src/errors.js';
import { parseRetryAfter } from '../../../../src/providers/http-client.js';
import { MAX_RETRY_AFTER_SECONDS, RetryAfterGate } from '../../../../src/providers/rdap/retry-after.js';

describe('parseRetryAfter (RFC 9110 §10.2.3)', () => {
  const now = Date.parse('2024-07-29T12:00:00Z');
  it('reads delta-seconds and HTTP-dates', () => {
    expect(parseRetryAfter('120', now)).toBe(120_000);
    expect(parseRetryAfter(['7'], now)).toBe(7000);
    expect(parseRetryAfter('Mon, 29 Jul 2024 12:01:00 GMT', now)).toBe(60_000);
    expect(parseRetryAfter('Mon, 29 Jul 2024 11:00:00 GMT', now)).toBe(0);
  });
  it('ignores absent and unparseable values', () => {
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
    expect(parseRetryAfter('', now)).toBeUndefined();
    expect(parseRetryAfter('soon', now)).toBeUndefined();
  });
});

describe('RetryAfterGate', () => {
  it('refuses the same origin until the time has passed, and only that origin', () => {
    let now = 1_000_000;
    const gate = new RetryAfterGate(() => now);
    expect(gate.record('https://rdap.example:8443/domain/a.example', '30')).toBe(1_030_000);
    expect(() => gate.check('https://rdap.example:8443/domain/b.example')).toThrow(ProviderError);
    try {
      gate.check('https://rdap.example:8443/x');
    } catch (err) {
      expect((err as ProviderError).kind).toBe('rate_limited');
    }
    expect(() => gate.check('https://rdap.example/x')).not.toThrow(); // another port is another origin
    expect(() => gate.check('https://other.example/x')).not.toThrow();
    now += 29_999;
    expect(() => gate.check('https://rdap.example:8443/x')).toThrow(ProviderError);
    now += 1;
    expect(() => gate.check('https://rdap.example:8443/x')).not.toThrow();
  });

  it('does nothing without Retry-After, and caps what a server may ask for', () => {
    let now = 0;
    const gate = new RetryAfterGate(() => now);
    expect(gate.record('https://a.example/', undefined)).toBeUndefined();
    expect(() => gate.check('https://a.example/')).not.toThrow();
    gate.record('https://a.example/', String(10 * MAX_RETRY_AFTER_SECONDS));
    now = MAX_RETRY_AFTER_SECONDS * 1000;
    expect(() => gate.check('https://a.example/')).not.toThrow();
  });
});
