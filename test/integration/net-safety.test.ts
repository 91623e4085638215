/**
 * Outbound safety end to end (docs/architecture.md §3): the real DNS client against
 * the fake DNS server, the real undici connections against fake targets on
 * 127.0.0.x:80/443. Every refusal is asserted from the target's side too:
 * the refused destination saw no connection at all.
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { CachedLoader } from '../../src/cache/cached.js';
import { MemoryCache } from '../../src/cache/memory.js';
import { AppError } from '../../src/errors.js';
import { TargetError, UnsafeTargetError } from '../../src/net/errors.js';
import { type HopEvidence, safeFetch } from '../../src/net/safe-http.js';
import { safeTlsConnect } from '../../src/net/safe-tls.js';
import { ProviderChain } from '../../src/providers/chain.js';
import { createDnsProviders, DnsResolver } from '../../src/providers/dns/index.js';
import { ProviderRegistry } from '../../src/providers/registry.js';
import { rejectionOf } from '../expect-error.js';
import { type FakeDnsServer, startFakeDnsServer } from '../fakes/dns-server.js';
import { type FakeRecord, type FakeZone, testZone } from '../fakes/dns-zones.js';
import {
  type HttpTarget,
  type SilentTarget,
  startHttpTarget,
  startSilentTarget,
} from '../fakes/http-targets.js';
import { getTestPki } from '../fakes/test-ca.js';

/** Where a refused name points: a canary that must never see a connection. */
const CANARY = '127.9.9.9';
/** An address nothing listens on (connection refused). */
const NOTHING = '127.9.9.8';
/** A TCP listener on :443 that accepts and never speaks (a handshake that hangs). */
const SILENT = '127.9.9.7';

let dns: FakeDnsServer;
let resolver: DnsResolver;
let caPem: string;
let site: HttpTarget; // http, allowed
let secure: HttpTarget; // https h2, allowed
let secureH1: HttpTarget; // https HTTP/1.1 only, allowed
let wrongName: HttpTarget; // https with a certificate for another name
let localhostOnly: HttpTarget; // https with a certificate naming only "localhost"
let canaryHttp: HttpTarget;
let canaryHttps: HttpTarget;
let silent: SilentTarget;

/** The A answer for rebind.net.test: the allowed site first, the canary on every later query. */
let rebindQueries = 0;

