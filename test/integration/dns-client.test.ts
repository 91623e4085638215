/**
 * Every DNS transport against the fake resolver on loopback: the same
 * questions over UDP, TCP, DoH and DoT, then what is particular to each.
 */
import type { AddressInfo } from 'node:net';
import { createServer as createTlsServer } from 'node:tls';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CachedLoader } from '../../src/cache/cached.js';
import { MemoryCache } from '../../src/cache/memory.js';
import { ProviderError } from '../../src/errors.js';
import { ProviderChain } from '../../src/providers/chain.js';
import {
  createDnsProviders,
  type DnsAnswer,
  type DnsRecordType,
  DnsResolver,
  type DnsTransport,
  type DnsTransportProvider,
  DohDnsProvider,
  parseResolverUrl,
  presentation,
  StreamDnsProvider,
  UdpDnsProvider,
} from '../../src/providers/dns/index.js';
import { ProviderRegistry } from '../../src/providers/registry.js';
import { type FakeDnsServer, startFakeDnsServer } from '../fakes/dns-server.js';
import { DNSKEY_PUBLIC, ip6ArpaName, LONG_TXT_STRINGS } from '../fakes/dns-zones.js';
import { getTestPki } from '../fakes/test-ca.js';

let dns: FakeDnsServer;
let byTransport: Record<DnsTransport, DnsTransportProvider>;
const extra: DnsTransportProvider[] = [];

beforeAll(async () => {
  dns = await startFakeDnsServer();
  const [udp, tcp, doh, dot] = createDnsProviders([dns.udp, dns.tcp, dns.doh, dns.dot], {
    ca: dns.caPem,
    udpRetryAfterMs: 150,
  });
  byTransport = { udp: udp!, tcp: tcp!, doh: doh!, dot: dot! };
});

afterEach(() => dns.reset());

afterAll(async () => {
  await Promise.all([...Object.values(byTransport), ...extra].map((p) => p.close()));
  await dns.close();
});

/** A provider made for one test, closed with the others. */
function provider<T extends DnsTransportProvider>(p: T): T {
  extra.push(p);
  return p;
}

const ask = (
  p: DnsTransportProvider,
  name: string,
  type: DnsRecordType,
  timeoutMs = 3000,
): Promise<DnsAnswer> => p.query(name, type, AbortSignal.timeout(timeoutMs));

async function failure(promise: Promise<unknown>): Promise<ProviderError> {
  try {
    await promise;
  } catch (err) {
    expect(err).toBeInstanceOf(ProviderError);
    return err as ProviderError;
  }
  throw new Error('expected the query to fail');
}

/** `type presentation` of each answer RR, the way the API lists them. */
const shown = (a: DnsAnswer) => a.answers.map((rr) => `${rr.name} ${rr.ttl} ${rr.type} ${presentation(rr)}`);

const TRANSPORTS: DnsTransport[] = ['udp', 'tcp', 'doh', 'dot'];

