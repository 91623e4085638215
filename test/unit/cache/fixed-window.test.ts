/**
 * The in-process budget answers as rate-limiter-flexible's RateLimiterMemory does (the
 * library it stands in for on the hot path): the same points and the same time to the
 * window's end, for any sequence of requests and pauses (fast-check, fake clock).
 */
import fc from 'fast-check';
import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { FixedWindowCounter } from '../../../src/cache/limiter.js';

describe('FixedWindowCounter', () => {
  beforeEach(() => {
    vi.useFakeTimers();
    vi.setSystemTime(Date.parse('2026-11-24T12:00:00Z'));
  });
  afterEach(() => vi.useRealTimers());

  it('counts like RateLimiterMemory, refused points included, for any sequence', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ key: fc.constantFrom('a', 'b', 'c'), pauseMs: fc.nat({ max: 2_500 }) }), {
          maxLength: 60,
        }),
        async (steps) => {
          const points = 5;
          const seconds = 3;
          const library = new RateLimiterMemory({ points, duration: seconds });
          const ours = new FixedWindowCounter(seconds);
          for (const { key, pauseMs } of steps) {
            await vi.advanceTimersByTimeAsync(pauseMs);
            const res = await library.consume(key).catch((rejection: unknown) => {
              if (rejection instanceof RateLimiterRes) return rejection;
              throw rejection;
            });
            const state = ours.consume(key);
            expect(state.consumed).toBe(res.consumedPoints);
            expect(state.msBeforeNext).toBe(res.msBeforeNext);
            const peeked = await library.get(key);
            expect(ours.peek(key)?.consumed).toBe(peeked?.consumedPoints);
          }
        },
      ),
      { numRuns: 60 },
    );
  });

  it('forgets closed windows as new points arrive, so memory follows the active keys', () => {
    const counter = new FixedWindowCounter(60);
    const t0 = Date.now();
    for (let i = 0; i < 1000; i++) counter.consume(`198.51.100.${i % 250}/${i}`, t0);
    expect(counter.size).toBe(1000);
    expect(counter.consume('203.0.113.1', t0 + 60_000)).toEqual({ consumed: 1, msBeforeNext: 60_000 });
    expect(counter.size).toBe(1);
    expect(counter.peek('198.51.100.1/1', t0 + 60_000)).toBeUndefined();
  });
});