beforeAll(async () => {
  caPem = (await getTestPki()).caPem;
  const huge = 8 * 1024 * 1024;
  site = await startHttpTarget({
    routes: {
      '/': { body: 'site root', headers: { 'x-site': 'yes' } },
      '/to-evil': { redirect: 'http://evil.net.test/' },
      '/to-canary-literal': { redirect: `http://[::ffff:${CANARY}]/` },
      '/to-8080': { redirect: 'http://site.net.test:8080/' },
      '/to-ftp': { redirect: 'ftp://site.net.test/file' },
      '/r3': { status: 301, redirect: '/r2' },
      '/r2': { status: 307, redirect: 'http://cname.net.test/r1' },
      '/r1': { status: 308, redirect: '/final#fragment' },
      '/final': { body: 'done' },
      '/loop': { redirect: '/loop' },
      '/huge': { streamBytes: huge },
      '/slow': { delayMs: 3_000, body: 'late' },
      '/hang': { hang: true },
      '/big-headers': { headers: { 'x-filler': 'a'.repeat(40 * 1024) } },
      '/bad-location': { redirect: 'http://[not a url' },
    },
  });
  const pki = await getTestPki();
  secure = await startHttpTarget({
    protocol: 'https',
    h2: true,
    names: ['secure.net.test'],
    routes: {
      '/': { body: 'secure root', headers: { 'strict-transport-security': 'max-age=63072000' } },
      '/big-headers': { headers: { 'x-filler': 'a'.repeat(40 * 1024) } },
    },
  });
  secureH1 = await startHttpTarget({ protocol: 'https', names: ['h1.net.test'] });
  wrongName = await startHttpTarget({
    protocol: 'https',
    cert: await pki.issue({ dnsNames: ['someone-else.test'] }),
  });
  localhostOnly = await startHttpTarget({
    protocol: 'https',
    cert: await pki.issue({ dnsNames: ['localhost'] }),
  });
  canaryHttp = await startHttpTarget({ address: CANARY });
  canaryHttps = await startHttpTarget({ protocol: 'https', address: CANARY, names: ['evil.net.test'] });
  silent = await startSilentTarget({ address: SILENT });

  const records: FakeRecord[] = [
    { name: 'evil.net.test', type: 'A', data: CANARY },
    { name: 'metadata.net.test', type: 'A', data: '169.254.169.254' },
    { name: 'mixed.net.test', type: 'A', data: site.address },
    { name: 'mixed.net.test', type: 'A', data: '10.0.0.5' },
    { name: 'mixed6.net.test', type: 'A', data: site.address },
    { name: 'mixed6.net.test', type: 'AAAA', data: 'fd00::1' },
    { name: 'site.net.test', type: 'A', data: site.address },
    { name: 'cname.net.test', type: 'CNAME', data: 'site.net.test' },
    { name: 'secure.net.test', type: 'A', data: secure.address },
    { name: 'h1.net.test', type: 'A', data: secureH1.address },
    { name: 'wrong.net.test', type: 'A', data: wrongName.address },
    { name: 'refused.net.test', type: 'A', data: NOTHING },
    { name: 'silent.net.test', type: 'A', data: SILENT },
    { name: 'plain.net.test', type: 'A', data: site.address },
    { name: 'text-only.net.test', type: 'TXT', data: ['no addresses here'] },
  ];
  const rebinding: FakeRecord = { name: 'rebind.net.test', type: 'A', ttl: 0, data: site.address };
  // The fake server reads `records` on every query: answer the site once, then the canary.
  const zones: FakeZone[] = [
    {
      ...testZone('net.test', []),
      get records(): FakeRecord[] {
        const rebindAsked =
          dns?.queries.filter((q) => q.name === 'rebind.net.test' && q.type === 'A').length ?? 0;
        rebindQueries = rebindAsked;
        return [...records, { ...rebinding, data: rebindAsked <= 1 ? site.address : CANARY }];
      },
    },
  ];
  dns = await startFakeDnsServer({ zones });
  const providers = createDnsProviders([dns.udp]);
  const registry = new ProviderRegistry();
  const chain = new ProviderChain({
    loader: new CachedLoader(new MemoryCache()),
    registry,
    timeoutMs: 2_000,
  });
  resolver = new DnsResolver(chain, providers);
});

afterAll(async () => {
  await resolver?.close();
  await dns?.close();
  await silent?.close();
  await Promise.all(
    [site, secure, secureH1, wrongName, localhostOnly, canaryHttp, canaryHttps].map((t) => t?.close()),
  );
});

afterEach(() => {
  for (const t of [site, secure, secureH1, wrongName, localhostOnly, canaryHttp, canaryHttps]) t.reset();
  dns.reset();
});

/** Counts outgoing connection attempts: plain TCP sockets and every undici connect, TLS included. */
function watchConnections(): { count: () => number; stop: () => void } {
  let n = 0;
  const onEvent = () => {
    n++;
  };
  subscribe('net.client.socket', onEvent);
  subscribe('undici:client:beforeConnect', onEvent);
  return {
    count: () => n,
    stop: () => {
      unsubscribe('net.client.socket', onEvent);
      unsubscribe('undici:client:beforeConnect', onEvent);
    },
  };
}

async function refusal(p: Promise<unknown>): Promise<UnsafeTargetError> {
  const err = await rejectionOf(p, UnsafeTargetError);
  expect(err).toMatchObject({ statusCode: 400, code: 'bad_request' });
  return err;
}

const targetError = (p: Promise<unknown>) => rejectionOf(p, TargetError);

const allowSite = () => [`${site.address}/32`];
const fetchOpts = (allowCidrs: readonly string[] = allowSite()) => ({ resolver, allowCidrs, ca: caPem });

