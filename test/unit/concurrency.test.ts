import { describe, expect, it } from 'vitest';
import { mapConcurrent } from '../../src/concurrency.js';

describe('mapConcurrent', () => {
  it('never has more than `limit` calls in flight, and keeps input order', async () => {
    let inFlight = 0;
    let peak = 0;
    const results = await mapConcurrent([...Array(40).keys()], 7, async (n) => {
      inFlight++;
      peak = Math.max(peak, inFlight);
      await new Promise((r) => setTimeout(r, (n * 7) % 5));
      inFlight--;
      return n * 2;
    });
    expect(peak).toBe(7);
    expect(results).toEqual([...Array(40).keys()].map((n) => n * 2));
  });

  it('rejects with the first failure and starts nothing after it', async () => {
    const started: number[] = [];
    await expect(
      mapConcurrent([0, 1, 2, 3, 4, 5], 1, async (n) => {
        started.push(n);
        if (n === 2) throw new Error('boom');
        return n;
      }),
    ).rejects.toThrow('boom');
    expect(started).toEqual([0, 1, 2]);
  });

  it('handles an empty list', async () => {
    expect(await mapConcurrent([], 16, async () => 1)).toEqual([]);
  });
});
