/**
 * The service-wide bounds on live probes in the one outbound client (issue 29
 * F2): a probe past the bound waits at most `waitMs` for a slot, then fails
 * with a 503 `unavailable` and Retry-After; SMTP sessions count against both
 * bounds; an address that may not be contacted is refused before any slot is
 * taken; a caller that gives up is not counted as refused.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppError } from '../../../src/errors.js';
import { UnsafeTargetError } from '../../../src/net/errors.js';
import { type LimitName, Outbound } from '../../../src/net/outbound.js';
import { rejectionOf } from '../../expect-error.js';
import { hostsResolver } from '../../fakes/address-resolver.js';
import { type FakeSmtpServer, startFakeSmtpServer } from '../../fakes/smtp-server.js';
import { getTestPki } from '../../fakes/test-ca.js';

let mx: FakeSmtpServer;

beforeAll(async () => {
  mx = await startFakeSmtpServer({ cert: await (await getTestPki()).issue({ dnsNames: ['mx.mail.test'] }) });
  mx.set({ fault: 'stall' });
});
afterAll(async () => mx?.close());

function outbound(limits: { liveProbes: number; smtpSessions: number; waitMs?: number }) {
  const rejected: LimitName[] = [];
  const client = new Outbound({
    resolver: hostsResolver({}),
    allowCidrs: ['127.0.0.0/8'],
    timeoutMs: 5_000,
    limits: { waitMs: 100, ...limits, onRejected: (name) => rejected.push(name) },
  });
  return { client, rejected };
}

/** A probe that holds its slot until `end()`. */
function held() {
  let end!: () => void;
  const done = new Promise<void>((resolve) => {
    end = resolve;
  });
  return { run: () => done, end };
}

const smtp = (client: Outbound, address = '127.0.0.1', signal?: AbortSignal) =>
  client.probeSmtpStarttls(address, {
    servername: 'mx.mail.test',
    heloName: 'probe.netdiag.test',
    port: mx.port,
    timeoutMs: 3_000,
    ...(signal ? { signal } : {}),
  });

describe('F2: the live-probe bounds of ctx.outbound', () => {
  it('answers a probe past the bound 503 unavailable with Retry-After once its wait is over', async () => {
    const { client, rejected } = outbound({ liveProbes: 2, smtpSessions: 1, waitMs: 100 });
    const a = held();
    const b = held();
    const running = [client.liveProbe(a.run), client.liveProbe(b.run)];
    const err = await rejectionOf(
      client.liveProbe(async () => 'never'),
      AppError,
    );
    expect(err).toMatchObject({ statusCode: 503, code: 'unavailable', headers: { 'retry-after': '1' } });
    expect(err.message).toMatch(/MAX_LIVE_PROBES=2/);
    expect(rejected).toEqual(['live_probes']);
    a.end();
    b.end();
    await Promise.all(running);
    expect(client.usage.live_probes).toEqual({ active: 0, waiting: 0 });
  });

  it('runs a waiting probe as soon as a slot frees within its wait', async () => {
    const { client, rejected } = outbound({ liveProbes: 1, smtpSessions: 1, waitMs: 5_000 });
    const a = held();
    const first = client.liveProbe(a.run);
    const second = client.liveProbe(async () => 'ran');
    expect(client.usage.live_probes).toEqual({ active: 1, waiting: 1 });
    a.end();
    expect(await second).toBe('ran');
    await first;
    expect(rejected).toEqual([]);
  });

  it('frees the slot when the probe fails', async () => {
    const { client } = outbound({ liveProbes: 1, smtpSessions: 1 });
    await expect(client.liveProbe(() => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(await client.liveProbe(async () => 'next')).toBe('next');
  });

  it('a caller that gives up while waiting gets its own abort, not a 503, and is not counted', async () => {
    const { client, rejected } = outbound({ liveProbes: 1, smtpSessions: 1, waitMs: 5_000 });
    const a = held();
    const first = client.liveProbe(a.run);
    const controller = new AbortController();
    const waiting = client.liveProbe(async () => 'never', { signal: controller.signal });
    controller.abort(new Error('client went away'));
    expect((await rejectionOf(waiting, Error)).message).toBe('client went away');
    expect(rejected).toEqual([]);
    a.end();
    await first;
  });

  it('holds SMTP sessions to their own bound: the next session waits, then is refused', async () => {
    const { client, rejected } = outbound({ liveProbes: 8, smtpSessions: 1, waitMs: 100 });
    const first = smtp(client);
    const err = await rejectionOf(smtp(client), AppError);
    expect(err).toMatchObject({ statusCode: 503, code: 'unavailable' });
    expect(err.message).toMatch(/MAX_SMTP_SESSIONS=1/);
    expect(rejected).toEqual(['smtp_sessions']);
    // The stalled session ends at its own deadline, as a result, and frees its slot.
    expect((await first).failure).toMatchObject({ stage: 'banner', kind: 'timeout' });
    expect(client.usage).toEqual({
      live_probes: { active: 0, waiting: 0 },
      smtp_sessions: { active: 0, waiting: 0 },
    });
  });

  it('counts an SMTP session among the live probes too', async () => {
    const { client, rejected } = outbound({ liveProbes: 1, smtpSessions: 1, waitMs: 100 });
    const a = held();
    const tls = client.liveProbe(a.run);
    const err = await rejectionOf(smtp(client), AppError);
    expect(err.message).toMatch(/MAX_LIVE_PROBES=1/);
    expect(rejected).toEqual(['live_probes']);
    expect(client.usage.smtp_sessions.active).toBe(0);
    a.end();
    await tls;
  });

  it('refuses an address that may not be contacted before taking a slot, even with the bound full', async () => {
    const { client, rejected } = outbound({ liveProbes: 1, smtpSessions: 1, waitMs: 5_000 });
    const a = held();
    const busy = client.liveProbe(a.run);
    await rejectionOf(smtp(client, '10.0.0.25'), UnsafeTargetError);
    expect(rejected).toEqual([]);
    a.end();
    await busy;
  });
});
