/**
 * enumerateProtocols when connections fail: every detection refused means the target cannot be
 * scanned (the error is thrown, the service answers status error); some refused among answers
 * (a server limiting connections) is a gap said in notes, and the rest of the scan stands.
 */
import { describe, expect, it } from 'vitest';
import { TargetError } from '../../../src/net/errors.js';
import { enumerateProtocols } from '../../../src/tls-scan/enumerate.js';
import type { ProbeConnector } from '../../../src/tls-scan/probe.js';
import { ScanSession } from '../../../src/tls-scan/session.js';

const HANDSHAKE_FAILURE = Buffer.from([21, 3, 3, 0, 2, 2, 40]);

/** Refuses the connections `refuse` picks (by call number), answers the others with handshake_failure. */
function connector(refuse: (call: number) => boolean): ProbeConnector {
  let calls = 0;
  return {
    async tcpExchange() {
      calls += 1;
      if (refuse(calls)) throw new TargetError('network', 'connect', '192.0.2.1: connect ECONNREFUSED');
      return {
        received: HANDSHAKE_FAILURE,
        end: 'done',
        address: '192.0.2.1',
        connectMs: 0,
        firstByteMs: 0,
        totalMs: 1,
      };
    },
  };
}

const session = (c: ProbeConnector) =>
  new ScanSession(c, {
    address: '192.0.2.1',
    port: 443,
    serverName: undefined,
    concurrency: 4,
    budget: 50,
    deadline: AbortSignal.timeout(10_000),
    handshakeTimeoutMs: 1_000,
  });

describe('enumerateProtocols when connections fail', () => {
  it('throws the connect error when no detection reached the server', async () => {
    await expect(enumerateProtocols(session(connector(() => true)), [], [])).rejects.toBeInstanceOf(
      TargetError,
    );
  });

  it('notes a refused probe among answers and reports what the others told', async () => {
    const notes: string[] = [];
    const found = await enumerateProtocols(session(connector((call) => call === 2)), [], notes);
    expect(Object.values(found.offered).every((v) => v === false)).toBe(true);
    expect(notes).toEqual([
      expect.stringMatching(/^A protocol probe could not reach the server \(.*ECONNREFUSED\)/),
    ]);
  });
});
