/**
 * The typed client's own rules, with a fetch of the test's making: what it sends (headers,
 * query, JSON body) and how it reads answers no netdiag instance gives on purpose (a body
 * that is not JSON, none at all). The client against the real app: test/integration/client.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { createNetdiagClient, parseRetryAfter } from '../../../src/client/index.js';

/** A client whose fetch records the request and answers `reply`. */
function clientAnswering(reply: () => Response, headers?: Record<string, string>) {
  const requests: Request[] = [];
  const fetch: typeof globalThis.fetch = async (input, init) => {
    requests.push(new Request(input, init));
    return reply();
  };
  return { client: createNetdiagClient({ baseUrl: 'https://netdiag.test/', fetch, headers }), requests };
}

describe('netdiag/client call: the request', () => {
  it('sends the query (a list as repeated names), accept JSON and the caller’s headers', async () => {
    const { client, requests } = clientAnswering(() => Response.json({}), { 'user-agent': 'netdiag-cli/1' });
    await client.call('GET', '/api/email-security', {
      query: { target: 'example.com', selector: ['s1', 's2'] },
    });
    const [req] = requests;
    expect(req?.method).toBe('GET');
    expect(req?.url).toBe(
      'https://netdiag.test/api/email-security?target=example.com&selector=s1&selector=s2',
    );
    expect(req?.headers.get('accept')).toBe('application/json');
    expect(req?.headers.get('user-agent')).toBe('netdiag-cli/1');
    expect(req?.headers.get('content-type')).toBeNull();
  });

  it('sends a body as JSON', async () => {
    const { client, requests } = clientAnswering(() => Response.json({ verified: false }));
    await client.call('POST', '/api/challenge/verify', { body: { token: 't' } });
    expect(requests[0]?.headers.get('content-type')).toBe('application/json');
    expect(await requests[0]?.json()).toEqual({ token: 't' });
  });
});

describe('netdiag/client call: the answer', () => {
  it('a body that is not JSON is null, the status kept (a proxy’s HTML 502)', async () => {
    const { client } = clientAnswering(() => new Response('<h1>Bad Gateway</h1>', { status: 502 }));
    expect(await client.call('GET', '/api/dns')).toMatchObject({ status: 502, body: null, retryAfter: null });
  });

  it('a 2xx without a body is null too', async () => {
    const { client } = clientAnswering(() => new Response(null, { status: 204 }));
    expect(await client.call('GET', '/api/dns')).toMatchObject({ status: 204, body: null });
  });

  it('a 503 with Retry-After gives the seconds', async () => {
    const { client } = clientAnswering(() =>
      Response.json({ error: 'overloaded' }, { status: 503, headers: { 'retry-after': '5' } }),
    );
    expect(await client.call('GET', '/api/dns')).toMatchObject({
      status: 503,
      body: { error: 'overloaded' },
      retryAfter: 5,
    });
  });
});

describe('parseRetryAfter (RFC 9110 §10.2.3)', () => {
  const now = Date.parse('2026-07-29T12:00:00Z');
  it('reads seconds and HTTP dates, in whole seconds, never negative', () => {
    expect(parseRetryAfter('120', now)).toBe(120);
    expect(parseRetryAfter('Wed, 29 Jul 2026 12:00:30 GMT', now)).toBe(30);
    expect(parseRetryAfter('Wed, 29 Jul 2026 11:00:00 GMT', now)).toBe(0);
  });
  it('is null when absent or unreadable', () => {
    expect(parseRetryAfter(null, now)).toBeNull();
    expect(parseRetryAfter(' ', now)).toBeNull();
    expect(parseRetryAfter('soon', now)).toBeNull();
  });
});
