/**
 * The Cert Spotter adapter against a fake API on loopback: Bearer key,
 * expansions, paging with `after` up to a cap, and the mapping of the real
 * sslmate.com issuance.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { testConfig } from '../../../../src/config/index.js';
import { ProviderError } from '../../../../src/errors.js';
import { providerCatalog } from '../../../../src/providers/catalog.js';
import {
  CertspotterProvider,
  certspotterToIssuance,
  issuancesUrl,
} from '../../../../src/providers/ct/certspotter.js';
import { HttpClient } from '../../../../src/providers/http-client.js';
import { rejectionOf } from '../../../expect-error.js';
import {
  type FakeRequest,
  type FakeUpstream,
  fixture,
  startFakeUpstream,
} from '../../../fakes/https-upstream.js';
import { getTestPki } from '../../../fakes/test-ca.js';

const KEY = 'k_test_0123456789abcdef';
const PAGE1 = fixture('ct/certspotter-scenario-example.com-page1.json') as { id: string }[];
const PAGE2 = fixture('ct/certspotter-scenario-example.com-page2.json') as { id: string }[];

/** Pages keyed by the `after` they follow ('' for the first); anything else is an empty page. */
let pages: Record<string, unknown[]> = {};

let api: FakeUpstream;
let http: HttpClient;

beforeAll(async () => {
  http = new HttpClient({ ca: (await getTestPki()).caPem });
  api = await startFakeUpstream({
    routes: {
      '/v1/issuances': (req: FakeRequest) => {
        // Like the real API: no valid key, no data.
        if (req.headers.authorization !== `Bearer ${KEY}`)
          return { status: 401, json: { code: 'unauthorized' } };
        return { json: pages[req.query.get('after') ?? ''] ?? [] };
      },
    },
  });
});
afterEach(() => api.reset());
afterAll(async () => {
  await http.close();
  await api.close();
});

function provider(opts: { apiKey?: string; maxPages?: number } = {}): CertspotterProvider {
  const info = providerCatalog(testConfig({ certspotterUrl: api.url, certspotterApiKey: KEY })).certspotter;
  return new CertspotterProvider(info, http, { apiKey: KEY, pageTimeoutMs: 2000, ...opts });
}

const failure = (promise: Promise<unknown>) => rejectionOf(promise, ProviderError);

describe('Cert Spotter issuances', () => {
  it('sends the Bearer key and the expansions, and follows `after` to the empty page', async () => {
    pages = { '': PAGE1, [PAGE1[1]?.id ?? '']: PAGE2 };
    const result = await provider().issuances('example.com', AbortSignal.timeout(5000));
    // The whole of what Cert Spotter holds: its unexpired issuances, never the expired ones.
    expect(result.gaps).toEqual([
      {
        reason: 'unexpired_only',
        detail: 'Cert Spotter lists unexpired certificates only: expired history is missing.',
      },
    ]);
    expect(result.issuances.map((i) => i.id)).toEqual(['7000000101', '7000000102', '7000000203']);

    expect(api.requests.map((r) => r.query.get('after'))).toEqual([null, '7000000102', '7000000203']);
    for (const req of api.requests) {
      expect(req.path).toBe('/v1/issuances');
      expect(req.headers.authorization).toBe(`Bearer ${KEY}`);
      expect(req.query.get('domain')).toBe('example.com');
      expect(req.query.get('include_subdomains')).toBe('true');
      expect(req.query.getAll('expand')).toEqual(['dns_names', 'issuer']);
    }
  });

  it('stops at the page cap and says what is missing', async () => {
    pages = { '': PAGE1, [PAGE1[1]?.id ?? '']: PAGE2 };
    const result = await provider({ maxPages: 1 }).issuances('example.com', AbortSignal.timeout(5000));
    expect(result.gaps).toEqual([
      expect.objectContaining({ reason: 'unexpired_only' }),
      { reason: 'page_cap', detail: expect.stringMatching(/more than the 1 pages read/) },
    ]);
    expect(result.issuances).toHaveLength(2);
    expect(api.count()).toBe(1);
  });

  it('an empty first page is an empty history (of unexpired issuances)', async () => {
    pages = {};
    const result = await provider().issuances('example.com', AbortSignal.timeout(5000));
    expect(result.issuances).toEqual([]);
    expect(result.gaps.map((g) => g.reason)).toEqual(['unexpired_only']);
  });

  it('a rejected key is an http_status failure that does not repeat the key', async () => {
    pages = { '': PAGE1 };
    const info = providerCatalog(testConfig({ certspotterUrl: api.url })).certspotter;
    const wrong = new CertspotterProvider(info, http, { apiKey: 'wrong-key-xyz', pageTimeoutMs: 2000 });
    const err = await failure(wrong.issuances('example.com', AbortSignal.timeout(5000)));
    expect(err.kind).toBe('http_status');
    expect(err.message).toMatch(/401/);
    expect(err.message).not.toContain('wrong-key-xyz');
  });

  it('a page that repeats its cursor is a bad_response, not an endless loop', async () => {
    pages = { '': PAGE1, [PAGE1[1]?.id ?? '']: PAGE1 };
    expect((await failure(provider().issuances('example.com', AbortSignal.timeout(5000)))).kind).toBe(
      'bad_response',
    );
  });

  it('builds the documented URL under a base path', () => {
    expect(issuancesUrl('https://host/cs/', 'example.com', '42')).toBe(
      'https://host/cs/v1/issuances?domain=example.com&include_subdomains=true&expand=dns_names&expand=issuer&after=42',
    );
  });
});

describe('Cert Spotter mapping', () => {
  it('maps the real sslmate.com issuance', () => {
    const [real] = fixture('ct/certspotter-issuances-sslmate.com.json') as unknown[];
    expect(certspotterToIssuance(real, 'certspotter')).toEqual({
      id: '4326219514',
      source_id: 'certspotter',
      serial: null,
      issuer: { name: 'Sectigo RSA Domain Validation Secure Server CA', organization: 'Sectigo Limited' },
      common_name: null,
      dns_names: [
        'certs.sandbox.sslmate.com',
        'certs.sslmate.com',
        'sandbox.sslmate.com',
        'sslmate.com',
        'www.sslmate.com',
      ],
      not_before: '2022-10-22T00:00:00Z',
      not_after: '2023-11-21T23:59:59Z',
      revoked: false,
    });
  });

  it('falls back to the friendly name without an issuer DN', () => {
    expect(
      certspotterToIssuance(
        {
          id: '1',
          not_before: '2022-10-22T00:00:00Z',
          not_after: '2023-10-22T00:00:00Z',
          issuer: { friendly_name: 'Sectigo' },
        },
        'certspotter',
      )?.issuer,
    ).toEqual({ name: 'Sectigo', organization: null });
  });
});
