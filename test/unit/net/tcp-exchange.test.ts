import { createServer, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tcpExchange } from '../../../src/net/tcp-exchange.js';
import { hostsResolver } from '../../fakes/address-resolver.js';

/** A server that answers each connection as the first byte it receives says. */
let server: Server;
let port: number;
const sockets = new Set<Socket>();

beforeAll(async () => {
  server = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => {});
    socket.once('data', (chunk) => {
      if (chunk[0] === 1) socket.end(Buffer.from('bye')); // answers, then closes
      if (chunk[0] === 2) socket.write(Buffer.alloc(100_000, 7)); // floods
      // 3: says nothing
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as { port: number }).port;
});
afterAll(() => {
  for (const s of sockets) s.destroy();
  server.close();
});

const exchange = (first: number, timeoutMs = 5_000) =>
  tcpExchange('127.0.0.1', {
    port,
    allowedPorts: [port],
    resolver: hostsResolver({}),
    allowCidrs: ['127.0.0.0/8'],
    send: Buffer.from([first]),
    done: () => false,
    timeoutMs,
    maxBytes: 1024,
  });

describe('tcpExchange', () => {
  it('ends at the server close with every byte it sent', async () => {
    const x = await exchange(1);
    expect(x).toMatchObject({ end: 'eof', address: '127.0.0.1' });
    expect(x.received.toString()).toBe('bye');
    expect(x.firstByteMs).not.toBeNull();
  });

  it('stops reading past its byte cap', async () => {
    const x = await exchange(2);
    expect(x.end).toBe('cap');
    expect(x.received.length).toBeGreaterThanOrEqual(1024);
  });

  it('ends a silent server at the deadline, as a result, not an error', async () => {
    const x = await exchange(3, 300);
    expect(x).toMatchObject({ end: 'timeout', firstByteMs: null });
    expect(x.received.length).toBe(0);
  });

  it('refuses a non-public address outside the allow-list before connecting', async () => {
    await expect(
      tcpExchange('127.0.0.1', {
        port,
        allowedPorts: [port],
        resolver: hostsResolver({}),
        allowCidrs: [],
        send: Buffer.alloc(1),
        done: () => true,
        timeoutMs: 1_000,
      }),
    ).rejects.toMatchObject({ statusCode: 400, reason: 'not_public' });
  });
});