describe('refusals happen before any connection', () => {
  it('a name whose A record is 127.9.9.9, outside the allowed range, is a 400 and the target sees nothing', async () => {
    const watch = watchConnections();
    try {
      const err = await refusal(safeFetch('http://evil.net.test/', fetchOpts()));
      expect(err.reason).toBe('not_public');
      expect(err.message).toBe(
        'target evil.net.test resolves to 127.9.9.9, which is not a public address (loopback)',
      );
      expect(watch.count()).toBe(0);
    } finally {
      watch.stop();
    }
    expect(canaryHttp.connections).toBe(0);
  });

  it('a redirect from an allowed target to such a name is refused at that hop', async () => {
    const hops: HopEvidence[] = [];
    const err = await refusal(
      safeFetch('http://site.net.test/to-evil', { ...fetchOpts(), onHop: (h) => hops.push(h) }),
    );
    expect(err.reason).toBe('not_public');
    expect(err.message).toContain('redirect evil.net.test resolves to 127.9.9.9');
    expect(site.requests.map((r) => r.path)).toEqual(['/to-evil']);
    expect(hops).toMatchObject([{ status: 302, location: 'http://evil.net.test/' }]);
    expect(canaryHttp.connections).toBe(0);
  });

  it('a redirect to an IP literal spelling of a refused address is refused too', async () => {
    await refusal(safeFetch('http://site.net.test/to-canary-literal', fetchOpts()));
    expect(canaryHttp.connections).toBe(0);
  });

  // Each of these is an IP literal: undici would never call a connect.lookup hook for it.
  it.each([
    'http://169.254.169.254/latest/meta-data/',
    'http://[::ffff:10.0.0.1]/',
    'http://0x7f.1/',
    'http://2130706433/',
    'http://0177.0.0.1/',
    'http://127.1/',
    'http://[::1]/',
    'http://[::]/',
    'http://0.0.0.0/',
    'http://[::ffff:127.0.0.1]/', // WHATWG URL rewrites this to [::ffff:7f00:1]
    'http://[::127.0.0.1]/', // ipaddr.js misreads this one as IPv4-mapped
    'http://[64:ff9b::a9fe:a9fe]/', // NAT64 of 169.254.169.254
    'http://[2002:a9fe:a9fe::]/', // 6to4 of 169.254.169.254
    'http://[fd00::1]/',
    'https://[fe80::1]/',
    // The canary itself, in alternative spellings
    'http://2131298569/',
    'http://0x7f.0x9.0x9.0x9/',
    'http://0177.011.011.011/',
    'http://[::ffff:127.9.9.9]/',
    'https://[::ffff:7f09:909]/',
  ])('%s is refused without a connection', async (url) => {
    const watch = watchConnections();
    try {
      const err = await refusal(safeFetch(url, fetchOpts()));
      expect(err.reason).toBe('not_public');
      expect(watch.count()).toBe(0);
    } finally {
      watch.stop();
    }
    expect(canaryHttp.connections + canaryHttps.connections).toBe(0);
  });

  it('a name with one allowed and one private address is refused (any bad address refuses the name)', async () => {
    const watch = watchConnections();
    try {
      const err = await refusal(safeFetch('http://mixed.net.test/', fetchOpts()));
      expect(err).toMatchObject({ address: '10.0.0.5', range: 'private-use' });
      const err6 = await refusal(safeFetch('http://mixed6.net.test/', fetchOpts()));
      expect(err6).toMatchObject({ address: 'fd00::1', range: 'unique-local' });
      expect(watch.count()).toBe(0);
    } finally {
      watch.stop();
    }
    expect(site.connections).toBe(0);
  });

  it('a cloud metadata name is refused', async () => {
    const err = await refusal(safeFetch('http://metadata.net.test/', fetchOpts()));
    expect(err.range).toBe('link-local');
  });

  it('ports other than 80 and 443, other schemes and credentials are 400s, also on a redirect', async () => {
    const watch = watchConnections();
    try {
      expect((await refusal(safeFetch('http://site.net.test:8080/', fetchOpts()))).reason).toBe('port');
      expect((await refusal(safeFetch('https://site.net.test:8443/', fetchOpts()))).reason).toBe('port');
      expect((await refusal(safeFetch('ftp://site.net.test/', fetchOpts()))).reason).toBe('scheme');
      expect((await refusal(safeFetch('file:///etc/passwd', fetchOpts()))).reason).toBe('scheme');
      expect((await refusal(safeFetch('http://user:pw@site.net.test/', fetchOpts()))).reason).toBe(
        'credentials',
      );
      expect(watch.count()).toBe(0);
    } finally {
      watch.stop();
    }
    expect((await refusal(safeFetch('http://site.net.test/to-8080', fetchOpts()))).reason).toBe('port');
    expect((await refusal(safeFetch('http://site.net.test/to-ftp', fetchOpts()))).reason).toBe('scheme');
    // allowPorts opens the first URL's port only: a redirect to that port is still refused.
    const redirected = safeFetch('http://site.net.test/to-8080', { ...fetchOpts(), allowPorts: [8080] });
    expect((await refusal(redirected)).reason).toBe('port');
  });

  it('a name without addresses and a name that does not exist are 400s', async () => {
    expect((await refusal(safeFetch('http://text-only.net.test/', fetchOpts()))).reason).toBe('no_address');
    const nx = await refusal(safeFetch('http://nope.net.test/', fetchOpts()));
    expect(nx.message).toContain('NXDOMAIN');
  });

  it('a DNS failure is the resolver’s 502, not a refusal', async () => {
    dns.set({ rcode: 'SERVFAIL' });
    const err = await safeFetch('http://plain.net.test/', fetchOpts()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AppError);
    expect(err).toMatchObject({ statusCode: 502 });
    expect(err).not.toBeInstanceOf(UnsafeTargetError);
  });
});

