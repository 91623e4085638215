/**
 * Regression tests for the bugs the fault-injection suite (providers.test.ts)
 * exposed, each named after the bug with the reason in one line.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CrtshProvider } from '../../src/providers/ct/crtsh.js';
import { deadlineSignal } from '../../src/providers/deadline.js';
import { parseResolverUrl, StreamDnsProvider } from '../../src/providers/dns/index.js';
import { HttpClient } from '../../src/providers/http-client.js';
import type { ProviderInfo } from '../../src/providers/types.js';
import { type FakeDnsServer, startFakeDnsServer } from '../fakes/dns-server.js';
import { type FakeUpstream, startFakeUpstream } from '../fakes/https-upstream.js';
import { getTestPki } from '../fakes/test-ca.js';
import { buildTestApp } from '../helper.js';

/** A real garbage collection on demand (vitest workers run without --expose-gc). */
function collectGarbage(): void {
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
}

const INFO: ProviderInfo = {
  id: 'crtsh',
  name: 'crt.sh',
  capabilities: ['ct'],
  docs_url: 'https://crt.sh/',
  access: 'none',
  configured: true,
  endpoint: '',
};

describe('per-request deadlines survive garbage collection', () => {
  // Node 20 collects the timeout inside AbortSignal.any([signal, AbortSignal.timeout(ms)]) before it fires
  // (nodejs/node#57736): adapters' own deadlines silently vanished, so a hung upstream outlived them.
  it('deadlineSignal aborts with a TimeoutError after a GC', async () => {
    const parent = new AbortController();
    const signal = deadlineSignal(150, parent.signal);
    const aborted = new Promise<unknown>((resolve) =>
      signal.addEventListener('abort', () => resolve(signal.reason)),
    );
    collectGarbage();
    await new Promise((r) => setTimeout(r, 50));
    collectGarbage();
    const reason = await Promise.race([aborted, new Promise((r) => setTimeout(() => r('never'), 2000))]);
    expect((reason as Error).name).toBe('TimeoutError');
  });

  it('still follows the parent signal', () => {
    const parent = new AbortController();
    const signal = deadlineSignal(60_000, parent.signal);
    parent.abort(new Error('client left'));
    expect(signal.aborted).toBe(true);
    expect((signal.reason as Error).message).toBe('client left');
  });

  describe('crt.sh', () => {
    let ca: string;
    let hung: FakeUpstream;
    let http: HttpClient;
    beforeAll(async () => {
      ca = (await getTestPki()).caPem;
      hung = await startFakeUpstream({ prefix: '/crtsh' });
      hung.fault = 'timeout';
      http = new HttpClient({ ca });
    });
    afterAll(async () => {
      await http.close();
      await hung.close();
    });

    // The CT chain allows 70 s per attempt; each crt.sh search must give up at its own deadline (35 s in production).
    it('a search that never answers ends at the search deadline, GC or not', async () => {
      const crtsh = new CrtshProvider({ ...INFO, endpoint: hung.url }, http, { requestTimeoutMs: 300 });
      const pending = crtsh.issuances('example.com', new AbortController().signal);
      const settled = pending.then(
        () => 'answered',
        (err: Error) => err,
      );
      // Collections once the request is under way, as a busy process would have them.
      for (const ms of [20, 60, 120]) setTimeout(collectGarbage, ms);
      // The deadline lost to GC never fired at all: ending, even late on a loaded machine, is the proof.
      const outcome = await Promise.race([
        settled,
        new Promise((r) => setTimeout(() => r('still waiting'), 15_000)),
      ]);
      expect(outcome).toBeInstanceOf(Error);
      expect((outcome as { kind?: string }).kind).toBe('timeout');
    });
  });
});

describe('DNS over TCP: an answer stalled mid-frame', () => {
  let dns: FakeDnsServer;
  beforeAll(async () => {
    dns = await startFakeDnsServer();
  });
  afterAll(async () => {
    await dns.close();
  });

  // A server trickling one frame held every later query on the pooled connection hostage, and each
  // query restarted the idle timer, so under steady traffic the connection never closed by itself.
  it('closes the connection when a query gives up mid-frame, so the next query opens a fresh one', async () => {
    const tcp = new StreamDnsProvider(parseResolverUrl(dns.tcp));
    try {
      dns.set({ trickle: true });
      await expect(tcp.query('example.com', 'A', AbortSignal.timeout(400))).rejects.toThrow();
      dns.reset();
      // On the stuck connection this query would wait out its whole signal and fail: an answer
      // at all shows a fresh connection (no wall-clock bound needed, nor wanted on a loaded machine).
      const answer = await tcp.query('www.example.com', 'A', AbortSignal.timeout(10_000));
      expect(answer.rcode).toBe('NOERROR');
      expect(dns.tcpConnections).toBe(1);
    } finally {
      await tcp.close();
    }
  });
});

describe('input the fuzzing found answered wrongly', () => {
  // node:net's isIP() accepts a zone id, so the PTR path went on to classifyAddress, which threw: a 500.
  it('/api/dns type=PTR with an IPv6 zone id is a 400, not a 500', async () => {
    const app = await buildTestApp();
    for (const target of ['fe80::1%eth0', '[fe80::1%25eth0]']) {
      const res = await app.inject(`/api/dns?type=PTR&target=${encodeURIComponent(target)}`);
      expect(res.statusCode).toBe(400);
      expect(res.json().error).toMatch(/zone id/);
    }
  });

  // domainToASCII is a URL host parser: it percent-decoded the name and cut it at "/", "?" or "#",
  // so the answer was for another name than the one asked (evil.test?example.com → evil.test).
  it.each(['example%2Ecom', 'example.com/admin', 'evil.test?example.com', 'evil.test#example.com'])(
    'a domain parameter with URL syntax (%s) is a 400, never a lookup of another name',
    async (target) => {
      const app = await buildTestApp();
      const res = await app.inject(`/api/dns?target=${encodeURIComponent(target)}`);
      expect(res.statusCode).toBe(400);
      expect(res.json().error).toMatch(/^target must be a bare domain name/);
    },
  );

  // JSON.parse keeps the last of two equal names; a proxy or WAF may keep the first (RFC 8259 §4).
  it('a JSON body repeating a name is a 400 naming it', async () => {
    const app = await buildTestApp();
    const res = await app.inject({
      method: 'POST',
      url: '/api/challenge/verify',
      headers: { 'content-type': 'application/json' },
      payload: '{"token":"a","token":"b"}',
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toMatch(/"token" appears twice/);
  });
});
