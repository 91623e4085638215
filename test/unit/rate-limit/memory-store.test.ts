/**
 * The in-process store's window semantics (rate-limit/store.ts) on any sequence of points
 * and pauses (fast-check, a fake clock), against the rule written out plainly: per key, a
 * window opened by a point when none is open, every point counted in it, closed `seconds`
 * after it opened. What both stores must do besides is test/conformance/rate-limit.test.ts.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MemoryStore } from '../../../src/rate-limit/memory-store.js';
import { type Counter, granted } from '../../../src/rate-limit/store.js';

const T0 = Date.parse('2026-11-24T12:00:00Z');

/** The rule, with nothing swept and nothing ordered: when each key's window opened and what it holds. */
class Model {
  readonly #windows = new Map<string, { opened: number; consumed: number }>();
  constructor(readonly windowMs: number) {}
  take(key: string, now: number): { consumed: number; msBeforeNext: number } {
    let window = this.#windows.get(key);
    if (window === undefined || now >= window.opened + this.windowMs) {
      window = { opened: now, consumed: 0 };
      this.#windows.set(key, window);
    }
    window.consumed += 1;
    return { consumed: window.consumed, msBeforeNext: window.opened + this.windowMs - now };
  }
}

const steps = fc.array(fc.record({ key: fc.constantFrom('a', 'b', 'c'), pauseMs: fc.nat({ max: 2_500 }) }), {
  maxLength: 80,
});

describe('MemoryStore', () => {
  it('counts every point, refused ones included, in a window that closes `seconds` after its first', () => {
    fc.assert(
      fc.property(steps, fc.integer({ min: 1, max: 5 }), (sequence, seconds) => {
        let now = T0;
        const counter: Counter = { name: 'c', points: 3, seconds };
        const store = new MemoryStore(() => now);
        const model = new Model(seconds * 1000);
        for (const { key, pauseMs } of sequence) {
          now += pauseMs;
          const expected = model.take(key, now);
          expect(store.take([counter], key)).toEqual([expected]);
        }
      }),
      { numRuns: 200 },
    );
  });

  it('never grants more than `points` in one window, and grants them all to a key that keeps asking', () => {
    fc.assert(
      fc.property(fc.array(fc.nat({ max: 400 }), { maxLength: 120 }), (pauses) => {
        let now = T0;
        const counter: Counter = { name: 'c', points: 4, seconds: 1 };
        const store = new MemoryStore(() => now);
        const grants = new Map<number, number>(); // window's closing time → points granted in it
        for (const pause of pauses) {
          now += pause;
          const [state] = store.take([counter], 'k');
          const closes = now + state!.msBeforeNext;
          if (granted(counter, state!)) grants.set(closes, (grants.get(closes) ?? 0) + 1);
          expect(state!.consumed <= counter.points).toBe(granted(counter, state!));
        }
        for (const count of grants.values()) expect(count).toBeLessThanOrEqual(counter.points);
      }),
    );
  });

  it('peeks at the open window without taking a point, and sees none once it has closed', async () => {
    let now = T0;
    const counter: Counter = { name: 'c', points: 2, seconds: 60 };
    const store = new MemoryStore(() => now);
    expect(await store.peek([counter], 'k')).toEqual([undefined]);
    store.take([counter], 'k');
    now += 59_999;
    expect(await store.peek([counter], 'k')).toEqual([{ consumed: 1, msBeforeNext: 1 }]);
    expect(await store.peek([counter], 'k')).toEqual([{ consumed: 1, msBeforeNext: 1 }]);
    now += 1;
    expect(await store.peek([counter], 'k')).toEqual([undefined]);
  });

  it('forgets closed windows as new points arrive, so memory follows the active keys', () => {
    let now = T0;
    const counter: Counter = { name: 'c', points: 30, seconds: 60 };
    const store = new MemoryStore(() => now);
    for (let i = 0; i < 1000; i++) store.take([counter], `198.51.100.${i % 250}/${i}`);
    expect(store.size(counter)).toBe(1000);
    now += 60_000;
    expect(store.take([counter], '203.0.113.1')).toEqual([{ consumed: 1, msBeforeNext: 60_000 }]);
    expect(store.size(counter)).toBe(1);
  });

  it('keeps counting right when the clock goes back (a test moving its clock)', () => {
    let now = T0 + 120_000;
    const counter: Counter = { name: 'c', points: 30, seconds: 60 };
    const store = new MemoryStore(() => now);
    store.take([counter], 'late');
    now = T0;
    store.take([counter], 'early');
    now = T0 + 70_000;
    // 'early' closed at T0 + 60 s although 'late', opened after it in the map, is still open.
    expect(store.take([counter], 'early')).toEqual([{ consumed: 1, msBeforeNext: 60_000 }]);
  });
});
