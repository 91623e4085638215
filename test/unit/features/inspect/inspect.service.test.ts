/**
 * The inspect service with every dependency faked: part isolation, what is
 * cached (target-side failures are evidence, our own failures are not), and
 * that bad input and non-public targets never reach a connection.
 */
import { describe, expect, it } from 'vitest';
import { CachedLoader } from '../../../../src/cache/cached.js';
import { MemoryCache } from '../../../../src/cache/memory.js';
import { AppError, ProviderError } from '../../../../src/errors.js';
import {
  type InspectDeps,
  inspect,
  type TlsInspector,
} from '../../../../src/features/inspect/inspect.service.js';
import type { TlsEvidence } from '../../../../src/features/tls/tls.schema.js';
import { TargetError } from '../../../../src/net/errors.js';
import { resolveTarget } from '../../../../src/net/resolve-target.js';
import type { HopEvidence, SafeFetchResult } from '../../../../src/net/safe-http.js';
import { ProviderChain } from '../../../../src/providers/chain.js';
import type { DnsAnswer } from '../../../../src/providers/dns/types.js';
import { ProviderRegistry } from '../../../../src/providers/registry.js';
import type {
  AddressOrigin,
  OriginProvider,
  RoutingStatusProvider,
} from '../../../../src/providers/routing/types.js';
import type { ProviderInfo } from '../../../../src/providers/types.js';

const ADDRESS = '192.0.2.10';

function answer(rcode: string, answers: DnsAnswer['answers'] = []): DnsAnswer {
  return {
    rcode,
    flags: { aa: false, tc: false, rd: true, ra: true, ad: false, cd: false },
    answers,
    authorities: [],
    ede: [],
  };
}

const info = (id: string): ProviderInfo => ({
  id,
  name: id,
  capabilities: ['routing'],
  docs_url: 'https://example.test',
  access: 'none',
  configured: true,
  endpoint: 'https://example.test',
});

class FakeOrigin implements OriginProvider {
  readonly info: ProviderInfo;
  calls = 0;
  constructor(
    id: string,
    private readonly result: AddressOrigin | Error,
  ) {
    this.info = info(id);
  }
  async origin(): Promise<AddressOrigin> {
    this.calls++;
    if (this.result instanceof Error) throw this.result;
    return this.result;
  }
}

function hop(url: string, status: number, headers: HopEvidence['headers'] = {}): HopEvidence {
  return {
    url,
    status,
    headers,
    httpVersion: '1.1',
    remoteAddress: ADDRESS,
    addresses: [ADDRESS],
    timings: { dns: 0, connect: 1, tls: 0, ttfb: 1, total: 2 },
    ...(url.startsWith('https:')
      ? { tls: { protocol: 'TLSv1.3', alpn: 'http/1.1', cipher: 'x', authorized: true } }
      : {}),
  };
}

interface Setup {
  deps: InspectDeps;
  fetched: string[];
  ttls: number[];
  dnsAsked: string[];
}

function setup(
  opts: { tls?: TlsInspector; origins?: OriginProvider[]; fetchFails?: unknown; resolve?: string } = {},
): Setup {
  const fetched: string[] = [];
  const ttls: number[] = [];
  const dnsAsked: string[] = [];
  const loader = new CachedLoader(new MemoryCache());
  const dns = {
    async resolve(name: string, type: string) {
      dnsAsked.push(`${name} ${type}`);
      if (type === 'A')
        return {
          value: answer('NOERROR', [
            { name, type: 'A', ttl: 60, data: { address: opts.resolve ?? ADDRESS } },
          ]),
        };
      return { value: answer('NXDOMAIN') };
    },
  };
  const chain = new ProviderChain({ loader, registry: new ProviderRegistry(), timeoutMs: 1_000 });
  const statusProvider: RoutingStatusProvider = {
    info: info('ripestat'),
    routingStatus: async () => {
      throw new ProviderError('http_status', 'HTTP 503');
    },
  };
  const deps: InspectDeps = {
    dns,
    // Documentation space stands in for public addresses here, as UNSAFE_ALLOW_TARGET_CIDRS allows in labs.
    resolve: (host) => resolveTarget(host, { resolver: dns, allowCidrs: ['192.0.2.0/24', '2001:db8::/32'] }),
    fetch: async (url, onHop) => {
      fetched.push(url);
      if (opts.fetchFails) throw opts.fetchFails;
      const first = hop(url, 200, { 'x-content-type-options': 'nosniff' });
      onHop(first);
      const result: SafeFetchResult = {
        url,
        hops: [first],
        final: first,
        body: Buffer.alloc(0),
        truncated: false,
        redirectLimitReached: false,
      };
      return result;
    },
    tls: opts.tls ?? (async () => ({ host: 'x' }) as unknown as TlsEvidence),
    chain,
    originProviders: opts.origins ?? [
      new FakeOrigin('ripestat', {
        announced: true,
        prefix: '192.0.2.0/24',
        origins: [{ asn: 64500, holder: 'X' }],
      }),
    ],
    statusProviders: [statusProvider],
    loader: {
      load: (key, load) =>
        loader.load(key, async () => {
          const loaded = await load();
          ttls.push(loaded.ttl);
          return loaded;
        }),
    },
    clock: () => Date.UTC(2025, 0, 1),
  };
  return { deps, fetched, ttls, dnsAsked };
}

