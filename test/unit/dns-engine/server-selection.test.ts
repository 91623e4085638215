/**
 * Server choice by smoothed round-trip time (src/dns-engine/server-selection.ts),
 * unbound's estimator: unknown servers at 376 ms, backoff on loss, a 400 ms band.
 */
import { describe, expect, it } from 'vitest';
import { ServerSelection, UNKNOWN_SERVER_NICENESS_MS } from '../../../src/dns-engine/server-selection.js';

const keepOrder = () => 0.999_999;

describe('ServerSelection', () => {
  it('starts every server at the unknown niceness and learns from answers', () => {
    const s = new ServerSelection({ random: keepOrder });
    expect(s.timeoutMs('192.0.2.1')).toBe(UNKNOWN_SERVER_NICENESS_MS);
    for (let i = 0; i < 20; i++) s.answered('192.0.2.1', 10);
    expect(s.timeoutMs('192.0.2.1')).toBeLessThan(100);
    expect(s.order(['192.0.2.2', '192.0.2.1'])).toEqual(['192.0.2.1', '192.0.2.2']);
    // An unknown server is within the band of a fast one: it is sometimes asked first (explored).
    const exploring = new ServerSelection({ random: () => 0 });
    for (let i = 0; i < 20; i++) exploring.answered('192.0.2.1', 10);
    expect(exploring.order(['192.0.2.2', '192.0.2.1'])).toEqual(['192.0.2.2', '192.0.2.1']);
  });

  it('backs a silent server off out of the band, behind slower servers that answer', () => {
    const s = new ServerSelection({ random: () => 0 });
    s.answered('192.0.2.2', 150);
    s.lost('192.0.2.1', UNKNOWN_SERVER_NICENESS_MS, 1000);
    expect(s.timeoutMs('192.0.2.1')).toBe(2000);
    // With a random that would swap any two in the band, the silent one is still last.
    expect(s.order(['192.0.2.1', '192.0.2.2'])).toEqual(['192.0.2.2', '192.0.2.1']);
  });

  it('puts an address family without a route last after one failure', () => {
    const s = new ServerSelection({ random: keepOrder });
    s.unreachable('2001:db8::1', 'ENETUNREACH');
    expect(s.order(['2001:db8::2', '2001:db8::3', '192.0.2.1'])).toEqual([
      '192.0.2.1',
      '2001:db8::2',
      '2001:db8::3',
    ]);
    // A closed port is that server's own trouble, not its family's.
    s.unreachable('192.0.2.9', 'ECONNREFUSED');
    expect(s.order(['192.0.2.9', '192.0.2.8'])).toEqual(['192.0.2.8', '192.0.2.9']);
  });

  it('times out in whole milliseconds after fractional round trips (AbortSignal.timeout refuses fractions)', () => {
    const s = new ServerSelection();
    for (const ms of [3.3, 517.7, 12.9]) s.answered('192.0.2.9', ms);
    const timeout = s.timeoutMs('192.0.2.9');
    expect(Number.isInteger(timeout)).toBe(true);
    expect(() => AbortSignal.timeout(timeout)).not.toThrow();
  });
});
