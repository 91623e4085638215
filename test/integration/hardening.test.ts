/**
 * Issue 16, tried as an attacker would, on a real socket: requests that never
 * finish, connections piled up from one address, requests Node answers by
 * itself, a wrong method. Every answer is JSON `{error}`, none holds a socket.
 */
import { connect } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { describe, expect, it } from 'vitest';
import type { Config } from '../../src/config/index.js';
import { buildTestApp } from '../helper.js';

interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

async function listening(config: Partial<Config> = {}): Promise<{ app: FastifyInstance; port: number }> {
  const app = await buildTestApp({ config });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  if (address === null || typeof address === 'string') throw new Error('no address');
  return { app, port: address.port };
}

function parse(text: string): RawAnswer {
  const split = text.indexOf('\r\n\r\n');
  const [statusLine = '', ...lines] = text.slice(0, split).split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
  }
  return { status: Number(statusLine.split(' ')[1]), headers, body: text.slice(split + 4) };
}

/** Writes `request` as is and reads until the server closes the connection. */
function raw(port: number, request: string): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let text = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      text += chunk;
    });
    socket.on('error', reject);
    socket.on('close', () => resolve(parse(text)));
    socket.write(request);
  });
}

function expectJsonError(answer: RawAnswer, status: number): Record<string, unknown> {
  expect(answer.status).toBe(status);
  expect(answer.headers['content-type']).toMatch(/^application\/json/);
  const body = JSON.parse(answer.body) as Record<string, unknown>;
  expect(typeof body.error).toBe('string');
  return body;
}

describe('a request that never completes (REQUEST_TIMEOUT_MS)', () => {
  // Issue 16: `Content-Length: 10` and no body held the socket past 300 s.
  it('answers 408 JSON when an announced body never arrives', async () => {
    const { port } = await listening({ requestTimeoutMs: 500 });
    const answer = await raw(
      port,
      'POST /api/global-dns HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 10\r\n\r\n',
    );
    expect(expectJsonError(answer, 408).error).toMatch(/not received in time/);
  });

  it('answers 408 JSON when a chunked body sends no chunk', async () => {
    const { port } = await listening({ requestTimeoutMs: 500 });
    const answer = await raw(
      port,
      'POST /api/global-dns HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n',
    );
    expectJsonError(answer, 408);
  });

  // Issue 16: a header timeout answered 400, as if the request were malformed.
  it('answers 408 JSON, not 400, when the headers never end', async () => {
    const { port } = await listening({ requestTimeoutMs: 500 });
    const answer = await raw(port, 'GET /api/dns?target=example.com HTTP/1.1\r\nHost: x\r\nX-Slow: 1');
    expectJsonError(answer, 408);
  });
});

describe('requests Node would answer by itself', () => {
  // Issue 16: Node's own empty 400.
  it('answers an HTTP/1.1 request without Host with a JSON 400', async () => {
    const { port } = await listening();
    const answer = await raw(port, 'GET /healthz HTTP/1.1\r\nConnection: close\r\n\r\n');
    expect(expectJsonError(answer, 400).error).toMatch(/Host/);
  });

  it('still serves HTTP/1.0 without Host', async () => {
    const { port } = await listening();
    const answer = await raw(port, 'GET /healthz HTTP/1.0\r\n\r\n');
    expect(answer.status).toBe(200);
  });

  it('answers garbage with a JSON 400', async () => {
    const { port } = await listening();
    expectJsonError(await raw(port, 'HELLO\r\n\r\n'), 400);
  });

  // Issue 29 F6: Node's own 417 with an empty body.
  it('F6: answers an Expect other than 100-continue with a JSON 417, no-store, and closes', async () => {
    const { port } = await listening();
    const answer = await raw(
      port,
      'POST /api/global-dns HTTP/1.1\r\nHost: x\r\nExpect: 200-ok\r\nContent-Type: application/json\r\n' +
        'Content-Length: 2\r\n\r\n{}',
    );
    const body = expectJsonError(answer, 417);
    expect(body).toMatchObject({ code: 'expectation_failed' });
    expect(body.error).toMatch(/200-ok.*100-continue/);
    expect(answer.headers['cache-control']).toBe('no-store');
    expect(answer.headers.connection).toBe('close');
    // 100-continue is still met: the interim answer, then the route's own.
    const text = await new Promise<string>((resolve, reject) => {
      const socket = connect(port, '127.0.0.1');
      let received = '';
      socket.setEncoding('latin1');
      socket.on('data', (chunk: string) => {
        received += chunk;
        if (received.startsWith('HTTP/1.1 100 Continue\r\n\r\n') && !socket.writableEnded) socket.end('{}');
      });
      socket.on('error', reject);
      socket.on('close', () => resolve(received));
      socket.write(
        'POST /api/global-dns HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nConnection: close\r\n' +
          'Content-Type: application/json\r\nContent-Length: 2\r\n\r\n',
      );
    });
    expect(text).toMatch(/^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 400 /);
  });

  // Issue 29 F6: a CONNECT was closed without an answer.
  it('F6: answers CONNECT with a JSON 405 naming the methods served, no-store, and closes', async () => {
    const { port } = await listening();
    const answer = await raw(port, 'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n');
    const body = expectJsonError(answer, 405);
    expect(body).toMatchObject({ code: 'method_not_allowed' });
    expect(answer.headers.allow).toBe('GET, HEAD, POST');
    expect(answer.headers['cache-control']).toBe('no-store');
    expect(answer.headers.connection).toBe('close');
  });
});