describe('DNS rebinding', () => {
  it('resolves once per hop and connects to the checked address, even though DNS now answers differently', async () => {
    const res = await safeFetch('http://rebind.net.test/', fetchOpts());
    expect(res.final.status).toBe(200);
    expect(res.final.remoteAddress).toBe(site.address);
    expect(rebindQueries).toBe(1);
    expect(dns.queries.filter((q) => q.name === 'rebind.net.test').map((q) => q.type)).toEqual(
      expect.arrayContaining(['A', 'AAAA']),
    );
    expect(dns.queries.filter((q) => q.name === 'rebind.net.test')).toHaveLength(2);
    expect(site.requests).toMatchObject([{ path: '/', host: 'rebind.net.test' }]);
    expect(canaryHttp.connections).toBe(0);

    // The fake really does rebind: the next resolution answers the canary, and it is refused.
    const err = await refusal(safeFetch('http://rebind.net.test/', fetchOpts()));
    expect(err.address).toBe(CANARY);
    expect(canaryHttp.connections).toBe(0);
  });
});

describe('fetching an allowed target', () => {
  it('follows a redirect chain, re-resolving each hop, and reports per-hop evidence', async () => {
    const res = await safeFetch('http://site.net.test/r3', fetchOpts());
    expect(res.hops.map((h) => [h.status, h.url, h.location])).toEqual([
      [301, 'http://site.net.test/r3', 'http://site.net.test/r2'],
      [307, 'http://site.net.test/r2', 'http://cname.net.test/r1'],
      [308, 'http://cname.net.test/r1', 'http://cname.net.test/final#fragment'],
      [200, 'http://cname.net.test/final', undefined],
    ]);
    expect(res.body.toString()).toBe('done');
    expect(res.truncated).toBe(false);
    expect(res.redirectLimitReached).toBe(false);
    // Host carries each hop's name; the CNAME target was never a connection name.
    expect(site.requests.map((r) => r.host)).toEqual([
      'site.net.test',
      'site.net.test',
      'cname.net.test',
      'cname.net.test',
    ]);
    for (const hop of res.hops) {
      expect(hop).toMatchObject({
        httpVersion: '1.1',
        remoteAddress: site.address,
        addresses: [site.address],
      });
      expect(hop.tls).toBeUndefined();
      expect(hop.timings.connect).toBeGreaterThan(0); // a fresh connection per hop, really measured
      expect(hop.timings.tls).toBe(0);
      expect(hop.timings.total).toBeGreaterThanOrEqual(hop.timings.dns + hop.timings.connect);
    }
    // One TCP connection per hop: nothing pooled across hops.
    expect(site.connections).toBe(4);
  });

  it('stops at the redirect cap and returns the last 3xx', async () => {
    const res = await safeFetch('http://site.net.test/loop', fetchOpts());
    expect(res.hops).toHaveLength(11);
    expect(res.final.status).toBe(302);
    expect(res.redirectLimitReached).toBe(true);
    expect(site.requests).toHaveLength(11);
    const two = await safeFetch('http://site.net.test/loop', { ...fetchOpts(), maxRedirects: 2 });
    expect(two.hops).toHaveLength(3);
    const none = await safeFetch('http://site.net.test/to-evil', { ...fetchOpts(), maxRedirects: 0 });
    expect(none).toMatchObject({ redirectLimitReached: true, final: { status: 302 } });
    expect(canaryHttp.connections).toBe(0);
  });

  it('ends the chain at a Location that is not a URL', async () => {
    const res = await safeFetch('http://site.net.test/bad-location', fetchOpts());
    expect(res.hops).toHaveLength(1);
    expect(res.final).toMatchObject({ status: 302, location: 'http://[not a url' });
    expect(res.redirectLimitReached).toBe(false);
  });

  it('cuts a huge body off at the cap and says so', async () => {
    const started = Date.now();
    const res = await safeFetch('http://site.net.test/huge', { ...fetchOpts(), maxBodyBytes: 100_000 });
    expect(res.body.length).toBe(100_000);
    expect(res.truncated).toBe(true);
    expect(Date.now() - started).toBeLessThan(15_000);
  });

  it('refuses oversized response headers, over HTTP/1.1 and HTTP/2', async () => {
    const h1 = await targetError(
      safeFetch('http://site.net.test/big-headers', { ...fetchOpts(), maxHeaderBytes: 16_384 }),
    );
    expect(h1).toMatchObject({ kind: 'bad_response', stage: 'response headers' });
    const h2 = await targetError(
      safeFetch('https://secure.net.test/big-headers', {
        ...fetchOpts([`${secure.address}/32`]),
        maxHeaderBytes: 16_384,
      }),
    );
    expect(h2).toMatchObject({ kind: 'bad_response', stage: 'response headers' });
    expect(secure.requests).toMatchObject([{ httpVersion: '2.0' }]);
  });

  it('accepts a fully qualified name with the trailing dot', async () => {
    const res = await safeFetch('http://site.net.test./', fetchOpts());
    expect(res.final.status).toBe(200);
    expect(site.requests).toHaveLength(1);
  });

  it('times out in DNS as a timeout, not as a resolver failure', async () => {
    dns.set({ delayMs: 1_000 });
    const err = await targetError(
      safeFetch('http://plain.net.test/dns-slow', { ...fetchOpts(), timeoutMs: 200 }),
    );
    expect(err).toMatchObject({ kind: 'timeout', stage: 'dns' });
  });

  it('sends HEAD when asked and returns an empty body', async () => {
    const res = await safeFetch('http://site.net.test/', { ...fetchOpts(), method: 'HEAD' });
    expect(res.final.status).toBe(200);
    expect(res.body.length).toBe(0);
    expect(site.requests).toMatchObject([{ method: 'HEAD' }]);
  });

  it('gives up at the deadline, naming the stage', async () => {
    const started = Date.now();
    const err = await targetError(safeFetch('http://site.net.test/slow', { ...fetchOpts(), timeoutMs: 300 }));
    expect(err).toMatchObject({ kind: 'timeout', stage: 'response headers' });
    // Ended by the 300 ms deadline (stretched to seconds at most on a loaded machine), not left hanging.
    expect(Date.now() - started).toBeLessThan(10_000);
    const hung = await targetError(
      safeFetch('http://site.net.test/hang', { ...fetchOpts(), timeoutMs: 300 }),
    );
    expect(hung.kind).toBe('timeout');
  });

  it('reports a refused connection as a connect failure', async () => {
    const err = await targetError(safeFetch('http://refused.net.test/', fetchOpts([`${NOTHING}/32`])));
    expect(err).toMatchObject({ kind: 'network', stage: 'connect' });
    expect(err.message).toContain('ECONNREFUSED');
  });

  it('sends SNI and Host as the name over HTTPS, and negotiates HTTP/2', async () => {
    const res = await safeFetch('https://secure.net.test/', fetchOpts([`${secure.address}/32`]));
    expect(res.final).toMatchObject({
      status: 200,
      httpVersion: '2',
      remoteAddress: secure.address,
      headers: { 'strict-transport-security': 'max-age=63072000' },
      tls: { authorized: true, alpn: 'h2', protocol: 'TLSv1.3' },
    });
    expect(res.body.toString()).toBe('secure root');
    expect(secure.requests).toMatchObject([
      { host: 'secure.net.test', servername: 'secure.net.test', httpVersion: '2.0' },
    ]);
    expect(secure.tlsServernames).toEqual(['secure.net.test']);
    const { timings } = res.final;
    expect(timings.connect).toBeGreaterThan(0);
    expect(timings.tls).toBeGreaterThan(0);
    expect(timings.ttfb).toBeGreaterThan(0);
  });

  it('speaks HTTP/1.1 to a server without h2, with the Host header and SNI as the name', async () => {
    const res = await safeFetch('https://h1.net.test/', fetchOpts([`${secureH1.address}/32`]));
    expect(res.final).toMatchObject({ status: 200, httpVersion: '1.1', tls: { alpn: 'http/1.1' } });
    expect(secureH1.requests).toMatchObject([
      { host: 'h1.net.test', servername: 'h1.net.test', httpVersion: '1.1' },
    ]);
  });

  it('sends no SNI to an IP literal, and verifies the certificate against the address', async () => {
    const res = await safeFetch(`https://${secure.address}/`, fetchOpts([`${secure.address}/32`]));
    expect(res.final.status).toBe(200);
    expect(secure.tlsServernames).toEqual([false]);
    expect(secure.requests[0]?.host).toBe(secure.address);
  });

  it('refuses a certificate for another name by default, and reports it when asked not to', async () => {
    const allow = [`${wrongName.address}/32`];
    const err = await targetError(safeFetch('https://wrong.net.test/', fetchOpts(allow)));
    expect(err).toMatchObject({ kind: 'tls', stage: 'tls handshake' });
    expect(err.message).toContain('ERR_TLS_CERT_ALTNAME_INVALID');
    expect(wrongName.requests).toHaveLength(0);

    const res = await safeFetch('https://wrong.net.test/', {
      ...fetchOpts(allow),
      rejectUnauthorized: false,
    });
    expect(res.final.tls).toMatchObject({
      authorized: false,
      authorizationError: 'ERR_TLS_CERT_ALTNAME_INVALID',
    });
    expect(wrongName.requests).toMatchObject([{ host: 'wrong.net.test', servername: 'wrong.net.test' }]);
  });

  it('refuses an untrusted certificate (no test CA given)', async () => {
    const err = await targetError(
      safeFetch('https://secure.net.test/', { resolver, allowCidrs: [`${secure.address}/32`] }),
    );
    expect(err).toMatchObject({ kind: 'tls', stage: 'tls handshake' });
  });

  it('reaches an allowed IP-literal target directly, in any spelling', async () => {
    const [a, b, c, d] = site.address.split('.').map(Number) as [number, number, number, number];
    const decimal = ((a << 24) >>> 0) + (b << 16) + (c << 8) + d;
    for (const url of [`http://${site.address}/`, `http://${decimal}/`, `http://[::ffff:${site.address}]/`]) {
      const res = await safeFetch(url, fetchOpts());
      expect(res.final.status, url).toBe(200);
    }
  });
});

