/**
 * GET /api/my-ip through the whole app: which address is believed (socket
 * peer, or the forwarded client only behind a trusted proxy), edge headers
 * only from a trusted proxy, offline geo and AS, PTR from a fake resolver.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Config } from '../../src/config/index.js';
import { type FakeDnsServer, startFakeDnsServer } from '../fakes/dns-server.js';
import { DEFAULT_ZONES, testZone } from '../fakes/dns-zones.js';
import { getTestPki } from '../fakes/test-ca.js';
import { buildTestApp } from '../helper.js';
import { buildMmdb } from '../unit/features/ip/mmdb-writer.js';

const fixturePath = (p: string) => fileURLToPath(new URL(`../fixtures/${p}`, import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'netdiag-my-ip-'));
const MMDB = join(dir, 'dbip-city-ipv4.mmdb');
writeFileSync(
  MMDB,
  buildMmdb(
    [
      {
        cidr: '1.0.0.0/24',
        data: {
          city: 'Sydney',
          country_code: 'AU',
          latitude: -33.8688,
          longitude: 151.209,
          state1: 'New South Wales',
        },
      },
    ],
    { ipVersion: 4, databaseType: 'city ipv4', buildEpoch: Date.parse('2026-06-05T00:00:00Z') / 1000 },
  ),
);
/** The app clock: 15 days after the database was built. */
const NOW = Date.parse('2026-06-20T00:00:00Z');

let dns: FakeDnsServer;
beforeAll(async () => {
  dns = await startFakeDnsServer({
    zones: [
      ...DEFAULT_ZONES,
      testZone(
        '0.0.1.in-addr.arpa',
        [{ name: '7.0.0.1.in-addr.arpa', type: 'PTR', data: 'client.example.test' }],
        {
          ttl: 300,
        },
      ),
    ],
  });
});
afterAll(async () => {
  await dns.close();
  rmSync(dir, { recursive: true, force: true });
});

async function app(overrides: Partial<Config> = {}) {
  return buildTestApp({
    config: {
      geoipDb: MMDB,
      geoipAsnDb: fixturePath('ip/asn-ipv4.csv'),
      dnsResolvers: [dns.udp],
      rateLimitGeneral: { points: 1000, seconds: 60 },
      ...overrides,
    },
    ca: (await getTestPki()).caPem,
    clock: () => NOW,
  });
}

const DBIP_NOTICE = {
  text: 'IP Geolocation by DB-IP',
  url: 'https://db-ip.com',
  license: 'CC BY 4.0',
  license_url: 'https://creativecommons.org/licenses/by/4.0/',
};

const CLIENT = '1.0.0.7';
const SPOOFED = {
  'x-forwarded-for': '198.51.100.99',
  forwarded: 'for=198.51.100.98',
  'cf-ipcountry': 'XX',
  'cf-ray': 'spoofed-ray',
};

