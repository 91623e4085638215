/**
 * The scan session's bounds, with a connector that answers every hello with
 * a handshake_failure alert after a pause: the budget is never overspent,
 * no more than `concurrency` handshakes are ever in flight, and the deadline
 * ends what is left as ScanExhausted rather than as answers.
 */
import { describe, expect, it } from 'vitest';
import type { ProbeConnector } from '../../../src/tls-scan/probe.js';
import { ScanExhausted, ScanSession } from '../../../src/tls-scan/session.js';

const ALERT = Buffer.from([21, 3, 3, 0, 2, 2, 40]);

function connector(delayMs: number) {
  const stats = { inFlight: 0, most: 0, calls: 0 };
  const c: ProbeConnector = {
    async tcpExchange(_host, opts) {
      stats.calls += 1;
      stats.inFlight += 1;
      stats.most = Math.max(stats.most, stats.inFlight);
      await new Promise((r) => setTimeout(r, delayMs));
      stats.inFlight -= 1;
      return {
        received: ALERT,
        end: 'done',
        address: '192.0.2.1',
        connectMs: 0,
        firstByteMs: 0,
        totalMs: delayMs,
        ...(opts.done(ALERT) ? {} : {}),
      };
    },
  };
  return { c, stats };
}

const session = (
  c: ProbeConnector,
  budget: number,
  concurrency: number,
  deadline = AbortSignal.timeout(30_000),
) =>
  new ScanSession(c, {
    address: '192.0.2.1',
    port: 443,
    serverName: 'example.com',
    concurrency,
    budget,
    deadline,
    handshakeTimeoutMs: 5_000,
  });

describe('ScanSession', () => {
  it('never has more than `concurrency` handshakes in flight', async () => {
    const { c, stats } = connector(20);
    const s = session(c, 100, 3);
    const answers = await Promise.all(
      Array.from({ length: 12 }, () => s.hello({ version: 'TLSv1.2', cipherSuites: [0xc02f] })),
    );
    expect(answers.every((a) => a.reply.kind === 'alert')).toBe(true);
    expect(stats.most).toBe(3);
    expect(s.handshakes).toBe(12);
  });

  it('spends no handshake past its budget and says so', async () => {
    const { c, stats } = connector(1);
    const s = session(c, 5, 2);
    const results = await Promise.allSettled(
      Array.from({ length: 8 }, () => s.hello({ version: 'TLSv1.2', cipherSuites: [0xc02f] })),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(5);
    expect(results.filter((r) => r.status === 'rejected' && r.reason instanceof ScanExhausted)).toHaveLength(
      3,
    );
    expect(stats.calls).toBe(5);
    expect(s.exhausted?.bound).toBe('budget');
  });

  it('counts the complete handshakes it runs for others against the same budget', async () => {
    const { c } = connector(1);
    const s = session(c, 2, 2);
    await s.budgeted(async () => 'certificate');
    await s.hello({ version: 'TLSv1.3', cipherSuites: [0x1301] });
    await expect(s.budgeted(async () => 'again')).rejects.toBeInstanceOf(ScanExhausted);
    expect(s.handshakes).toBe(2);
  });

  it('ends waiting handshakes at the deadline without making them', async () => {
    const { c, stats } = connector(200);
    const s = session(c, 100, 1, AbortSignal.timeout(100));
    const results = await Promise.allSettled(
      Array.from({ length: 4 }, () => s.hello({ version: 'TLSv1.2', cipherSuites: [0xc02f] })),
    );
    expect(stats.calls).toBe(1);
    expect(results.slice(1).every((r) => r.status === 'rejected' && r.reason instanceof ScanExhausted)).toBe(
      true,
    );
    expect(s.exhausted?.bound).toBe('deadline');
  });
});
