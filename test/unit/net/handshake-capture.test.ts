import { once } from 'node:events';
import { type AddressInfo, connect, createServer, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createHandshakeCapture, tapInbound } from '../../../src/net/handshake-capture.js';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const f of cleanups.splice(0)) f();
});

/** An echo server on loopback and a connected client socket. */
async function echoPair(): Promise<Socket> {
  const server = createServer((s) => s.pipe(s));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const client = connect((server.address() as AddressInfo).port, '127.0.0.1');
  await once(client, 'connect');
  cleanups.push(() => {
    client.destroy();
    server.close();
  });
  return client;
}

describe('tapInbound', () => {
  it('passes bytes both ways unchanged and shows every received chunk first', async () => {
    const tcp = await echoPair();
    const seen: Buffer[] = [];
    const tap = tapInbound(tcp, (chunk) => seen.push(chunk));
    const received: Buffer[] = [];
    tap.on('data', (chunk: Buffer) => received.push(chunk));
    tap.write(Buffer.from('hello '));
    tap.write(Buffer.from('world'));
    await expect.poll(() => Buffer.concat(received).toString()).toBe('hello world');
    expect(Buffer.concat(seen).toString()).toBe('hello world');
  });

  it('destroying the tap destroys the socket', async () => {
    const tcp = await echoPair();
    const tap = tapInbound(tcp, () => {});
    tap.destroy();
    await expect.poll(() => tcp.destroyed).toBe(true);
  });

  it('a socket error reaches the tap', async () => {
    const tcp = await echoPair();
    const tap = tapInbound(tcp, () => {});
    const failed = once(tap, 'error');
    tcp.destroy(new Error('reset'));
    await expect(failed).resolves.toEqual([expect.objectContaining({ message: 'reset' })]);
  });
});

describe('createHandshakeCapture', () => {
  it('records until stopped, and stops at the size cap', async () => {
    const tcp = await echoPair();
    const capture = createHandshakeCapture(8);
    const tap = capture.wrapSocket(tcp);
    tap.resume();
    expect(capture.remoteAddress).toBe('127.0.0.1');
    tap.write(Buffer.from('12345'));
    await expect.poll(() => capture.serverBytes().toString()).toBe('12345');
    tap.write(Buffer.from('6789'));
    await expect.poll(() => capture.overflowed).toBe(true);
    expect(capture.serverBytes().toString()).toBe('12345');
  });

  it('stop() ends recording', async () => {
    const tcp = await echoPair();
    const capture = createHandshakeCapture();
    const tap = capture.wrapSocket(tcp);
    const received: Buffer[] = [];
    tap.on('data', (c: Buffer) => received.push(c));
    tap.write(Buffer.from('before'));
    await expect.poll(() => capture.serverBytes().length).toBe(6);
    capture.stop();
    tap.write(Buffer.from('after'));
    await expect.poll(() => Buffer.concat(received).toString()).toBe('beforeafter');
    expect(capture.serverBytes().toString()).toBe('before');
  });
});
