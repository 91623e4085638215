/**
 * The aggregator's budget on the app's clock: bursts up to the limit, never
 * more than the limit in any span of one period (the property rdap.org's
 * sliding count needs), and a refusal spends nothing.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AggregatorBudget } from '../../../../src/providers/rdap/aggregator-budget.js';

const T0 = Date.parse('2026-11-24T12:00:00Z');

function budget(points = 10, seconds = 10) {
  const clock = { now: T0 };
  const b = new AggregatorBudget({ spec: { points, seconds }, clock: () => clock.now, id: 'test' });
  return { b, clock };
}

describe('AggregatorBudget', () => {
  it('grants a burst up to the limit, then refuses until the full window closes', async () => {
    const { b, clock } = budget();
    for (let i = 0; i < 10; i++) expect(await b.take()).toBeUndefined();
    expect(await b.take()).toBe(T0 + 20_000);
    clock.now = T0 + 19_999;
    expect(await b.take()).toBe(T0 + 20_000);
    clock.now = T0 + 20_000;
    expect(await b.take()).toBeUndefined();
  });

  it('never grants more than the limit in any span of one period, and about half of it under sustained load', async () => {
    const { b, clock } = budget();
    const granted: number[] = [];
    // A request every 250 ms for two minutes, arrivals drifting across every window edge.
    for (let t = T0 + 3_333; t < T0 + 123_333; t += 250) {
      clock.now = t;
      if ((await b.take()) === undefined) granted.push(t);
    }
    for (const at of granted) {
      expect(granted.filter((g) => g > at - 10_000 && g <= at).length).toBeLessThanOrEqual(10);
    }
    expect(granted.length).toBeGreaterThanOrEqual(60);
  });

  it('a refusal spends nothing: after refusals in one window, the next grants the full limit', async () => {
    const { b, clock } = budget();
    for (let i = 0; i < 10; i++) await b.take();
    // The second series' next window opens at +10 s; refusals in it hand back what they took.
    clock.now = T0 + 10_000;
    for (let i = 0; i < 50; i++) expect(await b.take()).toBe(T0 + 20_000);
    clock.now = T0 + 20_000;
    for (let i = 0; i < 10; i++) expect(await b.take()).toBeUndefined();
    expect(await b.take()).toBe(T0 + 40_000);
  });

  it('grants exactly when both windows have room, and names when the full ones close, for any arrivals', async () => {
    // The rule written out: a request is granted when both of its windows hold fewer than
    // the limit, and then counted in both; a refusal changes nothing that matters.
    await fc.assert(
      fc.asyncProperty(fc.array(fc.nat({ max: 3_000 }), { maxLength: 120 }), async (pauses) => {
        const { b, clock } = budget(4, 5);
        const counts = new Map<string, number>();
        for (const pause of pauses) {
          clock.now += pause;
          const windows = [0, 5_000].map((offset, series) => {
            const index = Math.floor((clock.now - offset) / 10_000);
            return { key: `${series}:${index}`, end: index * 10_000 + offset + 10_000 };
          });
          const full = windows.filter((w) => (counts.get(w.key) ?? 0) >= 4);
          const expected = full.length === 0 ? undefined : Math.max(...full.map((w) => w.end));
          if (expected === undefined)
            for (const w of windows) counts.set(w.key, (counts.get(w.key) ?? 0) + 1);
          expect(await b.take()).toBe(expected);
        }
      }),
      { numRuns: 200 },
    );
  });
});