describe('a method the path does not serve', () => {
  // Issue 16: a wrong method was a 404, as if the path did not exist.
  it('is a 405 naming the allowed methods in Allow', async () => {
    const { app } = await listening();
    const post = await app.inject({ method: 'POST', url: '/api/dns?target=example.com' });
    expect(post.statusCode).toBe(405);
    expect(post.headers.allow).toBe('GET, HEAD');
    expect(post.json()).toMatchObject({ code: 'method_not_allowed' });
    expect(post.json().error).toMatch(/GET, HEAD/);
    const get = await app.inject({ method: 'GET', url: '/api/global-dns' });
    expect(get.statusCode).toBe(405);
    expect(get.headers.allow).toBe('POST');
    const asset = await app.inject({ method: 'DELETE', url: '/assets/app.js' });
    expect(asset.statusCode).toBe(405);
    // The method is served there, the file is not: a 404.
    expect((await app.inject({ method: 'GET', url: '/assets/no-such-file.js' })).statusCode).toBe(404);
  });

  it('leaves a path that exists under no method a 404', async () => {
    const { app } = await listening();
    const res = await app.inject({ method: 'POST', url: '/api/nothing-here' });
    expect(res.statusCode).toBe(404);
    expect(res.headers.allow).toBeUndefined();
  });
});

describe('concurrent connections per address (MAX_CONNECTIONS_PER_IP)', () => {
  function openIdle(port: number) {
    return new Promise<ReturnType<typeof connect>>((resolve, reject) => {
      const socket = connect(port, '127.0.0.1', () => resolve(socket));
      socket.on('error', reject);
    });
  }

  it('answers a connection over the cap 429 JSON with Retry-After, and serves again once one closes', async () => {
    const { port } = await listening({ maxConnectionsPerIp: 3 });
    const held = await Promise.all([openIdle(port), openIdle(port), openIdle(port)]);
    const over = await raw(port, 'GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
    expect(expectJsonError(over, 429).error).toMatch(/at most 3/);
    expect(over.headers['retry-after']).toBe('1');
    expect(over.headers.connection).toBe('close');

    held[0]?.destroy();
    await expect
      .poll(
        async () => (await raw(port, 'GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')).status,
      )
      .toBe(200);
    for (const socket of held) socket.destroy();
  });

  it('closes a connection over the cap that sends nothing', async () => {
    const { port } = await listening({ maxConnectionsPerIp: 1 });
    const held = await openIdle(port);
    const idle = await openIdle(port);
    await new Promise((resolve) => idle.on('close', resolve));
    held.destroy();
  });

  it('exempts a trusted proxy, whose clients share its address', async () => {
    const { port } = await listening({ maxConnectionsPerIp: 1, trustProxy: ['127.0.0.1/32'] });
    const held = await openIdle(port);
    const answer = await raw(port, 'GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    expect(answer.status).toBe(200);
    held.destroy();
  });
});

describe('/docs', () => {
  // Issue 16: the interactive docs had no CSP and could be framed.
  it('carries a CSP that forbids framing and foreign scripts', async () => {
    const { app } = await listening();
    for (const url of ['/docs/', '/docs/static/swagger-ui.css', '/docs/static/swagger-initializer.js']) {
      const res = await app.inject(url);
      expect(res.statusCode, url).toBe(200);
      const csp = String(res.headers['content-security-policy']);
      expect(csp, url).toContain("frame-ancestors 'none'");
      expect(csp, url).toContain("script-src 'self'");
      expect(csp, url).not.toContain('unsafe-eval');
    }
  });
});
