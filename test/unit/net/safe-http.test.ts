/**
 * safeFetch's promises (src/net/safe-http.ts, docs/architecture.md §3), one by one: a
 * scripted resolver decides what each name resolves to, real undici connections go to
 * fake targets on 127.0.0.x:80/443. Each refusal is also checked from the refused
 * target's side (it saw no connection), or from the resolver's (it was never asked).
 * test/integration/net-safety.test.ts runs the same layer with the real DNS client.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { AppError } from '../../../src/errors.js';
import { TargetError, UnsafeTargetError } from '../../../src/net/errors.js';
import { type HopEvidence, type SafeFetchOptions, safeFetch } from '../../../src/net/safe-http.js';
import { USER_AGENT } from '../../../src/net/user-agent.js';
import { rejectionOf } from '../../expect-error.js';
import { type FakeAddressResolver, type HostAnswer, hostsResolver } from '../../fakes/address-resolver.js';
import {
  type HttpTarget,
  type SilentTarget,
  startHttpTarget,
  startSilentTarget,
  type TargetReply,
} from '../../fakes/http-targets.js';
import { getTestPki } from '../../fakes/test-ca.js';

/** Nothing listens here: a connection is refused. */
const NOTHING = '127.66.0.1';
/**
 * The canary's own address: the other targets take the first free 127.0.0.x for their
 * port, and one of them on another port could share the canary's address, and so its allow-list entry.
 */
const CANARY = '127.66.0.9';
const SLOW_HOPS = 6;

let caPem: string;
let site: HttpTarget; // http, allowed
let secure: HttpTarget; // https with h2, a certificate for secure.test, allowed
let wrongName: HttpTarget; // https, a certificate for someone-else.test, allowed
let canary: HttpTarget; // http, never allowed: must see no connection
let offPort: HttpTarget; // http on an ephemeral port, for allowPorts
let silent: SilentTarget; // :443, accepts and never speaks

beforeAll(async () => {
  caPem = (await getTestPki()).caPem;
  canary = await startHttpTarget({ address: CANARY });
  const statusRoutes: Record<string, TargetReply> = {};
  for (const status of [300, 301, 302, 303, 304, 307, 308]) {
    statusRoutes[`/status/${status}`] = { status, headers: { location: '/done' } };
  }
  const slowRoutes: Record<string, TargetReply> = {};
  for (let i = 1; i <= SLOW_HOPS; i++) {
    slowRoutes[`/slow/${i}`] = i < SLOW_HOPS ? { delayMs: 200, redirect: `/slow/${i + 1}` } : { body: 'end' };
  }
  site = await startHttpTarget({
    routes: {
      '/': { body: 'site root' },
      '/done': { body: 'done' },
      '/redirect': (req) => ({ redirect: new URL(req.url, 'http://x').searchParams.get('to') ?? '/' }),
      '/to-canary': { redirect: 'http://canary.test/' },
      '/to-canary-literal': { redirect: `http://${canary.address}/` },
      '/loop': { redirect: '/loop' },
      '/relative': { redirect: 'done?x=1#fragment' },
      '/no-location': { status: 302 },
      '/bad-location': { redirect: 'http://[not a url' },
      '/hang': { hang: true },
      '/trickle': { trickle: true },
      '/huge': { streamBytes: 4 * 1024 * 1024 },
      ...statusRoutes,
      ...slowRoutes,
    },
  });
  secure = await startHttpTarget({ protocol: 'https', h2: true, names: ['secure.test'] });
  const pki = await getTestPki();
  wrongName = await startHttpTarget({
    protocol: 'https',
    cert: await pki.issue({ dnsNames: ['someone-else.test'] }),
  });
  offPort = await startHttpTarget({ port: 0 });
  offPort.route('/to-same-port', { redirect: `http://site.test:${offPort.port}/` });
  silent = await startSilentTarget();
});

afterAll(async () => {
  await Promise.all([site, secure, wrongName, canary, offPort, silent].map((t) => t?.close()));
});

afterEach(() => {
  for (const t of [site, secure, wrongName, canary, offPort]) t.reset();
});

