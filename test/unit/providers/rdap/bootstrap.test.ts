import { describe, expect, it } from 'vitest';
import { ProviderError } from '../../../../src/errors.js';
import {
  BOOTSTRAP_RETRY_MS,
  BOOTSTRAP_TTL_MS,
  BootstrapStore,
  RdapBootstrap,
} from '../../../../src/providers/rdap/bootstrap.js';
import type { HopSender } from '../../../../src/providers/rdap/rdap-fetch.js';
import { RdapFetcher } from '../../../../src/providers/rdap/rdap-fetch.js';
import { RetryAfterGate } from '../../../../src/providers/rdap/retry-after.js';
import type { ProviderInfo } from '../../../../src/providers/types.js';

const FILE = { publication: 'p1', services: [[['test'], ['https://reg.example/rdap/']]] };

/** A fake of HttpClient.getJson: answers from `reply`, counts calls. */
function fakeHttp(reply: () => { status: number; data: unknown }) {
  const urls: string[] = [];
  return {
    urls,
    getJson: async <T>(url: string) => {
      urls.push(url);
      const r = reply();
      return { status: r.status, data: r.data as T, url };
    },
  };
}

const query = { kind: 'domain' as const, name: 'a.test' };

describe('BootstrapStore', () => {
  it('fetches a file once, shares concurrent refreshes, and refetches after 24 h', async () => {
    let now = 0;
    const http = fakeHttp(() => ({ status: 200, data: FILE }));
    const store = new BootstrapStore({
      baseUrl: 'https://iana.example/rdap',
      http,
      clock: () => now,
      timeoutMs: 1000,
    });
    await Promise.all([store.get('dns'), store.get('dns'), store.get('dns')]);
    expect(http.urls).toEqual(['https://iana.example/rdap/dns.json']);
    now = BOOTSTRAP_TTL_MS - 1;
    await store.get('dns');
    expect(http.urls).toHaveLength(1);
    now = BOOTSTRAP_TTL_MS;
    await store.get('dns');
    expect(http.urls).toHaveLength(2);
  });

  it('keeps serving the stale copy when a refresh fails, and waits before trying again', async () => {
    let now = 0;
    let failing = false;
    const stale: string[] = [];
    const http = fakeHttp(() => {
      if (failing) throw new ProviderError('http_status', 'HTTP 503 from iana.example');
      return { status: 200, data: FILE };
    });
    const store = new BootstrapStore({
      baseUrl: 'https://iana.example/rdap/',
      http,
      clock: () => now,
      timeoutMs: 1000,
      onStale: (kind, err) => stale.push(`${kind} ${err.kind}`),
    });
    const first = await store.get('dns');
    failing = true;
    now = BOOTSTRAP_TTL_MS + 1;
    expect(await store.get('dns')).toBe(first);
    expect(stale).toEqual(['dns http_status']);
    expect(http.urls).toHaveLength(2);
    now += BOOTSTRAP_RETRY_MS - 1;
    await store.get('dns');
    expect(http.urls).toHaveLength(2);
    now += 1;
    failing = false;
    await store.get('dns');
    expect(http.urls).toHaveLength(3);
  });

  it('fails when there is no copy at all, and for a non-200 or a file that is not a bootstrap registry', async () => {
    const down = new BootstrapStore({
      baseUrl: 'https://iana.example',
      http: fakeHttp(() => ({ status: 404, data: {} })),
      clock: () => 0,
      timeoutMs: 1000,
    });
    await expect(down.get('ipv4')).rejects.toMatchObject({ kind: 'http_status' });
    const junk = new BootstrapStore({
      baseUrl: 'https://iana.example',
      http: fakeHttp(() => ({ status: 200, data: { hello: 'world' } })),
      clock: () => 0,
      timeoutMs: 1000,
    });
    await expect(junk.get('ipv6')).rejects.toMatchObject({ kind: 'bad_response' });
  });
});

describe('RdapBootstrap', () => {
  const info = { id: 'iana', name: 'IANA' } as ProviderInfo;
  const store = (data: unknown) =>
    new BootstrapStore({
      baseUrl: 'https://iana.example',
      http: fakeHttp(() => ({ status: 200, data })),
      clock: () => 0,
      timeoutMs: 1000,
    });
  const sender = (replies: Record<string, number>): HopSender & { urls: string[] } => {
    const urls: string[] = [];
    const send: HopSender = async (url) => {
      urls.push(url);
      const status = replies[url] ?? 599;
      return status === 200
        ? {
            status,
            headers: {},
            body: Buffer.from(JSON.stringify({ objectClassName: 'domain', ldhName: 'a.test' })),
          }
        : { status, headers: {}, body: Buffer.alloc(0) };
    };
    return Object.assign(send, { urls });
  };

  it('answers no_service for a TLD the bootstrap does not list', async () => {
    const send = sender({});
    const bootstrap = new RdapBootstrap(info, {
      store: store(FILE),
      fetcher: new RdapFetcher(send, new RetryAfterGate(() => 0)),
    });
    expect(await bootstrap.lookup({ kind: 'domain', name: 'a.example' }, AbortSignal.timeout(1000))).toEqual({
      outcome: 'no_service',
      scope: '.example',
    });
    expect(send.urls).toEqual([]);
  });

  it('answers a registry 404 as not_registered (definitive)', async () => {
    const send = sender({ 'https://reg.example/rdap/domain/a.test': 404 });
    const bootstrap = new RdapBootstrap(info, {
      store: store(FILE),
      fetcher: new RdapFetcher(send, new RetryAfterGate(() => 0)),
    });
    expect(await bootstrap.lookup(query, AbortSignal.timeout(1000))).toEqual({
      outcome: 'not_registered',
      url: 'https://reg.example/rdap/domain/a.test',
    });
  });

  it('tries the next base URL of a service only after a failure of the first', async () => {
    const file = { services: [[['test'], ['https://one.example/', 'https://two.example']]] };
    const send = sender({
      'https://one.example/domain/a.test': 503,
      'https://two.example/domain/a.test': 200,
    });
    const bootstrap = new RdapBootstrap(info, {
      store: store(file),
      fetcher: new RdapFetcher(send, new RetryAfterGate(() => 0)),
    });
    expect(await bootstrap.lookup(query, AbortSignal.timeout(1000))).toMatchObject({
      outcome: 'found',
      url: 'https://two.example/domain/a.test',
    });
    expect(send.urls).toEqual(['https://one.example/domain/a.test', 'https://two.example/domain/a.test']);
  });

  it('rejects an answer of the wrong object class as a bad response', async () => {
    const send: HopSender = async () => ({
      status: 200,
      headers: {},
      body: Buffer.from('{"objectClassName":"entity"}'),
    });
    const bootstrap = new RdapBootstrap(info, {
      store: store(FILE),
      fetcher: new RdapFetcher(send, new RetryAfterGate(() => 0)),
    });
    await expect(bootstrap.lookup(query, AbortSignal.timeout(1000))).rejects.toMatchObject({
      kind: 'bad_response',
    });
  });
});