describe('GET /api/my-ip', () => {
  it('describes a direct client: address, PTR, offline geo, AS; never cached', async () => {
    const a = await app();
    const res = await a.inject({
      url: '/api/my-ip',
      remoteAddress: CLIENT,
      headers: { 'user-agent': 'curl/8.5.0' },
    });
    expect(res.statusCode).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.headers['x-service-cache']).toBeUndefined();
    expect(res.json()).toEqual({
      ip: CLIENT,
      version: 4,
      reverse_dns: 'client.example.test',
      geo: {
        country: { code: 'AU', name: 'Australia' },
        region: 'New South Wales',
        city: 'Sydney',
        latitude: -33.8688,
        longitude: 151.209,
        timezone: null,
        network: '1.0.0.0/24',
        accuracy_note: expect.stringContaining('never identifies a device'),
        // Named like the DB-IP file, so its data carries DB-IP's notice, linking the licence.
        attribution: [DBIP_NOTICE],
        data: { built_at: '2026-06-05T00:00:00.000Z', age_days: 15, stale: false },
      },
      asn: { number: 13335, org: 'Cloudflare, Inc.', attribution: [] },
      // The relay lists are unreachable in tests: not loaded, so no verdict.
      relay: null,
      edge: {},
      request: { protocol: 'http/1.1', user_agent: 'curl/8.5.0', via_trusted_proxy: false },
    });
  });

  it('ignores X-Forwarded-For, Forwarded and CDN headers from an untrusted peer (TRUST_PROXY=false)', async () => {
    const a = await app();
    const body = (await a.inject({ url: '/api/my-ip', remoteAddress: CLIENT, headers: SPOOFED })).json();
    expect(body.ip).toBe(CLIENT);
    expect(body.edge).toEqual({});
    expect(body.request.via_trusted_proxy).toBe(false);
  });

  it('ignores them from a peer outside the trusted CIDRs', async () => {
    const a = await app({ trustProxy: ['10.0.0.0/8'] });
    const body = (await a.inject({ url: '/api/my-ip', remoteAddress: CLIENT, headers: SPOOFED })).json();
    expect(body).toMatchObject({ ip: CLIENT, edge: {} });
  });

  it('believes X-Forwarded-For and passes allow-listed edge headers from a trusted proxy', async () => {
    const a = await app({ trustProxy: ['10.0.0.0/8'] });
    const res = await a.inject({
      url: '/api/my-ip',
      remoteAddress: '10.1.2.3',
      headers: {
        'x-forwarded-for': `203.0.113.200, ${CLIENT}`,
        'cf-ipcountry': 'AU',
        'cf-ray': '8f1c2b3a4d5e6f70-SYD',
        'cf-visitor': '{"scheme":"https"}',
        'cf-connecting-ip': CLIENT,
        'x-internal-secret': 'never shown',
      },
    });
    const body = res.json();
    // The proxy (trusted) says CLIENT connected to it; 203.0.113.200 is CLIENT's claim, not believed.
    expect(body.ip).toBe(CLIENT);
    expect(body.geo.city).toBe('Sydney');
    expect(body.edge).toEqual({
      'cf-ipcountry': 'AU',
      'cf-ray': '8f1c2b3a4d5e6f70-SYD',
      'cf-visitor': '{"scheme":"https"}',
      'cf-connecting-ip': CLIENT,
    });
    expect(body.request.via_trusted_proxy).toBe(true);
  });

  // Issue 16: a forwarded address with a port came back as `"ip":"203.0.113.13:41234","version":6`.
  it('reports a forwarded address written with a port or in brackets as the address itself', async () => {
    const a = await app({ trustProxy: ['10.0.0.0/8'] });
    for (const xff of [`${CLIENT}:41234`, `[::ffff:${CLIENT}]:443`]) {
      const res = await a.inject({
        url: '/api/my-ip',
        remoteAddress: '10.1.2.3',
        headers: { 'x-forwarded-for': xff },
      });
      expect(res.json(), xff).toMatchObject({ ip: CLIENT, version: 4, reverse_dns: 'client.example.test' });
    }
    const v6 = await a.inject({
      url: '/api/my-ip',
      remoteAddress: '10.1.2.3',
      headers: { 'x-forwarded-for': '[2001:DB8:0:0::7]:8443' },
    });
    expect(v6.json()).toMatchObject({ ip: '2001:db8::7', version: 6 });
  });

  it('reads RFC 7239 Forwarded from a trusted proxy that sends no X-Forwarded-For', async () => {
    const a = await app({ trustProxy: ['10.0.0.0/8'] });
    const body = (
      await a.inject({
        url: '/api/my-ip',
        remoteAddress: '10.1.2.3',
        headers: { forwarded: `for=${CLIENT};proto=https` },
      })
    ).json();
    expect(body.ip).toBe(CLIENT);
  });

  it('reports an IPv4 client on a dual-stack socket as IPv4', async () => {
    const a = await app();
    const body = (await a.inject({ url: '/api/my-ip', remoteAddress: `::ffff:${CLIENT}` })).json();
    expect(body).toMatchObject({ ip: CLIENT, version: 4, reverse_dns: 'client.example.test' });
  });

  it('answers 200 for a special-use client, with nothing looked up', async () => {
    const a = await app();
    dns.reset();
    const body = (await a.inject({ url: '/api/my-ip', remoteAddress: '192.168.1.20' })).json();
    expect(body).toMatchObject({
      ip: '192.168.1.20',
      version: 4,
      reverse_dns: null,
      geo: null,
      asn: null,
      relay: null,
    });
    expect(dns.queries).toHaveLength(0); // no PTR query for a private address leaves the service
  });

  it('answers without a name when the resolver does not answer in time', async () => {
    // A lookup that is not cut short by my-ip's own 1.5 s would wait for this.
    const a = await app({ providerTimeoutMs: 20_000 });
    dns.set({ drop: true });
    try {
      const started = Date.now();
      const body = (await a.inject({ url: '/api/my-ip', remoteAddress: '1.0.0.8' })).json();
      expect(body).toMatchObject({ ip: '1.0.0.8', reverse_dns: null, geo: { city: 'Sydney' } });
      expect(Date.now() - started).toBeLessThan(10_000);
    } finally {
      dns.reset();
    }
  });

  it('needs no lookup session when challenge protection is on (ip-geo does)', async () => {
    const a = await app({ turnstileSiteKey: 'site-key', turnstileSecretKey: 'secret-key' });
    expect((await a.inject({ url: '/api/my-ip', remoteAddress: CLIENT })).statusCode).toBe(200);
    const gated = await a.inject({ url: `/api/ip-geo?ip=${CLIENT}`, remoteAddress: CLIENT });
    expect(gated.statusCode).toBe(403);
    expect(gated.json().code).toBe('challenge_required');
  });

  it('names the protocol of a real connection', async () => {
    const a = await app();
    await a.listen({ port: 0, host: '127.0.0.1' });
    const { port } = a.server.address() as { port: number };
    const body = await new Promise<{ ip: string; request: { protocol: string } }>((resolve, reject) => {
      httpRequest({ host: '127.0.0.1', port, path: '/api/my-ip' }, (res) => {
        let data = '';
        res.on('data', (chunk) => (data += chunk));
        res.on('end', () => resolve(JSON.parse(data)));
      })
        .on('error', reject)
        .end();
    });
    expect(body.ip).toBe('127.0.0.1');
    expect(body.request.protocol).toBe('http/1.1');
  });
});