/** What every test name resolves to; a test may add its own. */
function resolver(extra: Record<string, HostAnswer | (() => HostAnswer)> = {}): FakeAddressResolver {
  return hostsResolver({
    'site.test': [site.address],
    'canary.test': [canary.address],
    'mixed.test': [site.address, '10.1.2.3'],
    'mapped.test': [site.address, '::ffff:169.254.169.254'],
    'fallback.test': [NOTHING, site.address],
    'secure.test': [secure.address],
    'wrong.test': [wrongName.address],
    'tls-first.test': [wrongName.address, secure.address],
    'off-port.test': [offPort.address],
    'silent.test': [silent.address],
    'slow-dns.test': 'hang',
    'down.test': 'servfail',
    ...extra,
  });
}

/** UNSAFE_ALLOW_TARGET_CIDRS covering every target but the canary. */
const ALLOW = () =>
  [site, secure, wrongName, offPort, silent].map((t) => `${t.address}/32`).concat(`${NOTHING}/32`);

function options(overrides: Partial<SafeFetchOptions> = {}): SafeFetchOptions {
  return { resolver: resolver(), allowCidrs: ALLOW(), ca: caPem, ...overrides };
}

const refusal = (p: Promise<unknown>) => rejectionOf(p, UnsafeTargetError);
const targetError = (p: Promise<unknown>) => rejectionOf(p, TargetError);

describe('safeFetch refuses a destination before connecting to it', () => {
  it('a name resolving to an address outside public space and the allow-list: 400, naming address and range', async () => {
    const dns = resolver();
    const err = await refusal(safeFetch('http://canary.test/', options({ resolver: dns })));
    expect(err).toMatchObject({
      statusCode: 400,
      reason: 'not_public',
      address: canary.address,
      range: 'loopback',
    });
    expect(err.message).toBe(
      `target canary.test resolves to ${canary.address}, which is not a public address (loopback)`,
    );
    expect(dns.asked).toEqual(['canary.test A', 'canary.test AAAA']);
    expect(canary.connections).toBe(0);
  });

  it('one bad address among allowed ones refuses the whole name, IPv4-mapped IPv6 included', async () => {
    expect(await refusal(safeFetch('http://mixed.test/', options()))).toMatchObject({
      address: '10.1.2.3',
      range: 'private-use',
    });
    expect(await refusal(safeFetch('http://mapped.test/', options()))).toMatchObject({
      address: '::ffff:a9fe:a9fe',
      range: 'ipv4-mapped → link-local',
    });
    expect(site.connections).toBe(0);
  });

  it('an IP literal is classified as it is, in any spelling, without asking DNS', async () => {
    const dns = resolver();
    const [x, y, z, w] = canary.address.split('.').map(Number) as [number, number, number, number];
    const decimal = x * 2 ** 24 + y * 2 ** 16 + z * 2 ** 8 + w;
    for (const url of [
      `http://${canary.address}/`,
      `http://${decimal}/`,
      `http://[::ffff:${canary.address}]/`,
    ]) {
      expect((await refusal(safeFetch(url, options({ resolver: dns })))).reason, url).toBe('not_public');
    }
    expect(dns.asked).toEqual([]);
    expect(canary.connections).toBe(0);
  });

  it.each([
    ['ftp://site.test/file', 'scheme'],
    ['file:///etc/passwd', 'scheme'],
    ['http://user:secret@site.test/', 'credentials'],
    ['http://site.test:8080/', 'port'],
    ['https://site.test:8443/', 'port'],
    ['not a url', 'invalid_host'],
  ])('%s is refused (%s) before DNS is asked', async (url, reason) => {
    const dns = resolver();
    expect((await refusal(safeFetch(url, options({ resolver: dns })))).reason).toBe(reason);
    expect(dns.asked).toEqual([]);
  });

  it('a name that does not exist is a 400; a DNS failure is the resolver’s own 502, passed through', async () => {
    expect(await refusal(safeFetch('http://nowhere.test/', options()))).toMatchObject({
      reason: 'no_address',
      message: 'target nowhere.test does not exist (NXDOMAIN)',
    });
    const down = await rejectionOf(safeFetch('http://down.test/', options()), AppError);
    expect(down).toMatchObject({ statusCode: 502, code: 'upstream_failed' });
    expect(down).not.toBeInstanceOf(TargetError);
  });

  it('does not let a caller set Host: it is always the URL’s host', async () => {
    await expect(
      safeFetch('http://site.test/', options({ headers: { Host: 'canary.test' } })),
    ).rejects.toThrow(TypeError);
    expect(site.connections).toBe(0);
  });
});