describe.each(TRANSPORTS)('over %s', (transport) => {
  const p = () => byTransport[transport];

  it('answers A and AAAA', async () => {
    const a = await ask(p(), 'example.test', 'A');
    expect(a.rcode).toBe('NOERROR');
    expect(a.answers).toEqual([
      { name: 'example.test', type: 'A', ttl: 300, data: { address: '192.0.2.10' } },
    ]);
    const aaaa = await ask(p(), 'example.test', 'AAAA');
    expect(aaaa.answers).toEqual([
      { name: 'example.test', type: 'AAAA', ttl: 300, data: { address: '2001:db8::10' } },
    ]);
  });

  it('follows a CNAME chain into the answer section', async () => {
    const a = await ask(p(), 'www.example.test', 'A');
    expect(shown(a)).toEqual([
      'www.example.test 600 CNAME alias.example.test',
      'alias.example.test 120 A 192.0.2.20',
    ]);
    const cname = await ask(p(), 'www.example.test', 'CNAME');
    expect(cname.answers).toEqual([
      { name: 'www.example.test', type: 'CNAME', ttl: 600, data: { target: 'alias.example.test' } },
    ]);
  });

  it('answers MX, NS, SOA, CAA, SRV', async () => {
    expect(shown(await ask(p(), 'example.test', 'MX'))).toEqual([
      'example.test 300 MX 10 mail.example.test',
      'example.test 300 MX 20 mail2.example.test',
    ]);
    expect((await ask(p(), 'example.test', 'NS')).answers.map((rr) => rr.data)).toEqual([
      { host: 'ns1.example.test' },
      { host: 'ns2.example.test' },
    ]);
    expect((await ask(p(), 'example.test', 'SOA')).answers).toEqual([
      {
        name: 'example.test',
        type: 'SOA',
        ttl: 3600,
        data: {
          mname: 'ns1.example.test',
          rname: 'hostmaster.example.test',
          serial: 2024060101,
          refresh: 7200,
          retry: 3600,
          expire: 1209600,
          minimum: 60,
        },
      },
    ]);
    expect((await ask(p(), 'example.test', 'CAA')).answers.map((rr) => rr.data)).toEqual([
      { flags: 0, tag: 'issue', value: 'letsencrypt.org', critical: false },
      { flags: 0, tag: 'iodef', value: 'mailto:security@example.test', critical: false },
      { flags: 128, tag: 'tbs', value: 'unknown', critical: true },
    ]);
    expect(shown(await ask(p(), '_sip._tcp.example.test', 'SRV'))).toEqual([
      '_sip._tcp.example.test 600 SRV 10 60 5060 sip.example.test',
      '_sip._tcp.example.test 600 SRV 20 0 5060 sip2.example.test',
    ]);
  });

  it('answers TXT, including one longer than 255 bytes split into several strings', async () => {
    const spf = await ask(p(), 'example.test', 'TXT');
    expect(spf.answers.map((rr) => rr.data)).toEqual([
      { text: 'v=spf1 ip4:192.0.2.0/24 -all', strings: ['v=spf1 ip4:192.0.2.0/24 -all'] },
    ]);
    const long = await ask(p(), 'long.example.test', 'TXT');
    const [rr] = long.answers;
    expect(rr?.type).toBe('TXT');
    if (rr?.type !== 'TXT') return;
    expect(rr.data.strings).toEqual(LONG_TXT_STRINGS);
    expect(rr.data.text).toBe(LONG_TXT_STRINGS.join(''));
    expect(rr.data.text.length).toBeGreaterThan(255);
  });

  it('answers PTR under in-addr.arpa and ip6.arpa', async () => {
    const v4 = await ask(p(), '10.2.0.192.in-addr.arpa', 'PTR');
    expect(v4.answers).toEqual([
      { name: '10.2.0.192.in-addr.arpa', type: 'PTR', ttl: 3600, data: { host: 'example.test' } },
    ]);
    const v6 = await ask(p(), ip6ArpaName('2001:db8::10'), 'PTR');
    expect(v6.answers.map((r) => r.data)).toEqual([{ host: 'example.test' }]);
  });

  it('answers DS, DNSKEY and HTTPS', async () => {
    expect(shown(await ask(p(), 'example.test', 'DS'))).toEqual([
      `example.test 3600 DS 2371 13 2 ${'AB'.repeat(32)}`,
    ]);
    const key = await ask(p(), 'example.test', 'DNSKEY');
    expect(key.answers[0]?.data).toMatchObject({
      flags: 257,
      algorithm: 13,
      publicKey: DNSKEY_PUBLIC.toString('base64'),
    });
    expect(shown(await ask(p(), 'example.test', 'HTTPS'))).toEqual([
      'example.test 300 HTTPS 1 . alpn=h2,h3 ipv4hint=192.0.2.10 ipv6hint=2001:db8::10',
    ]);
  });

  it('returns NXDOMAIN as an answer, with the SOA in the authority section', async () => {
    const a = await ask(p(), 'nope.example.test', 'A');
    expect(a.rcode).toBe('NXDOMAIN');
    expect(a.answers).toEqual([]);
    expect(a.authorities.map((rr) => [rr.name, rr.type, rr.ttl])).toEqual([['example.test', 'SOA', 3600]]);
  });

  it('returns NODATA (NOERROR, no records, SOA in authority) as an answer', async () => {
    const a = await ask(p(), 'mail.example.test', 'AAAA');
    expect(a.rcode).toBe('NOERROR');
    expect(a.answers).toEqual([]);
    expect(a.authorities[0]?.type).toBe('SOA');
    // An empty non-terminal (only names below it exist) is NODATA too, not NXDOMAIN.
    expect((await ask(p(), '_tcp.example.test', 'SRV')).rcode).toBe('NOERROR');
  });

  it('returns NXDOMAIN with the CNAME for a chain ending at a missing name (RFC 6604)', async () => {
    const a = await ask(p(), 'dangling.example.test', 'A');
    expect(a.rcode).toBe('NXDOMAIN');
    expect(shown(a)).toEqual(['dangling.example.test 900 CNAME gone.example.test']);
  });

  it('reports AD as the resolver sets it', async () => {
    expect((await ask(p(), 'example.com', 'A')).flags.ad).toBe(true);
    expect((await ask(p(), 'example.test', 'A')).flags.ad).toBe(false);
    dns.set({ ad: true });
    expect((await ask(p(), 'example.test', 'A')).flags.ad).toBe(true);
    dns.set({ ad: false });
    expect((await ask(p(), 'example.com', 'A')).flags.ad).toBe(false);
  });

  it('sends EDNS0 with a 1232-byte payload and the DO bit, RD set', async () => {
    await ask(p(), 'example.test', 'A');
    const [q] = dns.queries;
    expect(q).toMatchObject({ transport, name: 'example.test', type: 'A', rd: true });
    expect(q?.edns).toEqual({ udpPayloadSize: 1232, do: true });
  });

  it.each(['SERVFAIL', 'REFUSED', 'FORMERR', 'NOTIMP'])('throws upstream_error for %s', async (rcode) => {
    dns.set({ rcode });
    const err = await failure(ask(p(), 'example.test', 'A'));
    expect(err.kind).toBe('upstream_error');
    expect(err.message).toBe(rcode);
  });

  it('throws for a refusal that omits the question section', async () => {
    dns.set({ rcode: 'REFUSED', omitQuestion: true });
    const err = await failure(ask(p(), 'example.test', 'A'));
    expect(err.kind).toBe('upstream_error');
  });

  it('parses Extended DNS Errors on answers and names them on failures', async () => {
    dns.set({ ede: [{ code: 3, text: 'served stale' }] });
    const a = await ask(p(), 'example.test', 'A');
    expect(a.ede).toEqual([{ code: 3, text: 'served stale' }]);
    dns.set({ rcode: 'SERVFAIL', ede: [{ code: 6, text: 'RRSIG invalid' }] });
    const err = await failure(ask(p(), 'example.test', 'A'));
    expect(err.message).toBe('SERVFAIL (EDE 6 DNSSEC Bogus: RRSIG invalid)');
  });

  it('merges the extended rcode (BADVERS)', async () => {
    dns.set({ rcode: 'BADVERS' });
    expect((await failure(ask(p(), 'example.test', 'A'))).message).toBe('BADVERS');
  });

  it('times out through the signal when the server never answers', async () => {
    dns.set({ drop: true });
    const started = Date.now();
    const err = await failure(ask(p(), 'example.test', 'A', 400));
    expect(err.kind).toBe('timeout');
    // Ended by the 400 ms signal (a loaded machine may stretch it to seconds), not left hanging.
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('answers again after a slow answer', async () => {
    dns.set({ delayMs: 100 });
    expect((await ask(p(), 'example.test', 'A')).rcode).toBe('NOERROR');
  });

  it('reports a malformed answer as bad_response', async () => {
    dns.set({ garbage: true });
    const err = await failure(ask(p(), 'example.test', 'A'));
    expect(err.kind).toBe('bad_response');
  });

  it('honours an already aborted signal without sending anything', async () => {
    const controller = new AbortController();
    controller.abort();
    await expect(p().query('example.test', 'A', controller.signal)).rejects.toThrow();
    expect(dns.counts[transport]).toBe(0);
  });
});

describe('UDP specifics', () => {
  it('retries over TCP when the answer is truncated (TC=1)', async () => {
    dns.set({ truncateUdp: true });
    const a = await ask(byTransport.udp, 'www.example.test', 'A');
    expect(a.flags.tc).toBe(false);
    expect(a.answers.map((rr) => rr.type)).toEqual(['CNAME', 'A']);
    expect(dns.counts).toMatchObject({ udp: 1, tcp: 1 });
  });

  it('retries over TCP when an answer does not fit in 1232 bytes', async () => {
    const a = await ask(byTransport.udp, 'big.example.test', 'TXT');
    expect(a.answers).toHaveLength(24);
    expect(dns.counts).toMatchObject({ udp: 1, tcp: 1 });
  });

  it('sends a lost query once more, and only once', async () => {
    dns.set({ drop: 1 }, 'udp');
    expect((await ask(byTransport.udp, 'example.test', 'A')).rcode).toBe('NOERROR');
    expect(dns.counts.udp).toBe(2);

    dns.reset();
    dns.set({ drop: true }, 'udp');
    const err = await failure(ask(byTransport.udp, 'example.test', 'A'));
    expect(err.kind).toBe('timeout');
    expect(dns.counts.udp).toBe(2);
  });

  it('ignores datagrams with a wrong id or a wrong question (spoofing)', async () => {
    dns.set({ spoofUdp: true });
    const a = await ask(byTransport.udp, 'example.test', 'A');
    expect(a.answers).toEqual([
      { name: 'example.test', type: 'A', ttl: 300, data: { address: '192.0.2.10' } },
    ]);
    expect(dns.counts.udp).toBe(1);
  });

  it('uses a fresh random id per query', async () => {
    await Promise.all([1, 2, 3, 4].map(() => ask(byTransport.udp, 'example.test', 'A')));
    const ids = new Set(dns.queries.map((q) => q.id));
    expect(ids.size).toBeGreaterThan(1);
  });

  it('reports a closed port as a network error (ICMP port unreachable)', async () => {
    const closed = await startFakeDnsServer();
    const url = closed.udp;
    await closed.close();
    const udp = provider(new UdpDnsProvider(parseResolverUrl(url), { retryAfterMs: 300 }));
    const err = await failure(ask(udp, 'example.test', 'A'));
    expect(['network', 'timeout']).toContain(err.kind);
  });
});

describe('TCP and DoT specifics', () => {
  it.each(['tcp', 'dot'] as const)(
    '%s pipelines concurrent queries over one connection',
    async (transport) => {
      const p = provider(
        createDnsProviders([transport === 'tcp' ? dns.tcp : dns.dot], { ca: dns.caPem })[0]!,
      );
      dns.set({ delayMs: 30 });
      const answers = await Promise.all(
        ['example.test', 'example.com', 'www.example.test', 'mail.example.test'].flatMap((name) =>
          [1, 2, 3].map(() => ask(p, name, 'A')),
        ),
      );
      expect(answers.every((a) => a.rcode === 'NOERROR')).toBe(true);
      if (transport === 'tcp') expect(dns.tcpConnections).toBe(1);
      else expect(dns.tlsConnections.dot).toBe(1);
    },
  );

  it('DoT refuses a certificate it cannot verify (TLS failure)', async () => {
    const untrusting = provider(new StreamDnsProvider(parseResolverUrl(dns.dot)));
    const err = await failure(ask(untrusting, 'example.test', 'A'));
    expect(err.kind).toBe('tls');
  });

  it('DoT checks the certificate against the address in the URL', async () => {
    // A server whose certificate chains to the test CA but names another host.
    const pki = await getTestPki();
    const other = await pki.issue({ dnsNames: ['other.example.test'] });
    const server = createTlsServer({ key: other.keyPem, cert: other.certPem }, (s) => s.destroy());
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const { port } = server.address() as AddressInfo;
      const p = provider(
        new StreamDnsProvider(parseResolverUrl(`tls://127.0.0.1:${port}`), { ca: pki.caPem }),
      );
      expect((await failure(ask(p, 'example.test', 'A'))).kind).toBe('tls');
    } finally {
      await new Promise((r) => server.close(r));
    }
  });

  it.each(['tcp', 'dot'] as const)(
    '%s reconnects after the server closed an idle connection',
    async (transport) => {
      const p = provider(
        createDnsProviders([transport === 'tcp' ? dns.tcp : dns.dot], { ca: dns.caPem })[0]!,
      );
      await ask(p, 'example.test', 'A');
      dns.disconnect();
      await new Promise((r) => setTimeout(r, 20));
      expect((await ask(p, 'example.test', 'A')).rcode).toBe('NOERROR');
      expect(dns.counts[transport]).toBe(2);
    },
  );

  it.each(['tcp', 'dot'] as const)(
    '%s retries once on a fresh connection when a pooled one closes under a query',
    async (transport) => {
      const p = provider(
        createDnsProviders([transport === 'tcp' ? dns.tcp : dns.dot], { ca: dns.caPem })[0]!,
      );
      await ask(p, 'example.test', 'A');
      dns.set({ hangUp: 1 });
      expect((await ask(p, 'example.test', 'A')).rcode).toBe('NOERROR');
      expect(dns.counts[transport]).toBe(3);

      // A server that hangs up every time gets exactly one retry, then a network failure.
      dns.reset();
      await ask(p, 'example.test', 'A');
      dns.set({ hangUp: true });
      expect((await failure(ask(p, 'example.test', 'A'))).kind).toBe('network');
      expect(dns.counts[transport]).toBe(3);
    },
  );

  it('a fresh connection that closes without an answer is not retried', async () => {
    const p = provider(createDnsProviders([dns.tcp])[0]!);
    dns.set({ hangUp: true });
    expect((await failure(ask(p, 'example.test', 'A'))).kind).toBe('network');
    expect(dns.counts.tcp).toBe(1);
  });
});

describe('DoH specifics', () => {
  it('negotiates HTTP/2 and sends message id 0 (RFC 8484 §4.1)', async () => {
    await ask(byTransport.doh, 'example.test', 'A');
    expect(dns.dohProtocols).toEqual(['2.0']);
    expect(dns.queries[0]?.id).toBe(0);
  });

  it('reuses one HTTP/2 connection for sequential and concurrent queries', async () => {
    const p = provider(new DohDnsProvider(parseResolverUrl(dns.doh), { ca: dns.caPem }));
    for (const name of ['example.test', 'example.com', 'www.example.test']) await ask(p, name, 'A');
    const burst = await Promise.all(
      Array.from({ length: 30 }, (_, i) => ask(p, i % 2 ? 'example.test' : 'example.com', 'MX')),
    );
    expect(burst).toHaveLength(30);
    expect(dns.tlsConnections.doh).toBe(1);
    expect(new Set(dns.dohProtocols)).toEqual(new Set(['2.0']));
  });

  it('falls back to HTTP/1.1 when the server does not offer h2', async () => {
    const h1 = await startFakeDnsServer({ dohHttp1Only: true });
    try {
      const p = provider(new DohDnsProvider(parseResolverUrl(h1.doh), { ca: h1.caPem }));
      expect((await ask(p, 'www.example.test', 'A')).answers).toHaveLength(2);
      expect((await ask(p, 'long.example.test', 'TXT')).answers).toHaveLength(1);
      expect(h1.dohProtocols).toEqual(['1.1', '1.1']);
    } finally {
      await h1.close();
    }
  });

  /**
   * Google Public DNS's documented redirect rules (developers.google.com/speed/public-dns/docs/doh, "Redirections"):
   * a POST redirected by 301/302 is retried as a GET only when the new URL carries `dns=`,
   * otherwise as a POST; 307/308 always keep the POST; permanent redirects are remembered.
   */
  describe('redirects', () => {
    const doh = (path: string, server = dns) =>
      provider(new DohDnsProvider(parseResolverUrl(`${server.dohBase}${path}`), { ca: server.caPem }));

    it.each([
      ['308', '/moved'],
      ['301 to a URL without dns=', '/moved-permanently'],
    ])('POSTs again after a %s', async (_, path) => {
      expect((await ask(doh(path), 'example.test', 'A')).answers).toHaveLength(1);
      expect(dns.dohRequests).toEqual([
        { method: 'POST', path },
        { method: 'POST', path: '/dns-query' },
      ]);
    });

    it.each([false, true])(
      'follows a 301 to a URL carrying dns= with a GET of that URL (HTTP/1.1 only: %s)',
      async (http1Only) => {
        const server = http1Only ? await startFakeDnsServer({ dohHttp1Only: true }) : dns;
        try {
          const answer = await ask(doh('/to-get', server), 'www.example.test', 'A');
          expect(answer.answers.map((rr) => rr.type)).toEqual(['CNAME', 'A']);
          expect(server.dohRequests.map((r) => r.method)).toEqual(['POST', 'GET']);
          expect(server.dohRequests[1]?.path).toMatch(/^\/dns-query\?dns=[\w-]+$/);
          expect(server.queries.map((q) => q.name)).toEqual(['www.example.test']);
        } finally {
          if (server !== dns) await server.close();
        }
      },
    );

    it('remembers a permanent redirect to a POST target: later queries go straight there', async () => {
      const p = doh('/moved');
      await ask(p, 'example.test', 'A');
      await ask(p, 'example.com', 'A');
      expect(dns.dohRequests.map((r) => r.path)).toEqual(['/moved', '/dns-query', '/dns-query']);
    });

    it('does not remember a redirect to a dns= URL, which holds one question', async () => {
      const p = doh('/to-get');
      await ask(p, 'example.test', 'A');
      await ask(p, 'example.com', 'A');
      expect(dns.dohRequests.map((r) => `${r.method} ${r.path.replace(/\?.*/, '')}`)).toEqual([
        'POST /to-get',
        'GET /dns-query',
        'POST /to-get',
        'GET /dns-query',
      ]);
    });

    it('refuses a 303 to a URL without dns= (the GET it calls for would carry no question)', async () => {
      const err = await failure(ask(doh('/see-other'), 'example.test', 'A'));
      expect(err.kind).toBe('http_status');
      expect(err.message).toMatch(/303.*without dns=/);
      expect(dns.dohRequests).toEqual([{ method: 'POST', path: '/see-other' }]);
    });

    it('refuses a redirect off https', async () => {
      const err = await failure(ask(doh('/to-http'), 'example.test', 'A'));
      expect(err.kind).toBe('http_status');
      expect(err.message).toMatch(/must stay on https/);
      expect(dns.dohRequests).toHaveLength(1);
    });

    it('a refused redirect is an operational failure: the next resolver answers', async () => {
      const registry = new ProviderRegistry();
      const providers = createDnsProviders([`${dns.dohBase}/see-other`, dns.udp], { ca: dns.caPem });
      extra.push(...providers);
      registry.registerChain('dns', providers);
      const chain = new ProviderChain({
        loader: new CachedLoader(new MemoryCache(), {}),
        registry,
        timeoutMs: 3000,
      });
      const result = await new DnsResolver(chain, providers).resolve('example.test', 'A');
      expect(result.source_id).toBe(providers[1]?.info.id);
      expect(result.providers_tried.map((a) => a.status)).toEqual(['failed', 'ok']);
      expect(result.providers_tried[0]?.error).toMatch(/^http_status: .*303/);
    });

    it('gives up after 3 redirects', async () => {
      const p = provider(new DohDnsProvider(parseResolverUrl(`${dns.dohBase}/loop`), { ca: dns.caPem }));
      const err = await failure(ask(p, 'example.test', 'A'));
      expect(err.kind).toBe('http_status');
      expect(dns.dohProtocols).toHaveLength(4);
    });
  });

  it.each([
    [500, 'http_status'],
    [503, 'http_status'],
    [404, 'http_status'],
    [400, 'http_status'],
    [429, 'rate_limited'],
  ])('treats HTTP %i as %s', async (status, kind) => {
    dns.set({ dohStatus: status });
    expect((await failure(ask(byTransport.doh, 'example.test', 'A'))).kind).toBe(kind);
  });

  it('refuses an answer with the wrong content-type as bad_response', async () => {
    dns.set({ dohContentType: 'application/json' });
    const err = await failure(ask(byTransport.doh, 'example.test', 'A'));
    expect(err.kind).toBe('bad_response');
  });

  it('refuses a certificate it cannot verify (TLS failure)', async () => {
    const untrusting = provider(new DohDnsProvider(parseResolverUrl(dns.doh)));
    expect((await failure(ask(untrusting, 'example.test', 'A'))).kind).toBe('tls');
  });

  it('reports a refused connection as a network error', async () => {
    const gone = await startFakeDnsServer();
    const url = gone.doh;
    await gone.close();
    const p = provider(new DohDnsProvider(parseResolverUrl(url), { ca: dns.caPem }));
    expect((await failure(ask(p, 'example.test', 'A'))).kind).toBe('network');
  });

  it('retries once on a new HTTP/2 connection when the pooled one closes under a query', async () => {
    const p = provider(new DohDnsProvider(parseResolverUrl(dns.doh), { ca: dns.caPem }));
    await ask(p, 'example.test', 'A');
    dns.set({ hangUp: 1 });
    expect((await ask(p, 'example.test', 'A')).rcode).toBe('NOERROR');
    expect(dns.counts.doh).toBe(3);
    expect(dns.tlsConnections.doh).toBe(2);

    dns.reset();
    await ask(p, 'example.test', 'A');
    dns.set({ hangUp: true });
    expect((await failure(ask(p, 'example.test', 'A'))).kind).toBe('network');
    expect(dns.counts.doh).toBe(3);
  });

  it('opens a new connection after the server closed the idle one', async () => {
    const p = provider(new DohDnsProvider(parseResolverUrl(dns.doh), { ca: dns.caPem }));
    await ask(p, 'example.test', 'A');
    dns.disconnect();
    await new Promise((r) => setTimeout(r, 20));
    expect((await ask(p, 'example.test', 'A')).rcode).toBe('NOERROR');
    expect(dns.tlsConnections.doh).toBe(2);
  });

  it('opens a new connection after close()', async () => {
    const p = provider(new DohDnsProvider(parseResolverUrl(dns.doh), { ca: dns.caPem }));
    await ask(p, 'example.test', 'A');
    await p.close();
    await ask(p, 'example.test', 'A');
    expect(dns.tlsConnections.doh).toBe(2);
  });
});
