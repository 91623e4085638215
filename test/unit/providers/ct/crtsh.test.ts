/**
 * The crt.sh adapter against a fake crt.sh on loopback (real TLS and HTTP,
 * the production HTTP client): its two searches, its row mapping, and its
 * retry policy (502/503 once with jitter; a database timeout once with
 * exclude=expired; nothing else).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { testConfig } from '../../../../src/config/index.js';
import { providerCatalog } from '../../../../src/providers/catalog.js';
import {
  CrtshProvider,
  crtshRowToIssuance,
  isDatabaseTimeout,
  parseCrtshRows,
  searchUrl,
} from '../../../../src/providers/ct/crtsh.js';
import { HttpClient, USER_AGENT } from '../../../../src/providers/http-client.js';
import { ProviderError } from '../../../../src/providers/types.js';
import { rejectionOf } from '../../../expect-error.js';
import {
  type FakeHandler,
  type FakeReply,
  type FakeRequest,
  type FakeUpstream,
  fixture,
  fixtureText,
  startFakeUpstream,
} from '../../../fakes/https-upstream.js';
import { getTestPki } from '../../../fakes/test-ca.js';

const APEX_ROWS = fixture('ct/crtsh-example.com.json') as unknown[];
const SUB_ROWS = fixture('ct/crtsh-scenario-example.com-subdomains.json') as unknown[];
const TIMEOUT_PAGE = fixtureText('ct/crtsh-503-statement-timeout.html');

const json = (rows: unknown): FakeReply => ({ json: rows });
const generic503: FakeReply = { status: 503, json: { error: 'Service Unavailable' } };
const dbTimeout: FakeReply = {
  status: 503,
  headers: { 'content-type': 'text/html; charset=UTF-8' },
  body: TIMEOUT_PAGE,
};

/** A crt.sh that answers per search (`q`), each search from a script of replies used in turn (the last repeats). */
function scripted(scripts: Record<string, FakeReply[]>): FakeHandler {
  const used: Record<string, number> = {};
  return (req: FakeRequest) => {
    const q = req.query.get('q') ?? '';
    const script = scripts[q];
    if (!script) return { status: 404, json: { error: `no script for q=${q}` } };
    const i = Math.min(used[q] ?? 0, script.length - 1);
    used[q] = (used[q] ?? 0) + 1;
    return script[i] as FakeReply;
  };
}

let crtsh: FakeUpstream;
let handler: FakeHandler = () => ({ status: 500 });
let http: HttpClient;

beforeAll(async () => {
  http = new HttpClient({ ca: (await getTestPki()).caPem });
  // The prefix proves the adapter keeps a base URL's path.
  crtsh = await startFakeUpstream({ prefix: '/crtsh', handler: (req) => handler(req) });
});
afterEach(() => crtsh.reset());
afterAll(async () => {
  await http.close();
  await crtsh.close();
});

function provider(opts: { requestTimeoutMs?: number } = {}): CrtshProvider {
  const info = providerCatalog(testConfig({ crtshUrl: crtsh.url })).crtsh;
  return new CrtshProvider(info, http, { retryDelayMs: () => 0, ...opts });
}

const searches = (q: string) => crtsh.requests.filter((r) => r.query.get('q') === q);

const failure = (promise: Promise<unknown>) => rejectionOf(promise, ProviderError);

describe('crt.sh searches', () => {
  it('asks q=%.D and q=D as JSON, with a descriptive User-Agent, under the base path', async () => {
    handler = scripted({ '%.example.com': [json(SUB_ROWS)], 'example.com': [json(APEX_ROWS)] });
    await provider().issuances('example.com', AbortSignal.timeout(5000));
    expect(crtsh.requests).toHaveLength(2);
    for (const req of crtsh.requests) {
      expect(req.path).toBe('/');
      expect(req.query.get('output')).toBe('json');
      expect(req.query.has('exclude')).toBe(false);
      expect(req.headers['user-agent']).toBe(USER_AGENT);
      expect(req.headers['user-agent']).toMatch(/netdiag/);
    }
    expect(crtsh.requests.map((r) => r.query.get('q')).sort()).toEqual(['%.example.com', 'example.com']);
  });

  it('sends `%` as %25 (crt.sh decodes `%ac` and friends as bytes otherwise)', () => {
    expect(searchUrl('https://crt.sh', '%.example.com', false)).toBe(
      'https://crt.sh/?q=%25.example.com&output=json',
    );
    expect(searchUrl('https://host/crtsh/', 'example.com', true)).toBe(
      'https://host/crtsh/?q=example.com&output=json&exclude=expired',
    );
  });

  it('merges the two searches by certificate id, uniting the names each one matched', async () => {
    handler = scripted({ '%.example.com': [json(SUB_ROWS)], 'example.com': [json(APEX_ROWS)] });
    const { issuances, truncated, expired_excluded } = await provider().issuances(
      'example.com',
      AbortSignal.timeout(5000),
    );
    expect(truncated).toBe(false);
    expect(expired_excluded).toBe(false);
    // 23 apex rows + 5 scenario rows, one of which (8913351873) is in both.
    expect(issuances).toHaveLength(27);
    expect(issuances.filter((i) => i.id === '8913351873')).toEqual([
      expect.objectContaining({ dns_names: ['example.com', 'www.example.com', 'www.example.org'] }),
    ]);
  });

  it('an empty history is an answer', async () => {
    handler = scripted({ '%.example.com': [json([])], 'example.com': [json([])] });
    expect(await provider().issuances('example.com', AbortSignal.timeout(5000))).toEqual({
      issuances: [],
      truncated: false,
      expired_excluded: false,
    });
  });
});

