/**
 * tcpExchange's prelude: SMTP's banner, EHLO and STARTTLS (net/smtp-starttls.ts's
 * negotiateStarttls) before the caller's bytes, against the fake mail server
 * relaying what follows STARTTLS to an echo server here: what the exchange
 * sends after the prelude must arrive there, and nothing of the SMTP
 * conversation may leak into what it reads.
 */
import { createServer, type Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { negotiateStarttls } from '../../../src/net/smtp-starttls.js';
import { tcpExchange } from '../../../src/net/tcp-exchange.js';
import { hostsResolver } from '../../fakes/address-resolver.js';
import { type FakeSmtpServer, startFakeSmtpServer } from '../../fakes/smtp-server.js';
import { getTestPki } from '../../fakes/test-ca.js';

let echo: Server;
let mx: FakeSmtpServer;

beforeAll(async () => {
  echo = createServer((s) => {
    s.on('error', () => {});
    s.on('data', (chunk) => s.write(Buffer.concat([Buffer.from('echo:'), chunk])));
  });
  await new Promise<void>((resolve) => echo.listen(0, '127.0.0.1', resolve));
  const relay = { host: '127.0.0.1', port: (echo.address() as { port: number }).port };
  mx = await startFakeSmtpServer({ cert: (await getTestPki()).server, relay });
});
afterAll(async () => {
  await mx.close();
  echo.close();
});

const viaSmtp = () =>
  tcpExchange('127.0.0.1', {
    port: mx.port,
    allowedPorts: [mx.port],
    resolver: hostsResolver({}),
    allowCidrs: ['127.0.0.0/8'],
    prelude: (socket, signal) =>
      negotiateStarttls(
        socket,
        signal,
        { heloName: 'scan.netdiag.test' },
        { extensions: [], starttlsOffered: null },
      ),
    send: Buffer.from('hello'),
    done: (got) => got.length >= 10,
    timeoutMs: 5_000,
  });

describe('tcpExchange with a prelude', () => {
  it('talks SMTP up to STARTTLS, then sends and reads only the exchange', async () => {
    mx.set({});
    const x = await viaSmtp();
    expect(x.end).toBe('done');
    expect(x.received.toString()).toBe('echo:hello');
    expect(mx.sessions.at(-1)?.commands).toEqual(['EHLO scan.netdiag.test', 'STARTTLS']);
  });

  it('rejects at the starttls stage when the server offers no STARTTLS, and sends nothing else', async () => {
    mx.set({ fault: 'no-starttls' });
    await expect(viaSmtp()).rejects.toMatchObject({
      stage: 'starttls',
      message: expect.stringMatching(/STARTTLS is not offered/),
    });
    expect(mx.sessions.at(-1)?.commands).toEqual(['EHLO scan.netdiag.test', 'QUIT']);
  });
});
