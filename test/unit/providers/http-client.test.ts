/**
 * Pins down the shared upstream HTTP client against a real TLS server on
 * loopback: what it returns, and which ProviderError kind each operational
 * failure becomes (the chain decides on fallback by that kind).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { ProviderError, type ProviderFailureKind } from '../../../src/errors.js';
import { classifyError, HttpClient, joinUrl } from '../../../src/providers/http-client.js';
import {
  type FakeUpstream,
  fixture,
  fixtureBytes,
  fixtureText,
  startFakeUpstream,
} from '../../fakes/https-upstream.js';
import { getTestPki } from '../../fakes/test-ca.js';

const CRTSH = fixture('ct/crtsh-example.com.json');

/** A signal generous enough for every request that is expected to complete. */
const ok = (): AbortSignal => AbortSignal.timeout(5_000);

async function failureOf(promise: Promise<unknown>): Promise<ProviderError> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof ProviderError) return err;
    throw err;
  }
  throw new Error('expected a ProviderError, but the request succeeded');
}

async function expectKind(promise: Promise<unknown>, kind: ProviderFailureKind): Promise<void> {
  expect((await failureOf(promise)).kind).toBe(kind);
}

describe('HttpClient against a fake HTTPS upstream', () => {
  let upstream: FakeUpstream;
  let client: HttpClient;

  beforeAll(async () => {
    const { caPem } = await getTestPki();
    client = new HttpClient({ ca: caPem });
    upstream = await startFakeUpstream({
      routes: {
        '/json': { json: { ok: true, n: 1 } },
        '/crtsh': { json: CRTSH },
        '/big': { headers: { 'content-type': 'application/json' }, body: `"${'x'.repeat(2_000)}"` },
        '/big-chunked': { headers: { 'transfer-encoding': 'chunked' }, body: `"${'x'.repeat(2_000)}"` },
        '/moved': { status: 302, headers: { location: '/json' } },
        '/to-file': { status: 302, headers: { location: 'file:///etc/passwd' } },
        '/to-http': { status: 301, headers: { location: 'http://127.0.0.1:9/json' } },
        '/to-credentials': { status: 307, headers: { location: 'https://user:pw@localhost/json' } },
      },
    });
  });

  afterEach(() => upstream.reset());

  afterAll(async () => {
    await client.close();
    await upstream.close();
  });

  it('parses a 200 JSON body', async () => {
    const res = await client.getJson<unknown>(`${upstream.url}/crtsh`, { signal: ok() });
    expect(res.status).toBe(200);
    expect(res.data).toEqual(CRTSH);
    expect(upstream.count('/crtsh')).toBe(1);
    expect(upstream.requests[0]?.headers.accept).toBe('application/json');
  });

  it('returns a 404 for the adapter to interpret instead of throwing', async () => {
    const res = await client.send(`${upstream.url}/missing`, { signal: ok() });
    expect(res.status).toBe(404);
    expect(JSON.parse(res.body.toString())).toHaveProperty('error');
  });

  describe('redirects (the same rules as outbound safety: net/redirect.ts)', () => {
    it('follows a relative Location within maxRedirects', async () => {
      const res = await client.send(`${upstream.url}/moved`, { signal: ok(), maxRedirects: 3 });
      expect(res.status).toBe(200);
      expect(res.url).toBe(`${upstream.url}/json`);
    });

    it('hands a redirect back unfollowed when maxRedirects is 0', async () => {
      expect((await client.send(`${upstream.url}/moved`, { signal: ok() })).status).toBe(302);
    });

    it.each([
      ['a scheme other than http and https', '/to-file', /scheme file is not allowed/],
      ['a downgrade from https to http', '/to-http', /downgrade from https to http/],
      ['credentials in the URL', '/to-credentials', /must not carry credentials/],
    ])('refuses %s as bad_response, without connecting', async (_why, path, message) => {
      const failure = await failureOf(
        client.send(`${upstream.url}${path}`, { signal: ok(), maxRedirects: 3 }),
      );
      expect(failure.kind).toBe('bad_response');
      expect(failure.message).toMatch(message);
      expect(upstream.count()).toBe(1);
    });
  });

  it('sends a descriptive User-Agent', async () => {
    await client.send(`${upstream.url}/json`, { signal: ok() });
    expect(upstream.requests[0]?.headers['user-agent']).toMatch(/^netdiag\/\d+\.\d+\.\d+ \(/);
  });

  // Regression: abandoning the unread body made undici emit an 'error' nobody
  // listened for, an uncaught exception that would crash the server.
  it('rejects a body over maxBytes as bad_response, by declared length', async () => {
    await expectKind(client.send(`${upstream.url}/big`, { signal: ok(), maxBytes: 1_000 }), 'bad_response');
    // Under the cap the same response is fine.
    const res = await client.send(`${upstream.url}/big`, { signal: ok(), maxBytes: 10_000 });
    expect(res.body.length).toBe(2_002);
  });

  it('rejects a body over maxBytes as bad_response, while streaming one without a length', async () => {
    const url = `${upstream.url}/big-chunked`;
    await expectKind(client.send(url, { signal: ok(), maxBytes: 1_000 }), 'bad_response');
    const res = await client.send(url, { signal: ok(), maxBytes: 10_000 });
    expect(res.headers['content-length']).toBeUndefined();
    expect(res.body.length).toBe(2_002);
  });

  describe('maps each fault to the failure kind the chain falls back on', () => {
    it('503 → http_status', async () => {
      upstream.fault = '503';
      await expectKind(client.send(`${upstream.url}/json`, { signal: ok() }), 'http_status');
    });

    it('429 → rate_limited', async () => {
      upstream.fault = '429';
      await expectKind(client.send(`${upstream.url}/json`, { signal: ok() }), 'rate_limited');
    });

    it('passStatuses hands a 429 back with its headers (Retry-After) instead of throwing', async () => {
      upstream.fault = '429';
      const res = await client.send(`${upstream.url}/json`, { signal: ok(), passStatuses: [429] });
      expect(res.status).toBe(429);
      expect(res.headers['retry-after']).toBe('1');
      // Only the statuses named pass: a 503 still throws.
      upstream.fault = '503';
      await expectKind(
        client.send(`${upstream.url}/json`, { signal: ok(), passStatuses: [429] }),
        'http_status',
      );
    });

    // Regression: AbortSignal.timeout() aborts with a DOMException named
    // TimeoutError whose numeric `code` made classifyError throw a TypeError.
    it('timeout (AbortSignal.timeout) → timeout', async () => {
      upstream.fault = 'timeout';
      const started = Date.now();
      await expectKind(client.send(`${upstream.url}/json`, { signal: AbortSignal.timeout(300) }), 'timeout');
      expect(Date.now() - started).toBeLessThan(10_000);
      expect(upstream.count('/json')).toBe(1);
    });

    it('an explicit abort → timeout', async () => {
      upstream.fault = 'timeout';
      const controller = new AbortController();
      setTimeout(() => controller.abort(), 100);
      await expectKind(client.send(`${upstream.url}/json`, { signal: controller.signal }), 'timeout');
    });

    it('garbage → bad_response from getJson', async () => {
      upstream.fault = 'garbage';
      await expectKind(client.getJson(`${upstream.url}/json`, { signal: ok() }), 'bad_response');
    });

    it('empty → bad_response from getJson', async () => {
      upstream.fault = 'empty';
      await expectKind(client.getJson(`${upstream.url}/json`, { signal: ok() }), 'bad_response');
    });

    it('reset → network', async () => {
      upstream.fault = 'reset';
      await expectKind(client.send(`${upstream.url}/json`, { signal: ok() }), 'network');
    });

    it('recovers once the fault is cleared', async () => {
      upstream.fault = '503';
      await expectKind(client.send(`${upstream.url}/json`, { signal: ok() }), 'http_status');
      upstream.fault = 'none';
      const res = await client.getJson<{ ok: boolean }>(`${upstream.url}/json`, { signal: ok() });
      expect(res.data.ok).toBe(true);
    });
  });

  it('fails with kind tls when the test CA is not trusted (the certificate really is checked)', async () => {
    const untrusting = new HttpClient();
    try {
      await expectKind(untrusting.send(`${upstream.url}/json`, { signal: ok() }), 'tls');
      expect(upstream.count()).toBe(0);
    } finally {
      await untrusting.close();
    }
  });
});

describe('HttpClient with a path prefix in the base URL', () => {
  let upstream: FakeUpstream;
  let client: HttpClient;

  beforeAll(async () => {
    client = new HttpClient({ ca: (await getTestPki()).caPem });
    upstream = await startFakeUpstream({ prefix: '/crtsh', routes: { '/': { json: { root: true } } } });
  });

  afterAll(async () => {
    await client.close();
    await upstream.close();
  });

  it('keeps the prefix when joining paths', async () => {
    expect(upstream.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+\/crtsh$/);
    for (const base of [upstream.url, `${upstream.url}/`]) {
      const res = await client.getJson<{ root: boolean }>(joinUrl(base, '/?q=example.com&output=json'), {
        signal: ok(),
      });
      expect(res.data).toEqual({ root: true });
    }
    expect(upstream.count('/')).toBe(2);
    expect(upstream.requests[0]?.query.get('q')).toBe('example.com');
  });

  it('a request that drops the prefix gets a 404', async () => {
    const res = await client.send(`https://127.0.0.1:${upstream.port}/?q=example.com`, { signal: ok() });
    expect(res.status).toBe(404);
  });
});

describe('HttpClient over HTTP/2', () => {
  it('talks to an http2 fake when allowH2 is set', async () => {
    const client = new HttpClient({ ca: (await getTestPki()).caPem, allowH2: true });
    const upstream = await startFakeUpstream({ http2: true, routes: { '/json': { json: { h2: true } } } });
    try {
      const res = await client.getJson<{ h2: boolean }>(`${upstream.url}/json`, { signal: ok() });
      expect(res.data).toEqual({ h2: true });
      // Pseudo-headers exist only over HTTP/2, so this proves ALPN picked h2.
      expect(upstream.requests[0]?.headers[':method']).toBe('GET');
    } finally {
      await client.close();
      await upstream.close();
    }
  });

  it.each([
    ['503', 'http_status'],
    ['429', 'rate_limited'],
    ['garbage', 'bad_response'],
    ['empty', 'bad_response'],
    ['reset', 'network'],
  ] as const)('fault %s → %s over h2 too', async (fault, kind) => {
    const client = new HttpClient({ ca: (await getTestPki()).caPem, allowH2: true });
    const upstream = await startFakeUpstream({ http2: true, routes: { '/json': { json: {} } } });
    try {
      upstream.fault = fault;
      await expectKind(client.getJson(`${upstream.url}/json`, { signal: ok() }), kind);
    } finally {
      await client.close();
      await upstream.close();
    }
  });
});

describe('classifyError', () => {
  const url = 'https://upstream.test/x';

  it.each([
    ['CERT_HAS_EXPIRED', 'tls'],
    ['CERT_NOT_YET_VALID', 'tls'],
    ['ERR_TLS_CERT_ALTNAME_INVALID', 'tls'],
    ['ERR_SSL_SSLV3_ALERT_HANDSHAKE_FAILURE', 'tls'],
    ['UND_ERR_HEADERS_TIMEOUT', 'timeout'],
    ['UND_ERR_CONNECT_TIMEOUT', 'timeout'],
    ['ECONNREFUSED', 'network'],
    ['ECONNRESET', 'network'],
  ] as const)('%s → %s', (code, kind) => {
    expect(classifyError(Object.assign(new Error('x'), { code }), url).kind).toBe(kind);
    // undici often wraps the socket error as `cause`.
    expect(classifyError(new Error('fetch failed', { cause: { code } }), url).kind).toBe(kind);
  });

  it('treats a DOMException TimeoutError (numeric code) as a timeout, not a crash', () => {
    expect(classifyError(new DOMException('timed out', 'TimeoutError'), url).kind).toBe('timeout');
    expect(classifyError(new DOMException('aborted', 'AbortError'), url).kind).toBe('timeout');
  });

  it('copes with a thrown non-object', () => {
    expect(classifyError(null, url).kind).toBe('network');
    expect(classifyError('boom', url).kind).toBe('network');
  });
});

// The client tests above lean on these behaviours of the fake itself.
describe('fake upstream', () => {
  it.each([false, true])('close() ends promptly while a request hangs (http2: %s)', async (http2) => {
    const client = new HttpClient({ ca: (await getTestPki()).caPem, allowH2: http2 });
    const upstream = await startFakeUpstream({ http2, routes: { '/json': { json: {} } } });
    try {
      upstream.fault = 'timeout';
      const pending = failureOf(client.send(`${upstream.url}/json`, { signal: AbortSignal.timeout(60_000) }));
      await vi.waitFor(() => expect(upstream.count('/json')).toBe(1));
      const started = Date.now();
      await upstream.close();
      // Not held until the request's 60 s signal ends it.
      expect(Date.now() - started).toBeLessThan(10_000);
      // The hanging request sees its connection go away, not a 15 s timeout.
      expect((await pending).kind).toBe('network');
    } finally {
      await client.close();
    }
  });

  it("routes 'METHOD /path' before '/path', then the handler, recording each request", async () => {
    const client = new HttpClient({ ca: (await getTestPki()).caPem });
    const upstream = await startFakeUpstream({
      routes: {
        'POST /v1/items': (req) => ({ status: 201, json: { got: JSON.parse(req.body.toString()) } }),
        '/v1/items': { json: { list: [] } },
      },
      handler: (req) => ({ json: { fallback: req.path, q: req.query.get('q') }, delayMs: 50 }),
    });
    try {
      const created = await client.send(`${upstream.url}/v1/items`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ a: 1 }),
        signal: ok(),
      });
      expect(created.status).toBe(201);
      expect(JSON.parse(created.body.toString())).toEqual({ got: { a: 1 } });
      expect((await client.getJson(`${upstream.url}/v1/items`, { signal: ok() })).data).toEqual({ list: [] });
      expect((await client.getJson(`${upstream.url}/other?q=1`, { signal: ok() })).data).toEqual({
        fallback: '/other',
        q: '1',
      });
      expect(upstream.requests.map((r) => `${r.method} ${r.path}`)).toEqual([
        'POST /v1/items',
        'GET /v1/items',
        'GET /other',
      ]);
      upstream.fault = '503';
      upstream.reset();
      expect(upstream.count()).toBe(0);
      expect(upstream.fault).toBe('none');
    } finally {
      await client.close();
      await upstream.close();
    }
  });

  it('reads fixtures from test/fixtures', () => {
    expect(Array.isArray(CRTSH)).toBe(true);
    expect(fixtureText('README.md')).toContain('fixtures');
    // dns/wire-*.bin are raw DNS messages: 12-byte header first.
    expect(fixtureBytes('dns/wire-query-hello.world.com-A.bin').length).toBeGreaterThan(12);
  });
});
