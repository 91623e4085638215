/**
 * tcpExchange's prelude: SMTP's banner, EHLO and STARTTLS (net/smtp-starttls.ts's
 * negotiateStarttls) before the caller's bytes, against the SMTP front of
 * the tests, whose bytes after STARTTLS go to an echo server here: what the
 * exchange sends after the prelude must arrive there, and nothing of the SMTP
 * conversation may leak into what it reads.
 */
import { createServer, type Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { negotiateStarttls } from '../../../src/net/smtp-starttls.js';
import { tcpExchange } from '../../../src/net/tcp-exchange.js';
import { hostsResolver } from '../../fakes/address-resolver.js';
import { type SmtpFront, startSmtpFront } from '../../fakes/smtp-starttls-front.js';

let echo: Server;
let echoPort: number;
let front: SmtpFront;
let bare: SmtpFront;

beforeAll(async () => {
  echo = createServer((s) => {
    s.on('error', () => {});
    s.on('data', (chunk) => s.write(Buffer.concat([Buffer.from('echo:'), chunk])));
  });
  await new Promise<void>((resolve) => echo.listen(0, '127.0.0.1', resolve));
  echoPort = (echo.address() as { port: number }).port;
  front = await startSmtpFront({
    address: '127.0.0.1',
    port: 0,
    backend: { host: '127.0.0.1', port: echoPort },
  });
  bare = await startSmtpFront({
    address: '127.0.0.1',
    port: 0,
    backend: { host: '127.0.0.1', port: echoPort },
    noStarttls: true,
  });
});
afterAll(async () => {
  await front.close();
  await bare.close();
  echo.close();
});

const viaSmtp = (target: SmtpFront) =>
  tcpExchange('127.0.0.1', {
    port: target.port,
    allowedPorts: [target.port],
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
    const x = await viaSmtp(front);
    expect(x.end).toBe('done');
    expect(x.received.toString()).toBe('echo:hello');
    expect(front.commands).toEqual(['EHLO SCAN.NETDIAG.TEST', 'STARTTLS']);
  });

  it('rejects at the starttls stage when the server offers no STARTTLS, and sends nothing else', async () => {
    await expect(viaSmtp(bare)).rejects.toMatchObject({
      stage: 'starttls',
      message: expect.stringMatching(/STARTTLS is not offered/),
    });
    expect(bare.commands).toEqual(['EHLO SCAN.NETDIAG.TEST', 'QUIT']);
  });
});
