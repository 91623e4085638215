/**
 * The typed client (netdiag/client) against the real app listening on loopback, its upstreams
 * fakes: typed calls, the untyped `call` and its one answer shape for 2xx, 4xx, 429 and "no
 * HTTP answer at all". tsc checks this file too, so the `@ts-expect-error` lines are the
 * type-level half: a request the contract does not allow must not compile.
 */
import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createNetdiagClient } from '../../src/client/index.js';
import type { Config } from '../../src/config/index.js';
import { type FakeDnsServer, startFakeDnsServer } from '../fakes/dns-server.js';
import { DEFAULT_ZONES } from '../fakes/dns-zones.js';
import { type FakeGlobalping, startGlobalping } from '../fakes/globalping.js';
import { getTestPki } from '../fakes/test-ca.js';
import { buildTestApp } from '../helper.js';

let dns: FakeDnsServer;
let gp: FakeGlobalping;
let ca: string;

beforeAll(async () => {
  ca = (await getTestPki()).caPem;
  [dns, gp] = await Promise.all([startFakeDnsServer({ zones: DEFAULT_ZONES }), startGlobalping()]);
});
afterAll(async () => {
  await Promise.all([dns?.close(), gp?.close()]);
});

/** The app on 127.0.0.1, an ephemeral port; the client pointed at it. */
async function listening(config: Partial<Config> = {}) {
  const app = await buildTestApp({
    ca,
    config: { dnsResolvers: [dns.doh], globalpingUrl: gp.url, ...config },
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  if (address === null || typeof address === 'string') throw new Error('not listening on TCP');
  return createNetdiagClient({ baseUrl: `http://127.0.0.1:${address.port}` });
}

/** A port nothing listens on: bound once, then released. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('not listening on TCP');
  return address.port;
}

describe('netdiag/client, typed', () => {
  it('GET: the 200 body, typed by the contract', async () => {
    const client = await listening();
    const { data, error, response } = await client.GET('/api/dns', {
      params: { query: { target: 'example.test', type: 'A' } },
    });
    expect(error).toBeUndefined();
    expect(response.status).toBe(200);
    // Typed access: `records` is the contract's union of record shapes.
    expect(data?.records).toEqual([{ address: '192.0.2.10', ttl: 300 }]);
    expect(data?.rcode).toBe('NOERROR');
  });

  it('POST: /api/global-dns measured by the (fake) Globalping', async () => {
    const client = await listening();
    const { data, response } = await client.POST('/api/global-dns', {
      body: { target: 'cdn.jsdelivr.net', type: 'A' },
    });
    expect(response.status).toBe(200);
    expect(data).toMatchObject({
      target: 'cdn.jsdelivr.net',
      type: 'A',
      complete: true,
      source: 'Globalping',
    });
    expect(data?.results).toHaveLength(10);
  });

  it('refuses at compile time what the contract does not allow', async () => {
    const client = await listening();
    // @ts-expect-error: /api/dns has no `name` parameter (it is `target`).
    const misnamed = await client.GET('/api/dns', { params: { query: { name: 'example.test' } } });
    expect(misnamed.response.status).toBe(400);
    const badType = await client.GET('/api/dns', {
      // @ts-expect-error: AAAAA is no record type of the contract's enum.
      params: { query: { target: 'example.test', type: 'AAAAA' } },
    });
    expect(badType.response.status).toBe(400);
    // @ts-expect-error: /api/dns is a GET path only.
    const wrongMethod = await client.POST('/api/dns', { body: {} });
    expect(wrongMethod.response.status).toBe(405);
  });
});

describe('netdiag/client, call (the path as data)', () => {
  it('a 200 answer: status, parsed body, headers', async () => {
    const client = await listening();
    const answer = await client.call('GET', '/api/dns', { query: { target: 'example.test', type: 'MX' } });
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ target: 'example.test', type: 'MX', rcode: 'NOERROR' });
    expect(answer.headers.get('x-service-cache')).toBe('MISS');
    expect(answer.retryAfter).toBeNull();
  });

  it('a 400: the status and the {error} body naming the parameter', async () => {
    const client = await listening();
    const answer = await client.call('GET', '/api/dns', { query: { type: 'A' } });
    expect(answer.status).toBe(400);
    expect(answer.body).toEqual({ error: expect.stringContaining('target'), code: 'bad_request' });
  });

  it('a 429: the {error} body and Retry-After in whole seconds', async () => {
    const client = await listening({ rateLimitGeneral: { points: 1, seconds: 60 } });
    expect((await client.call('GET', '/api/my-ip')).status).toBe(200);
    const answer = await client.call('GET', '/api/my-ip');
    expect(answer.status).toBe(429);
    expect(answer.body).toMatchObject({ error: expect.any(String), code: 'rate_limited' });
    expect(answer.retryAfter).toBeGreaterThanOrEqual(1);
    expect(answer.retryAfter).toBeLessThanOrEqual(60);
  });

  it('a POST with a JSON body', async () => {
    const client = await listening();
    // Challenge protection is off: the verify endpoint says so without asking upstream.
    const answer = await client.call('POST', '/api/challenge/verify', { body: { token: 'any' } });
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ verified: false });
  });

  it('no HTTP answer (a closed port): status 0 and an {error} body saying why, not a throw', async () => {
    const port = await closedPort();
    const client = createNetdiagClient({ baseUrl: `http://127.0.0.1:${port}` });
    const answer = await client.call('GET', '/api/my-ip');
    expect(answer).toMatchObject({ status: 0, retryAfter: null });
    expect(answer.body).toEqual({ error: expect.stringMatching(/could not be reached \(.*ECONNREFUSED/) });
  });

  it('an abort throws: the caller asked for it, there is no answer to give', async () => {
    const client = await listening();
    const controller = new AbortController();
    controller.abort();
    await expect(client.call('GET', '/api/my-ip', { signal: controller.signal })).rejects.toThrow(/abort/i);
  });
});
