/**
 * The counting semaphore behind the live-probe bounds (issue 29 F2): never
 * more holders than its bound, slots handed on in arrival order, a waiter
 * that gives up leaves no trace, a release counts once.
 */
import { describe, expect, it } from 'vitest';
import { ConcurrencyLimit } from '../../../src/net/concurrency-limit.js';
import { rejectionOf } from '../../expect-error.js';

describe('F2: ConcurrencyLimit', () => {
  it('grants up to its bound at once and queues the rest', async () => {
    const limit = new ConcurrencyLimit(2);
    const first = await limit.acquire();
    await limit.acquire();
    let third = false;
    const waiting = limit.acquire().then((release) => {
      third = true;
      return release;
    });
    await Promise.resolve();
    expect({ active: limit.active, waiting: limit.waiting, third }).toEqual({
      active: 2,
      waiting: 1,
      third: false,
    });
    first();
    (await waiting)();
    expect(third).toBe(true);
    expect(limit.active).toBe(1);
  });

  it('hands slots on in arrival order', async () => {
    const limit = new ConcurrencyLimit(1);
    const held = await limit.acquire();
    const order: number[] = [];
    const waiters = [1, 2, 3].map((n) =>
      limit.acquire().then((release) => {
        order.push(n);
        release();
      }),
    );
    held();
    await Promise.all(waiters);
    expect(order).toEqual([1, 2, 3]);
    expect(limit.active).toBe(0);
  });

  it('a slot released passes to the next waiter: one arriving meanwhile cannot take it', async () => {
    const limit = new ConcurrencyLimit(1);
    const held = await limit.acquire();
    const queued = limit.acquire();
    held();
    // Arrives after the release, before the waiter has run: it must wait behind it.
    const late = limit.acquire();
    let lateGranted = false;
    void late.then(() => {
      lateGranted = true;
    });
    const release = await queued;
    await Promise.resolve();
    expect(lateGranted).toBe(false);
    release();
    (await late)();
    expect(limit.active).toBe(0);
  });

  it('a waiter whose signal aborts rejects with its reason and leaves the queue', async () => {
    const limit = new ConcurrencyLimit(1);
    const held = await limit.acquire();
    const controller = new AbortController();
    const waiting = limit.acquire(controller.signal);
    expect(limit.waiting).toBe(1);
    controller.abort(new Error('gave up'));
    expect((await rejectionOf(waiting, Error)).message).toBe('gave up');
    expect(limit.waiting).toBe(0);
    held();
    expect(limit.active).toBe(0);
  });

  it('refuses at once with a signal already aborted', async () => {
    const limit = new ConcurrencyLimit(1);
    await expect(limit.acquire(AbortSignal.abort(new Error('no')))).rejects.toThrow('no');
    expect(limit.active).toBe(0);
  });

  it('counts a release once, however often it is called', async () => {
    const limit = new ConcurrencyLimit(2);
    const release = await limit.acquire();
    await limit.acquire();
    release();
    release();
    expect(limit.active).toBe(1);
  });

  it('refuses a bound that is not a positive integer', () => {
    expect(() => new ConcurrencyLimit(0)).toThrow(RangeError);
    expect(() => new ConcurrencyLimit(1.5)).toThrow(RangeError);
  });
});