describe('safeFetch follows redirects, checking every hop again', () => {
  it('a redirect to a refused name is refused at that hop; the hops before it are reported', async () => {
    const hops: HopEvidence[] = [];
    const err = await refusal(
      safeFetch('http://site.test/to-canary', options({ onHop: (h) => hops.push(h) })),
    );
    expect(err.message).toBe(
      `target redirect canary.test resolves to ${canary.address}, which is not a public address (loopback)`,
    );
    expect(hops).toMatchObject([{ status: 302, location: 'http://canary.test/' }]);
    await refusal(safeFetch('http://site.test/to-canary-literal', options()));
    expect(canary.connections).toBe(0);
  });

  it.each([
    ['ftp://site.test/file', 'scheme'],
    ['file:///etc/passwd', 'scheme'],
    ['javascript:alert(1)', 'scheme'],
    ['http://user:secret@site.test/', 'credentials'],
    ['http://site.test:8080/', 'port'],
    ['https://site.test:8443/', 'port'],
  ])('a redirect to %s is refused (%s)', async (location, reason) => {
    const url = `http://site.test/redirect?to=${encodeURIComponent(location)}`;
    expect((await refusal(safeFetch(url, options()))).reason).toBe(reason);
    expect(site.requests).toHaveLength(1);
  });

  it('allowPorts opens the first URL’s port, never a redirect’s', async () => {
    const url = `http://off-port.test:${offPort.port}/`;
    expect((await refusal(safeFetch(url, options()))).reason).toBe('port');
    const res = await safeFetch(url, options({ allowPorts: [offPort.port] }));
    expect(res.final.status).toBe(200);
    const redirected = safeFetch(`http://off-port.test:${offPort.port}/to-same-port`, {
      ...options({ allowPorts: [offPort.port] }),
    });
    expect((await refusal(redirected)).reason).toBe('port');
  });

  it('follows 301, 302, 303, 307 and 308, and stops at other 3xx', async () => {
    for (const status of [301, 302, 303, 307, 308]) {
      const res = await safeFetch(`http://site.test/status/${status}`, options());
      expect(
        res.hops.map((h) => h.status),
        String(status),
      ).toEqual([status, 200]);
      expect(res.body.toString()).toBe('done');
    }
    for (const status of [300, 304]) {
      const res = await safeFetch(`http://site.test/status/${status}`, options());
      expect(
        res.hops.map((h) => h.status),
        String(status),
      ).toEqual([status]);
      expect(res.redirectLimitReached).toBe(false);
    }
  });

  it('resolves a relative Location against the hop’s URL and never sends the fragment', async () => {
    const res = await safeFetch('http://site.test/relative', options());
    expect(res.hops.map((h) => h.location)).toEqual(['http://site.test/done?x=1#fragment', undefined]);
    expect(res.url).toBe('http://site.test/done?x=1');
    expect(site.requests.map((r) => r.url)).toEqual(['/relative', '/done?x=1']);
  });

  it('ends at a 3xx without a usable Location, which is not the redirect limit', async () => {
    const none = await safeFetch('http://site.test/no-location', options());
    expect(none).toMatchObject({ final: { status: 302 }, redirectLimitReached: false });
    expect(none.final.location).toBeUndefined();
    const bad = await safeFetch('http://site.test/bad-location', options());
    expect(bad).toMatchObject({
      final: { status: 302, location: 'http://[not a url' },
      redirectLimitReached: false,
    });
  });

  it('follows 10 redirects by default, maxRedirects otherwise, then returns the last 3xx; DNS is asked per hop', async () => {
    const dns = resolver();
    const res = await safeFetch('http://site.test/loop', options({ resolver: dns }));
    expect(res.hops).toHaveLength(11);
    expect(res).toMatchObject({ final: { status: 302 }, redirectLimitReached: true });
    expect(dns.asked).toHaveLength(22);
    const two = await safeFetch('http://site.test/loop', options({ maxRedirects: 2 }));
    expect(two.hops).toHaveLength(3);
    const none = await safeFetch('http://site.test/to-canary', options({ maxRedirects: 0 }));
    expect(none).toMatchObject({ redirectLimitReached: true, final: { status: 302 } });
    expect(canary.connections).toBe(0);
  });
});