describe('safeTlsConnect', () => {
  const tlsOpts = (allowCidrs: readonly string[]) => ({ resolver, allowCidrs, ca: caPem, timeoutMs: 2_000 });

  it('connects to the pinned address with SNI = name and ALPN, leaving verification to the caller', async () => {
    const socket = await safeTlsConnect('secure.net.test', tlsOpts([`${secure.address}/32`]));
    try {
      expect(socket.remoteAddress).toBe(secure.address);
      expect(socket.authorized).toBe(true);
      expect(socket.alpnProtocol).toBe('h2');
      // The client can finish a TLS 1.3 handshake before the server has: wait for its side.
      await vi.waitFor(() => expect(secure.tlsServernames).toEqual(['secure.net.test']));
    } finally {
      socket.destroy();
    }
  });

  it('reports, not refuses, a certificate for another name', async () => {
    const socket = await safeTlsConnect('wrong.net.test', tlsOpts([`${wrongName.address}/32`]));
    try {
      expect(socket.authorized).toBe(false);
      expect(String(socket.authorizationError)).toBe('ERR_TLS_CERT_ALTNAME_INVALID');
    } finally {
      socket.destroy();
    }
  });

  it('sends no SNI to an IP literal, unless a servername is given', async () => {
    const bare = await safeTlsConnect(secure.address, tlsOpts([`${secure.address}/32`]));
    // Destroying at once could drop the client's Finished before the server has completed its side.
    await vi.waitFor(() => expect(secure.tlsServernames).toEqual([false]));
    bare.destroy();
    expect(bare.authorized).toBe(true); // verified against the address, which the certificate names
    const named = await safeTlsConnect(secure.address, {
      ...tlsOpts([`${secure.address}/32`]),
      servername: 'secure.net.test',
    });
    await vi.waitFor(() => expect(secure.tlsServernames).toEqual([false, 'secure.net.test']));
    named.destroy();
  });

  // Regression: with a socket handed to tls.connect and no servername, Node verifies the
  // certificate against `host`, else the socket's _host (null for an address), else "localhost".
  it('verifies a literal against the address, never against "localhost"', async () => {
    const socket = await safeTlsConnect(localhostOnly.address, tlsOpts([`${localhostOnly.address}/32`]));
    socket.destroy();
    expect(socket.authorized).toBe(false);
    expect(String(socket.authorizationError)).toBe('ERR_TLS_CERT_ALTNAME_INVALID');
    const err = await targetError(
      safeFetch(`https://${localhostOnly.address}/`, fetchOpts([`${localhostOnly.address}/32`])),
    );
    expect(err.kind).toBe('tls');
  });

  it('refuses non-public targets and other ports before connecting', async () => {
    const watch = watchConnections();
    try {
      expect((await refusal(safeTlsConnect('evil.net.test', tlsOpts([])))).reason).toBe('not_public');
      expect((await refusal(safeTlsConnect('0x7f.0x9.0x9.0x9', tlsOpts([])))).reason).toBe('not_public');
      expect((await refusal(safeTlsConnect('[::ffff:127.9.9.9]', tlsOpts([])))).reason).toBe('not_public');
      expect(
        (
          await refusal(
            safeTlsConnect('secure.net.test', { ...tlsOpts([`${secure.address}/32`]), port: 8443 }),
          )
        ).reason,
      ).toBe('port');
      expect(watch.count()).toBe(0);
    } finally {
      watch.stop();
    }
    expect(canaryHttps.connections).toBe(0);
  });

  it('names the stage of a failure: connect, tls handshake, timeout', async () => {
    const refused = await targetError(safeTlsConnect('refused.net.test', tlsOpts([`${NOTHING}/32`])));
    expect(refused).toMatchObject({ kind: 'network', stage: 'connect' });

    // Plain HTTP on the other end: the handshake fails.
    const notTls = await targetError(safeTlsConnect('plain.net.test', { ...tlsOpts(allowSite()), port: 80 }));
    expect(notTls).toMatchObject({ kind: 'tls', stage: 'tls handshake' });

    const started = Date.now();
    const hung = await targetError(
      safeTlsConnect('silent.net.test', { ...tlsOpts([`${SILENT}/32`]), timeoutMs: 300 }),
    );
    expect(hung).toMatchObject({ kind: 'timeout', stage: 'tls handshake' });
    expect(Date.now() - started).toBeLessThan(10_000);
  });
});
