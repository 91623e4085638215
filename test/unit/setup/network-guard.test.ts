/**
 * The network guard itself (test/setup/network-guard.ts): each way out is
 * refused and recorded; loopback fakes stay reachable.
 */
import dgram from 'node:dgram';
import dns from 'node:dns';
import { createServer, connect as netConnect } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { afterEach, describe, expect, it } from 'vitest';
import { UNCONFIGURED_UPSTREAM_PORT } from '../../../src/config/index.js';
import { takeViolations } from '../../setup/network-guard.js';

function failure(start: (done: (err: Error | undefined) => void) => void): Promise<Error | undefined> {
  return new Promise((resolve) => start(resolve));
}

// Each test here provokes refusals on purpose; they are taken so the guard's own check passes.
afterEach(() => {
  takeViolations();
});

describe('the network guard', () => {
  it('refuses TCP and TLS past loopback, and records the attempt', async () => {
    const tcp = await failure((done) => netConnect(443, '192.0.2.1').on('error', done));
    expect(tcp?.message).toMatch(/past loopback \(192\.0\.2\.1:443\)/);
    const tls = await failure((done) => tlsConnect({ host: '2001:db8::1', port: 443 }).on('error', done));
    expect(tls?.message).toMatch(/past loopback/);
    expect(takeViolations()).toHaveLength(2);
  });

  it('refuses a connection by name, and a name lookup', async () => {
    const byName = await failure((done) => netConnect({ host: 'example.com', port: 80 }).on('error', done));
    expect(byName?.message).toMatch(/example\.com:80/);
    const lookup = await failure((done) => dns.lookup('example.com', (err) => done(err ?? undefined)));
    expect(lookup?.message).toMatch(/DNS lookup of example\.com/);
    await expect(dns.promises.resolve4('example.net')).rejects.toThrow(/DNS lookup of example\.net/);
    expect(takeViolations()).toHaveLength(3);
  });

  it('refuses a UDP datagram past loopback', async () => {
    const socket = dgram.createSocket('udp4');
    const err = await failure((done) =>
      socket.send(Buffer.from('x'), 53, '198.51.100.53', (e) => done(e ?? undefined)),
    );
    socket.close();
    expect(err?.message).toMatch(/UDP datagram/);
    expect(takeViolations()).toHaveLength(1);
  });

  it("refuses testConfig's unconfigured-upstream port even on loopback", async () => {
    const err = await failure((done) =>
      netConnect(UNCONFIGURED_UPSTREAM_PORT, '127.0.0.1').on('error', done),
    );
    expect(err?.message).toMatch(/did not configure/);
    expect(takeViolations()).toHaveLength(1);
  });

  it('lets loopback through', async () => {
    const server = createServer((socket) => socket.end('hello'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    const text = await new Promise<string>((resolve, reject) => {
      let data = '';
      netConnect(port, 'localhost')
        .on('data', (chunk) => {
          data += chunk;
        })
        .on('end', () => resolve(data))
        .on('error', reject);
    });
    server.close();
    expect(text).toBe('hello');
    expect(takeViolations()).toEqual([]);
  });
});