describe('UNSAFE_ALLOW_TARGET_CIDRS', () => {
  it('admits a non-public address only inside one of its ranges', async () => {
    expect((await refusal(safeFetch('http://site.test/', options({ allowCidrs: [] })))).range).toBe(
      'loopback',
    );
    expect(
      (
        await refusal(
          safeFetch('http://site.test/', options({ allowCidrs: ['10.0.0.0/8', '127.255.0.0/16'] })),
        )
      ).reason,
    ).toBe('not_public');
    expect(site.connections).toBe(0);
    const res = await safeFetch('http://site.test/', options({ allowCidrs: ['127.0.0.0/8'] }));
    expect(res.final).toMatchObject({ status: 200, remoteAddress: site.address });
    expect(res.body.toString()).toBe('site root');
  });
});

describe('safeFetch connects to the checked addresses and nothing else', () => {
  it('resolves once per hop: a name that answers differently later is still dialled at the checked address', async () => {
    let questions = 0;
    // The first resolution (A and AAAA) answers the site; every later question, the canary.
    const dns = resolver({ 'rebind.test': () => (questions++ < 2 ? [site.address] : [canary.address]) });
    const res = await safeFetch(
      'http://rebind.test/',
      options({ resolver: dns, allowCidrs: ['127.0.0.0/8'] }),
    );
    expect(res.final).toMatchObject({ status: 200, remoteAddress: site.address, addresses: [site.address] });
    expect(dns.asked).toEqual(['rebind.test A', 'rebind.test AAAA']);
    expect(site.requests).toMatchObject([{ host: 'rebind.test' }]);
    expect(canary.connections).toBe(0);
  });

  it('tries the next checked address when one cannot be reached', async () => {
    const res = await safeFetch('http://fallback.test/', options());
    expect(res.final).toMatchObject({
      status: 200,
      remoteAddress: site.address,
      addresses: [NOTHING, site.address],
    });
  });

  it('does not try another address after a failed TLS handshake: that failure is the answer', async () => {
    const err = await targetError(safeFetch('https://tls-first.test/', options()));
    expect(err).toMatchObject({ kind: 'tls', stage: 'tls handshake' });
    expect(secure.connections).toBe(0);
  });

  it('reports a refused connection as a connect failure', async () => {
    const dns = resolver({ 'refused.test': [NOTHING] });
    const err = await targetError(safeFetch('http://refused.test/', options({ resolver: dns })));
    expect(err).toMatchObject({ kind: 'network', stage: 'connect' });
    expect(err.message).toContain('ECONNREFUSED');
  });

  it('sends its User-Agent and the caller’s headers, with Host as the URL’s host', async () => {
    await safeFetch('http://site.test/', options({ headers: { 'x-trace': 'abc' } }));
    expect(site.requests).toMatchObject([
      { host: 'site.test', headers: { 'user-agent': USER_AGENT, 'x-trace': 'abc', accept: '*/*' } },
    ]);
  });

  it('cuts the body at maxBodyBytes and says so', async () => {
    const res = await safeFetch('http://site.test/huge', options({ maxBodyBytes: 10_000 }));
    expect(res.body).toHaveLength(10_000);
    expect(res.truncated).toBe(true);
  });
});

