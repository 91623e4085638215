/**
 * The aggregator's budget on the app's clock: bursts up to the limit, never
 * more than the limit in any span of one period (the property rdap.org's
 * sliding count needs), and a refusal spends nothing.
 */
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
});
