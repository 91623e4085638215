/**
 * The crt.sh adapter against the fake crt.sh on loopback (real TLS and HTTP,
 * the production HTTP client, crt.sh's own answers and error pages): its one
 * search, its row mapping, its reading of crt.sh's result limit, and its
 * retry policy (exclude=expired only when crt.sh ran out of time; one plain
 * retry for other passing trouble; nothing else).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { testConfig } from '../../../../src/config/index.js';
import { ProviderError } from '../../../../src/errors.js';
import { USER_AGENT } from '../../../../src/net/user-agent.js';
import { providerCatalog } from '../../../../src/providers/catalog.js';
import {
  CRTSH_RESULT_LIMIT,
  CrtshProvider,
  crtshFailure,
  crtshRowToIssuance,
  matchedNameCount,
  parseCrtshRows,
  searchUrl,
} from '../../../../src/providers/ct/crtsh.js';
import { HttpClient } from '../../../../src/providers/http-client.js';
import { rejectionOf } from '../../../expect-error.js';
import {
  CRTSH_DEADLINE,
  CRTSH_OVERLOADED,
  CRTSH_RECOVERY_CONFLICT,
  CRTSH_STATEMENT_TIMEOUT,
  crtshDatabaseError,
  type FakeCrtsh,
  startCrtsh,
} from '../../../fakes/crtsh.js';
import { fixture, fixtureText } from '../../../fakes/https-upstream.js';
import { getTestPki } from '../../../fakes/test-ca.js';

const NOW = Date.parse('2025-06-01T00:00:00Z');
const APEX_ROWS = fixture('ct/crtsh-example.com.json') as unknown[];
const EXAMPLE = fixture('ct/crtsh-scenario-example.com.json') as { id: number; not_after: string }[];
const AT_CAP = fixture('ct/crtsh-scenario-big.test-at-cap.json') as { result_count: number }[];
const TIMEOUT_PAGE = fixtureText('ct/crtsh-503-statement-timeout.html');

let crtsh: FakeCrtsh;
let http: HttpClient;

beforeAll(async () => {
  http = new HttpClient({ ca: (await getTestPki()).caPem });
  // Under /crtsh: the adapter must keep a base URL's path.
  crtsh = await startCrtsh({ answers: { 'example.com': EXAMPLE, 'big.test': AT_CAP }, clock: () => NOW });
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

const lookup = (domain = 'example.com') => provider().issuances(domain, AbortSignal.timeout(5000));
const failure = (promise: Promise<unknown>) => rejectionOf(promise, ProviderError);
const excludes = (value = 'example.com') => crtsh.searches(value).map((r) => r.query.get('exclude'));

describe('crt.sh search', () => {
  it('is one identity search, q=D, as JSON, with a descriptive User-Agent, under the base path', async () => {
    await lookup();
    expect(crtsh.requests).toHaveLength(1);
    const [req] = crtsh.requests;
    expect(req?.path).toBe('/');
    expect(req?.query.get('q')).toBe('example.com');
    expect(req?.query.get('output')).toBe('json');
    expect(req?.query.has('exclude')).toBe(false);
    expect(req?.headers['user-agent']).toBe(USER_AGENT);
    expect(req?.headers['user-agent']).toMatch(/netdiag/);
  });

  it('sends `%` as %25 (crt.sh decodes `%ac` and friends as bytes otherwise)', () => {
    expect(searchUrl('https://crt.sh', '%.example.com', false)).toBe(
      'https://crt.sh/?q=%25.example.com&output=json',
    );
    expect(searchUrl('https://host/crtsh/', 'example.com', true)).toBe(
      'https://host/crtsh/?q=example.com&output=json&exclude=expired',
    );
  });

  it('maps every row of the answer, one certificate each, and finds it whole', async () => {
    const { issuances, gaps } = await lookup();
    expect(issuances).toHaveLength(EXAMPLE.length);
    expect(gaps).toEqual([]);
    // One search lists a certificate once, with every name of it that matched.
    expect(issuances.filter((i) => i.id === '8913351873')).toEqual([
      expect.objectContaining({ dns_names: ['example.com', 'www.example.com', 'www.example.org'] }),
    ]);
  });

  it('an empty history is an answer', async () => {
    expect(await lookup('nothing.test')).toEqual({ issuances: [], gaps: [] });
  });
});

describe("crt.sh's result limit", () => {
  it('an answer whose result_counts reach 10 000 is an arbitrary subset, and says so', async () => {
    const { issuances, gaps } = await lookup('big.test');
    // 244 certificates, far fewer than 10 000 rows: the names are what is counted.
    expect(issuances).toHaveLength(244);
    expect(gaps).toEqual([
      {
        reason: 'result_cap',
        detail: expect.stringMatching(/10,000 matching names .*arbitrary subset.*not the newest/),
      },
    ]);
  });

  it('one name short of the limit is a whole answer', async () => {
    const [first, ...rest] = AT_CAP;
    crtsh.answers['short.test'] = [{ ...first, result_count: (first?.result_count ?? 0) - 1 }, ...rest];
    expect((await lookup('short.test')).gaps).toEqual([]);
  });

  it('counts result_count, a row without it as one name (a lower bound), never below one', () => {
    expect(CRTSH_RESULT_LIMIT).toBe(10_000);
    expect(matchedNameCount(AT_CAP)).toBe(10_000);
    expect(matchedNameCount(EXAMPLE)).toBe(68);
    expect(matchedNameCount(APEX_ROWS)).toBe(APEX_ROWS.length);
    expect(
      matchedNameCount([{ result_count: 3 }, {}, { result_count: 0 }, { result_count: '7' }, null]),
    ).toBe(7);
    expect(matchedNameCount(Array.from({ length: 10_000 }, () => ({})))).toBe(10_000);
  });

  it('after exclude=expired, an answer at the limit has both gaps', async () => {
    crtsh.failures['big.test'] = [CRTSH_STATEMENT_TIMEOUT];
    crtsh.answers['big.test'] = AT_CAP.map((row) => ({ ...row, not_after: '2025-08-01T00:00:00' }));
    try {
      expect((await lookup('big.test')).gaps.map((g) => g.reason)).toEqual([
        'result_cap',
        'expired_excluded',
      ]);
    } finally {
      crtsh.answers['big.test'] = AT_CAP;
    }
  });
});

describe('crt.sh retry policy', () => {
  it('asks again with exclude=expired after a statement timeout, and says expired history is missing', async () => {
    crtsh.failures['example.com'] = [CRTSH_STATEMENT_TIMEOUT];
    const { issuances, gaps } = await lookup();
    expect(excludes()).toEqual([null, 'expired']);
    expect(gaps).toEqual([
      { reason: 'expired_excluded', detail: expect.stringMatching(/unexpired certificates only/) },
    ]);
    // crt.sh left out what had expired by its clock.
    const unexpired = EXAMPLE.filter((r) => Date.parse(`${r.not_after}Z`) >= NOW).map((r) => String(r.id));
    expect(issuances.map((i) => i.id).sort()).toEqual(unexpired.sort());
  });

  it("does the same when the search outlived crt.sh's 30 s request deadline (503 text/plain ERROR)", async () => {
    crtsh.failures['example.com'] = [CRTSH_DEADLINE];
    expect((await lookup()).gaps.map((g) => g.reason)).toEqual(['expired_excluded']);
    expect(excludes()).toEqual([null, 'expired']);
  });

  it('fails, naming the statement timeout, when even exclude=expired runs out of time; no third try', async () => {
    crtsh.failures['example.com'] = [CRTSH_STATEMENT_TIMEOUT, CRTSH_STATEMENT_TIMEOUT];
    const err = await failure(lookup());
    expect(err.kind).toBe('upstream_error');
    expect(err.message).toMatch(
      /^crt\.sh's database stopped the search at its statement timeout \(HTTP 503 from 127\.0\.0\.1:\d+\), even with exclude=expired$/,
    );
    expect(excludes()).toEqual([null, 'expired']);
  });

  it('another database error is not a reason to leave expired certificates out: one plain retry', async () => {
    crtsh.failures['example.com'] = [CRTSH_RECOVERY_CONFLICT];
    const { issuances, gaps } = await lookup();
    expect(excludes()).toEqual([null, null]);
    expect(gaps).toEqual([]);
    expect(issuances).toHaveLength(EXAMPLE.length);
  });

  it("fails after that one retry, quoting crt.sh's database message", async () => {
    crtsh.failures['example.com'] = [CRTSH_RECOVERY_CONFLICT, CRTSH_RECOVERY_CONFLICT];
    const err = await failure(lookup());
    expect(err.kind).toBe('upstream_error');
    expect(err.message).toMatch(
      /^crt\.sh's database failed \(HTTP 503 from 127\.0\.0\.1:\d+\): FATAL: terminating connection due to conflict with recovery \(SQLSTATE 40001\)$/,
    );
    expect(excludes()).toEqual([null, null]);
  });

  it('does not retry an error the search function raised itself: it refuses this search', async () => {
    crtsh.failures['example.com'] = [crtshDatabaseError("ERROR: Unsupported use of '%' (SQLSTATE P0002)")];
    const err = await failure(lookup());
    expect(err.message).toMatch(
      /^crt\.sh refused the search \(HTTP 503 from [^)]+\): ERROR: Unsupported use of '%'/,
    );
    expect(crtsh.requests).toHaveLength(1);
  });

  it('retries a 502 once, then answers', async () => {
    crtsh.failures['example.com'] = [{ status: 502, body: '<html>502 Bad Gateway</html>' }];
    expect((await lookup()).issuances).toHaveLength(EXAMPLE.length);
    expect(excludes()).toEqual([null, null]);
  });

  it('gives up after the one retry of an overloaded 503, as an http_status failure', async () => {
    crtsh.failures['example.com'] = [CRTSH_OVERLOADED, CRTSH_OVERLOADED];
    const err = await failure(lookup());
    expect(err.kind).toBe('http_status');
    expect(err.message).toMatch(/^HTTP 503 from /);
    expect(crtsh.requests).toHaveLength(2);
  });

  it('waits the jittered delay before the retry', async () => {
    crtsh.failures['example.com'] = [CRTSH_OVERLOADED];
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

  it('does not retry a 429 (rate limited: the chain falls back)', async () => {
    crtsh.failures['example.com'] = [{ status: 429, json: {} }];
    expect((await failure(lookup())).kind).toBe('rate_limited');
    expect(crtsh.requests).toHaveLength(1);
  });

  it('does not retry other statuses', async () => {
    crtsh.failures['example.com'] = [{ status: 500, json: {} }];
    expect((await failure(lookup())).kind).toBe('http_status');
    expect(crtsh.requests).toHaveLength(1);
  });

  it('an unparseable 200 is a bad_response failure', async () => {
    crtsh.fault = 'garbage';
    expect((await failure(lookup())).kind).toBe('bad_response');
  });

  it('JSON that is not an array is a bad_response failure', async () => {
    crtsh.failures['example.com'] = [{ json: { error: 'nope' } }];
    expect((await failure(lookup())).kind).toBe('bad_response');
  });

  it('bounds each request with its own timeout', async () => {
    crtsh.fault = 'timeout';
    const started = Date.now();
    const err = await failure(
      provider({ requestTimeoutMs: 200 }).issuances('example.com', AbortSignal.timeout(60_000)),
    );
    expect(err.kind).toBe('timeout');
    // Ended by the request's own 200 ms, not the caller's 60 s.
    expect(Date.now() - started).toBeLessThan(15_000);
  });
});

describe('crtshFailure', () => {
  const read = (status: number, body: string) => crtshFailure(status, body, 'crt.sh');

  it('a statement timeout and the front end deadline are out of time', () => {
    expect(read(503, TIMEOUT_PAGE)).toMatchObject({
      kind: 'upstream_error',
      outOfTime: true,
      transient: false,
    });
    expect(read(503, 'ERROR')).toMatchObject({ kind: 'upstream_error', outOfTime: true, transient: false });
  });

  it('any other database error page is passing trouble, not a matter of size', () => {
    const page = crtshDatabaseError('FATAL: sorry, too many clients already (SQLSTATE 53300)');
    expect(read(503, String(page.body))).toEqual({
      kind: 'upstream_error',
      text: "crt.sh's database failed (HTTP 503 from crt.sh): FATAL: sorry, too many clients already (SQLSTATE 53300)",
      outOfTime: false,
      transient: true,
    });
  });

  it('quotes one line of the message, unescaped and bounded', () => {
    const long = `ERROR: "x" <y> & z ${'q'.repeat(400)}\nCONTEXT: SQL statement "SELECT ..."`;
    const { text } = read(503, String(crtshDatabaseError(long).body));
    expect(text).toMatch(/: ERROR: "x" <y> & z q+…$/);
    expect(text).not.toContain('CONTEXT');
    expect(text.length).toBeLessThan(300);
  });

  it('a plain 502/503 is passing trouble; another status is not', () => {
    expect(read(503, String(CRTSH_OVERLOADED.body))).toEqual({
      kind: 'http_status',
      text: 'HTTP 503 from crt.sh',
      outOfTime: false,
      transient: true,
    });
    expect(read(502, TIMEOUT_PAGE)).toMatchObject({ kind: 'http_status', outOfTime: false, transient: true });
    expect(read(404, '')).toMatchObject({ kind: 'http_status', outOfTime: false, transient: false });
  });
});

describe('crt.sh rows', () => {
  it('maps a current-schema row exactly', () => {
    expect(
      crtshRowToIssuance(
        EXAMPLE.find((r) => r.id === 8913351873),
        'crtsh',
      ),
    ).toEqual({
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