describe('crt.sh retry policy', () => {
  it('retries a 502 once, then answers', async () => {
    handler = scripted({
      '%.example.com': [{ status: 502, body: '<html>502 Bad Gateway</html>' }, json(SUB_ROWS)],
      'example.com': [json(APEX_ROWS)],
    });
    const { issuances } = await provider().issuances('example.com', AbortSignal.timeout(5000));
    expect(issuances).toHaveLength(27);
    expect(searches('%.example.com')).toHaveLength(2);
    expect(searches('example.com')).toHaveLength(1);
  });

  it('gives up after the one retry of a 503, as an http_status failure', async () => {
    handler = scripted({ '%.example.com': [generic503], 'example.com': [json(APEX_ROWS)] });
    const err = await failure(provider().issuances('example.com', AbortSignal.timeout(5000)));
    expect(err.kind).toBe('http_status');
    expect(err.message).toMatch(/HTTP 503/);
    expect(searches('%.example.com')).toHaveLength(2);
  });

  it('waits the jittered delay before the retry', async () => {
    handler = scripted({ '%.example.com': [generic503, json([])], 'example.com': [json([])] });
    const info = providerCatalog(testConfig({ crtshUrl: crtsh.url })).crtsh;
    const delays: number[] = [];
    const started = Date.now();
    await new CrtshProvider(info, http, {
      retryDelayMs: () => {
        delays.push(150);
        return 150;
      },
    }).issuances('example.com', AbortSignal.timeout(5000));
    expect(delays).toEqual([150]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
  });

  it('retries a database timeout once with exclude=expired and says so', async () => {
    handler = scripted({
      '%.example.com': [dbTimeout, json(SUB_ROWS)],
      'example.com': [json(APEX_ROWS)],
    });
    const result = await provider().issuances('example.com', AbortSignal.timeout(5000));
    expect(result.expired_excluded).toBe(true);
    expect(searches('%.example.com').map((r) => r.query.get('exclude'))).toEqual([null, 'expired']);
    expect(searches('example.com').map((r) => r.query.get('exclude'))).toEqual([null]);
  });

  it("treats the front end's own deadline (503 text/plain ERROR) as a database timeout too", async () => {
    handler = scripted({
      '%.example.com': [{ status: 503, headers: { 'content-type': 'text/plain' }, body: 'ERROR' }, json([])],
      'example.com': [json([])],
    });
    expect((await provider().issuances('example.com', AbortSignal.timeout(5000))).expired_excluded).toBe(
      true,
    );
  });

  it('fails when the database times out even with exclude=expired, without a third try', async () => {
    handler = scripted({ '%.example.com': [dbTimeout], 'example.com': [json([])] });
    const err = await failure(provider().issuances('example.com', AbortSignal.timeout(5000)));
    expect(err.kind).toBe('http_status');
    expect(err.message).toMatch(/database timeout/);
    expect(searches('%.example.com')).toHaveLength(2);
  });

  it('does not retry a 429 (rate limited: the chain falls back)', async () => {
    handler = scripted({ '%.example.com': [{ status: 429, json: {} }], 'example.com': [json([])] });
    expect((await failure(provider().issuances('example.com', AbortSignal.timeout(5000)))).kind).toBe(
      'rate_limited',
    );
    expect(searches('%.example.com')).toHaveLength(1);
  });

  it('does not retry other statuses', async () => {
    handler = scripted({ '%.example.com': [{ status: 500, json: {} }], 'example.com': [json([])] });
    expect((await failure(provider().issuances('example.com', AbortSignal.timeout(5000)))).kind).toBe(
      'http_status',
    );
    expect(searches('%.example.com')).toHaveLength(1);
  });

  it('an unparseable 200 is a bad_response failure', async () => {
    handler = scripted({ '%.example.com': [json([])], 'example.com': [json([])] });
    crtsh.fault = 'garbage';
    expect((await failure(provider().issuances('example.com', AbortSignal.timeout(5000)))).kind).toBe(
      'bad_response',
    );
  });

  it('JSON that is not an array is a bad_response failure', async () => {
    handler = scripted({ '%.example.com': [json({ error: 'nope' })], 'example.com': [json([])] });
    expect((await failure(provider().issuances('example.com', AbortSignal.timeout(5000)))).kind).toBe(
      'bad_response',
    );
  });

  it('bounds each request with its own timeout', async () => {
    crtsh.fault = 'timeout';
    const started = Date.now();
    const err = await failure(
      provider({ requestTimeoutMs: 200 }).issuances('example.com', AbortSignal.timeout(60_000)),
    );
    expect(err.kind).toBe('timeout');
    // Ended by the request's own 200 ms (and one retry), not the caller's 60 s.
    expect(Date.now() - started).toBeLessThan(15_000);
  });

  it('abandons the other search as soon as one fails', async () => {
    handler = scripted({
      '%.example.com': [{ status: 500, json: {} }],
      'example.com': [{ ...json([]), delayMs: 4000 }],
    });
    // Records each request's signal, so the test can see the slow search being cancelled.
    const signals = new Map<string, AbortSignal>();
    const spy: Pick<HttpClient, 'send'> = {
      send: (url, req) => {
        signals.set(new URL(url).searchParams.get('q') ?? '', req.signal);
        return http.send(url, req);
      },
    };
    const info = providerCatalog(testConfig({ crtshUrl: crtsh.url })).crtsh;
    await failure(
      new CrtshProvider(info, spy, { retryDelayMs: () => 0 }).issuances(
        'example.com',
        AbortSignal.timeout(10_000),
      ),
    );
    expect(signals.get('example.com')?.aborted).toBe(true);
  });
});

describe('isDatabaseTimeout', () => {
  it("recognizes crt.sh's database-timeout page and its front end's deadline", () => {
    expect(isDatabaseTimeout(503, TIMEOUT_PAGE)).toBe(true);
    expect(isDatabaseTimeout(503, 'ERROR')).toBe(true);
  });
  it('a plain 502/503 is not one', () => {
    expect(isDatabaseTimeout(503, '{"error":"Service Unavailable"}')).toBe(false);
    expect(isDatabaseTimeout(502, TIMEOUT_PAGE)).toBe(false);
    expect(isDatabaseTimeout(503, '<html><body><h1>503 Service Unavailable</h1></body></html>')).toBe(false);
  });
});

describe('crt.sh rows', () => {
  it('maps a current-schema row exactly', () => {
    expect(crtshRowToIssuance(APEX_ROWS[0], 'crtsh')).toEqual({
      id: '8913351873',
      source_id: 'crtsh',
      serial: '0c1fcb184518c7e3866741236d6b73f1',
      issuer: { name: 'DigiCert TLS RSA SHA256 2020 CA1', organization: 'DigiCert Inc' },
      common_name: 'www.example.org',
      dns_names: ['example.com', 'www.example.com', 'www.example.org'],
      not_before: '2023-01-13T00:00:00Z',
      not_after: '2024-02-13T23:59:59Z',
      entry_timestamp: '2023-03-17T16:26:38.016Z',
    });
  });

  it('drops emails and non-DNS identities, and leaves out a null entry_timestamp', () => {
    const rows = parseCrtshRows(APEX_ROWS, 'crtsh');
    const notFound = rows.find((r) => r.id === '8506962125');
    expect(notFound?.dns_names).toEqual(['example.com']);
    expect(notFound).not.toHaveProperty('entry_timestamp');
    expect(notFound?.issuer).toEqual({ name: 'Issuer Not Found', organization: null });
    expect(rows.find((r) => r.id === '10570508844')?.dns_names).toEqual([]);
    // An email-only row keeps only its DNS-shaped CN.
    expect(rows.find((r) => r.id === '34083306')?.dns_names).toEqual(['*.hosted.jivesoftware.com']);
  });

  it('maps legacy-schema rows (no common_name, no serial_number)', () => {
    const rows = parseCrtshRows(fixture('ct/crtsh-python.org-legacy-schema.first300.json'), 'crtsh');
    expect(rows).toHaveLength(300);
    expect(rows[0]).toEqual({
      id: '2665115201',
      source_id: 'crtsh',
      serial: null,
      issuer: { name: "Let's Encrypt Authority X3", organization: "Let's Encrypt" },
      common_name: null,
      dns_names: ['mail.python.org'],
      not_before: '2020-04-04T03:41:42Z',
      not_after: '2020-07-03T03:41:42Z',
      entry_timestamp: '2020-04-04T04:41:42.875Z',
    });
  });

  it('skips rows without an id or dates rather than failing the history', () => {
    expect(parseCrtshRows([{ id: 1 }, { not_before: '2020-01-01T00:00:00' }, null, 'x'], 'crtsh')).toEqual(
      [],
    );
  });
});
