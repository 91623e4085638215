/**
 * The SMTP sessions of one mail-tls request: one per distinct address (issue
 * 29 F3), its SNI the first host in preference order and the other hosts'
 * names verified from the same chain, reported under every host; and a
 * session refused a slot (F2) failing the request and stopping the others at
 * once rather than at their deadlines. The outbound client is a fake.
 */
import { describe, expect, it } from 'vitest';
import { AppError } from '../../../../src/errors.js';
import { createMailDns } from '../../../../src/features/email/mail-dns.js';
import { type HostTlsa, startSessions } from '../../../../src/features/mail-tls/addresses.js';
import { UnsafeTargetError } from '../../../../src/net/errors.js';
import type { SmtpProbe, SmtpProbeOptions } from '../../../../src/net/smtp-starttls.js';
import { rejectionOf } from '../../../expect-error.js';
import { testZone } from '../../../fakes/dns-zones.js';
import { zoneResolver } from '../email/zone-resolver.js';

type Call = Pick<SmtpProbeOptions, 'servername' | 'otherNames' | 'signal'> & { address: string };

function sessionsWith(
  hosts: { host: string; addresses: string[] }[],
  probe: (address: string, signal: AbortSignal) => Promise<SmtpProbe>,
) {
  const calls: Call[] = [];
  const outbound = {
    probeSmtpStarttls: (address: string, opts: Omit<SmtpProbeOptions, 'resolver' | 'allowCidrs' | 'ca'>) => {
      calls.push({ address, servername: opts.servername, otherNames: opts.otherNames, signal: opts.signal });
      return probe(address, opts.signal!);
    },
  };
  const dns = createMailDns(zoneResolver([testZone('in-addr.arpa', [])]));
  const sessions = startSessions(
    { outbound, heloName: 'probe.test', deadlines: { timeoutMs: 1_000 } },
    dns,
    hosts,
  );
  return { sessions, calls };
}

/** A session that could not connect: what a probe reports for a closed port. */
const unreachable = (address: string): SmtpProbe => ({
  address,
  extensions: [],
  starttlsOffered: null,
  timings: [],
  failure: { stage: 'connect', kind: 'refused', message: 'ECONNREFUSED' },
});

const now = () => new Date('2026-01-01T00:00:00Z');
const noTlsa: HostTlsa = {
  outcome: { kind: 'answer', records: [], rcode: 'NXDOMAIN', aliases: [] },
  dnssec: { status: 'insecure', reason: null },
};

describe('F3: one SMTP session per distinct address', () => {
  it('contacts each address once, with the first host as SNI and the others to verify by name', async () => {
    const { sessions, calls } = sessionsWith(
      [
        { host: 'mx1.example', addresses: ['192.0.2.1', '2001:db8::1'] },
        { host: 'mx2.example', addresses: ['192.0.2.1'] },
        { host: 'mx3.example', addresses: ['192.0.2.3'] },
        { host: 'mx4.example', addresses: ['192.0.2.1'] },
      ],
      async (address) => unreachable(address),
    );
    expect(calls.map(({ signal: _, ...c }) => c)).toEqual([
      { address: '192.0.2.1', servername: 'mx1.example', otherNames: ['mx2.example', 'mx4.example'] },
      { address: '2001:db8::1', servername: 'mx1.example', otherNames: undefined },
      { address: '192.0.2.3', servername: 'mx3.example', otherNames: undefined },
    ]);
    const [one, two] = await Promise.all([
      sessions.judge('mx1.example', '192.0.2.1', 4, noTlsa, now),
      sessions.judge('mx2.example', '192.0.2.1', 4, noTlsa, now),
    ]);
    // The one session under both; DANE judged for each host's own TLSA name.
    expect({ ...two, dane: null }).toEqual({ ...one, dane: null });
    expect([one.dane?.tlsa_name, two.dane?.tlsa_name]).toEqual([
      '_25._tcp.mx1.example',
      '_25._tcp.mx2.example',
    ]);
    expect(two).toMatchObject({
      address: '192.0.2.1',
      status: 'unreachable',
      smtp: { failure: { stage: 'connect' } },
    });
  });

  it('reports an address that may not be contacted as refused under every host, asked once', async () => {
    const { sessions, calls } = sessionsWith(
      [
        { host: 'mx1.example', addresses: ['10.0.0.1'] },
        { host: 'mx2.example', addresses: ['10.0.0.1'] },
      ],
      () =>
        Promise.reject(new UnsafeTargetError('not_public', 'mx 10.0.0.1 is not a public address (private)')),
    );
    expect(calls).toHaveLength(1);
    for (const host of ['mx1.example', 'mx2.example']) {
      expect(await sessions.judge(host, '10.0.0.1', 4, noTlsa, now)).toMatchObject({
        status: 'refused',
        refused_reason: 'mx 10.0.0.1 is not a public address (private)',
        smtp: null,
      });
    }
  });
});

describe('F2: a session refused a slot', () => {
  it('fails the request with its 503 and stops the request’s other sessions at once', async () => {
    const full = new AppError(
      503,
      'unavailable',
      'this service is running as many SMTP sessions as it allows',
    );
    const { sessions, calls } = sessionsWith(
      [
        { host: 'mx1.example', addresses: ['192.0.2.1'] },
        { host: 'mx2.example', addresses: ['192.0.2.2'] },
      ],
      (address, signal) =>
        address === '192.0.2.2'
          ? Promise.reject(full)
          : // A slow server: only the request's stop ends it before its deadline.
            new Promise((resolve) => signal.addEventListener('abort', () => resolve(unreachable(address)))),
    );
    expect(await rejectionOf(sessions.judge('mx2.example', '192.0.2.2', 4, noTlsa, now), AppError)).toBe(
      full,
    );
    expect(calls[0]?.signal?.aborted).toBe(true);
    expect((await sessions.judge('mx1.example', '192.0.2.1', 4, noTlsa, now)).status).toBe('unreachable');
  });
});