describe('inspect service', () => {
  it('fetches http:// and https:// of the normalized host and caches a complete answer 120 s', async () => {
    const s = setup();
    const { body, cache } = await inspect(s.deps, { target: 'Example.TEST.' });
    expect(s.fetched.sort()).toEqual(['http://example.test/', 'https://example.test/']);
    expect(body).toMatchObject({
      target: 'example.test',
      checked_at: '2025-01-01T00:00:00.000Z',
      addresses: [ADDRESS],
    });
    expect(body.network.addresses[0]).toMatchObject({ asn: 64500, reverse_dns: { status: 'ok', names: [] } });
    // Stored by the loader, on its own (real) clock.
    expect(cache).toEqual({ hit: false, maxAge: 120, expiresAt: expect.closeTo(Date.now() + 120_000, -4) });
    expect((await inspect(s.deps, { target: 'example.test' })).cache.hit).toBe(true);
  });

  it('brackets an IPv6 literal in the URLs and asks DNS nothing for it', async () => {
    const s = setup();
    const { body } = await inspect(s.deps, { target: '2001:DB8::1', include_tls: false });
    expect(s.fetched.sort()).toEqual(['http://[2001:db8::1]/', 'https://[2001:db8::1]/']);
    expect(body.target_type).toBe('ip');
    expect(s.dnsAsked.every((q) => q.endsWith('PTR'))).toBe(true);
  });

  it('refuses a non-public target before fetching anything', async () => {
    const s = setup({ resolve: '10.0.0.1' });
    await expect(inspect(s.deps, { target: 'example.test' })).rejects.toMatchObject({ statusCode: 400 });
    expect(s.fetched).toEqual([]);
  });

  it('validates `ip` before resolving the target', async () => {
    const s = setup();
    await expect(inspect(s.deps, { target: 'example.test', ip: '192.168.1.1' })).rejects.toMatchObject({
      statusCode: 400,
    });
    expect(s.dnsAsked).toEqual([]);
  });

  it('caches a target-side TLS failure (evidence) with its stage', async () => {
    const failed = new AppError(502, 'upstream_failed', 'TLS handshake failed at the connect stage', {
      cause: new TargetError('network', 'connect', 'ECONNREFUSED'),
    });
    const s = setup({ tls: async () => Promise.reject(failed) });
    const { body, cache } = await inspect(s.deps, { target: 'example.test' });
    expect(body.tls).toEqual({ status: 'error', error: failed.message, stage: 'connect' });
    expect(cache.maxAge).toBe(120);
  });

  it('does not cache an answer in which our own lookup failed', async () => {
    const dnsDown = new AppError(502, 'upstream_failed', 'dns: every provider failed', {
      providersTried: [],
    });
    const s = setup({ tls: async () => Promise.reject(dnsDown) });
    const first = await inspect(s.deps, { target: 'example.test' });
    expect(first.body.tls).toMatchObject({ status: 'error', stage: 'dns' });
    expect(first.cache.maxAge).toBe(0);
    expect(s.ttls).toEqual([0]);
  });

  it('falls back to the second origin provider and keeps going when routing fails', async () => {
    const ripestat = new FakeOrigin('ripestat', new ProviderError('timeout', 'no answer'));
    const cymru = new FakeOrigin('cymru', { announced: false, prefix: null, origins: [] });
    const s = setup({ origins: [ripestat, cymru] });
    const { body, cache } = await inspect(s.deps, {
      target: 'example.test',
      ip: '193.0.6.139',
      include_tls: false,
    });
    expect(body.network.addresses[0]).toMatchObject({ status: 'ok', announced: false, source_id: 'cymru' });
    expect(body.network.addresses[0]?.providers_tried.map((p) => p.status)).toEqual(['failed', 'ok']);
    expect(body.routing).toMatchObject({ status: 'error', ip: '193.0.6.139' });
    expect(body.http.status).toBe('ok');
    expect(cache.maxAge).toBe(0);
  });

  it('reports both chains failing as the http part’s error, not the request’s', async () => {
    const s = setup({ fetchFails: new TargetError('timeout', 'connect', 'example.test: connect timed out') });
    const { body } = await inspect(s.deps, { target: 'example.test', include_tls: false });
    expect(body.http).toMatchObject({ status: 'error', final: null });
    expect(body.http.chains.http).toMatchObject({ status: 'error', stage: 'connect' });
    expect(body.security_headers).toEqual({
      status: 'error',
      error: 'no HTTP or HTTPS response to read headers from',
    });
  });

  it('lets a bug in a part (a TypeError in an adapter or the fetcher) fail the request, never show its text as the part’s error', async () => {
    const bug = new TypeError("Cannot read properties of undefined (reading 'asn')");
    const origin = setup({ origins: [new FakeOrigin('ripestat', bug)] });
    await expect(
      inspect(origin.deps, { target: 'example.test', ip: '193.0.6.139', include_tls: false }),
    ).rejects.toBe(bug);
    const fetcher = setup({ fetchFails: bug });
    await expect(inspect(fetcher.deps, { target: 'example.test', include_tls: false })).rejects.toBe(bug);
  });
});