describe('safeFetch deadlines', () => {
  it('one deadline covers the whole call, every hop included', async () => {
    // Each hop answers in 200 ms, well inside 600 ms, but the five redirects together do not.
    const hops: HopEvidence[] = [];
    const err = await targetError(
      safeFetch('http://site.test/slow/1', options({ timeoutMs: 600, onHop: (h) => hops.push(h) })),
    );
    expect(err.kind).toBe('timeout');
    expect(hops.length).toBeLessThan(SLOW_HOPS - 1);
    // The same chain completes when the deadline allows it.
    const res = await safeFetch('http://site.test/slow/1', options({ timeoutMs: 10_000 }));
    expect(res.hops).toHaveLength(SLOW_HOPS);
  });

  it.each([
    ['http://slow-dns.test/', 'dns'],
    ['https://silent.test/', 'tls handshake'],
    ['http://site.test/hang', 'response headers'],
    ['http://site.test/trickle', 'response body'],
  ])('%s times out naming the stage (%s)', async (url, stage) => {
    const started = Date.now();
    const err = await targetError(safeFetch(url, options({ timeoutMs: 400 })));
    expect(err).toMatchObject({ kind: 'timeout', stage });
    expect(err.message).toContain('no answer within 400 ms');
    // Ended by the deadline (stretched to seconds at most on a loaded machine), not left hanging.
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('the caller’s abort ends the call as an abort, not as a timeout', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    const err = await targetError(
      safeFetch('http://site.test/hang', options({ signal: controller.signal, timeoutMs: 10_000 })),
    );
    expect(err).toMatchObject({ kind: 'network', message: 'site.test: aborted by the caller' });
  });
});

describe('safeFetch over TLS', () => {
  it('sends SNI and Host as the name, verifies the certificate against it, and negotiates h2', async () => {
    const res = await safeFetch('https://secure.test/', options());
    expect(res.final).toMatchObject({
      status: 200,
      httpVersion: '2',
      remoteAddress: secure.address,
      tls: { authorized: true, alpn: 'h2' },
    });
    expect(res.final.tls?.authorizationError).toBeUndefined();
    expect(secure.requests).toMatchObject([
      { host: 'secure.test', servername: 'secure.test', httpVersion: '2.0' },
    ]);
  });

  it('speaks HTTP/1.1 when h2 is not offered', async () => {
    const res = await safeFetch('https://secure.test/', options({ allowH2: false }));
    expect(res.final).toMatchObject({ httpVersion: '1.1', tls: { alpn: 'http/1.1' } });
    expect(secure.requests).toMatchObject([{ httpVersion: '1.1' }]);
  });

  it('sends no SNI to an IP literal and verifies the certificate against the address', async () => {
    const res = await safeFetch(`https://${secure.address}/`, options());
    expect(res.final.tls).toMatchObject({ authorized: true });
    expect(secure.tlsServernames).toEqual([false]);
  });

  it('refuses a certificate it cannot verify by default, before any request', async () => {
    const wrong = await targetError(safeFetch('https://wrong.test/', options()));
    expect(wrong).toMatchObject({ kind: 'tls', stage: 'tls handshake' });
    expect(wrong.message).toContain('ERR_TLS_CERT_ALTNAME_INVALID');
    expect(wrongName.requests).toHaveLength(0);
    // Without the test CA as trust anchor, the system store does not know the issuer.
    const untrusted = await targetError(safeFetch('https://secure.test/', options({ ca: undefined })));
    expect(untrusted).toMatchObject({ kind: 'tls', stage: 'tls handshake' });
    expect(secure.requests).toHaveLength(0);
  });

  it('with rejectUnauthorized: false it fetches, and each hop reports what failed verification', async () => {
    const res = await safeFetch('https://wrong.test/', options({ rejectUnauthorized: false }));
    expect(res.final).toMatchObject({
      status: 200,
      tls: { authorized: false, authorizationError: 'ERR_TLS_CERT_ALTNAME_INVALID' },
    });
    expect(wrongName.requests).toMatchObject([{ host: 'wrong.test', servername: 'wrong.test' }]);
  });
});
