/**
 * The whole app listening on loopback against fixture upstreams, for the
 * browser tests and for looking at the site by hand:
 *
 *   npx tsx test/e2e/fixture-app.ts [--challenge] [--dnssec]   # prints the URL; Ctrl-C stops it
 *
 * Upstreams: the fake DNS server (DoH, fixture zones: example.test,
 * example.com, and sender.test for the SPF check), a fake crt.sh (example.com and python.org rows), a fake
 * Globalping (ten countries, two of them seeing a different answer), a fake
 * RDAP aggregator (google.com), a fake RIPEstat, the relay lists from
 * fixtures, a web site `www.inspect.test` on 127.0.0.x:80/443 with a test-CA
 * certificate for TLS and inspect (when ports 80/443 can be bound, that is
 * as root, as in CI), two fake mail servers on 127.0.0.x:25 for the mail
 * servers tool (mailtls.test: one host with a matching DANE record, one with a
 * record left stale by a certificate change; also only as root), `www.scan.test` for the TLS
 * scan (openssl s_server on 127.0.0.x:443, test/fakes/tls-scan-server.ts; root and openssl), and, with `challenge`, the fake siteverify plus a fake
 * Turnstile widget script served from another origin (so the page's CSP is
 * exercised for real). With `dnssec` (`--dnssec` by hand), the signed hierarchy of
 * test/fakes/bind-hierarchy.ts is the DNS engine's root, for the DNSSEC tool (www.secure.test,
 * www.expired.test and the other cases of test/fakes/bind-cases.ts): root and BIND needed.
 *
 * The python.org crt.sh rows, the google.com RDAP answer, RIPEstat's prefix overview and the
 * relay lists are real captures from ../shared (test/shared-data.ts); without it the upstreams
 * start without them (`captures`).
 */

import { createHash, X509Certificate } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import pino from 'pino';
import { build } from '../../scripts/build.js';
import { buildApp } from '../../src/app.js';
import { type Config, TEST_UPSTREAM_ENV, testConfig } from '../../src/config/index.js';
import { type BindHierarchy, startBindHierarchy } from '../fakes/bind-hierarchy.js';
import { startCrtsh } from '../fakes/crtsh.js';
import { type FakeDnsServer, startFakeDnsServer } from '../fakes/dns-server.js';
import { DEFAULT_ZONES, type FakeRecord, type FakeZone, testZone } from '../fakes/dns-zones.js';
import { startGlobalping } from '../fakes/globalping.js';
import { type HttpTarget, startHttpTarget } from '../fakes/http-targets.js';
import { type FakeReply, type FakeUpstream, fixture, startFakeUpstream } from '../fakes/https-upstream.js';
import { type FakeSmtpServer, startFakeSmtpServer } from '../fakes/smtp-server.js';
import { getTestPki } from '../fakes/test-ca.js';
import { SCAN_HOST, startTlsScanServer } from '../fakes/tls-scan-server.js';
import {
  activeConfig,
  type FakeSiteverify,
  startFakeSiteverify,
} from '../integration/challenge-fake-siteverify.js';
import { hasShared, sharedFixture, sharedFixtureText } from '../shared-data.js';

export interface FixtureAppOptions {
  config?: Partial<Config>;
  /** Turn challenge protection on, with the fake widget and the fake siteverify. */
  challenge?: boolean;
  /**
   * Start the signed BIND hierarchy and make it the DNS engine's root and trust anchor
   * (test/fakes/bind-hierarchy.ts; the caller checks bindHierarchyUnavailable() first).
   */
  dnssec?: boolean;
}

export interface FixtureApp {
  url: string;
  app: FastifyInstance;
  dns: FakeDnsServer;
  /** Its upstreams as the configuration contract's variables (FixtureUpstreams.env). */
  env: Record<string, string>;
  siteverify: FakeSiteverify | undefined;
  /** The name of the web site for TLS and inspect, when its ports could be bound. */
  inspectHost: string | undefined;
  /** The domain for the mail servers tool, when port 25 could be bound. */
  mailDomain: string | undefined;
  /** The host the TLS scan scans (test/fakes/tls-scan-server.ts), when it could be started. */
  scanHost: string | undefined;
  /** The signed hierarchy the DNSSEC tool validates against, with `dnssec`. */
  hierarchy: BindHierarchy | undefined;
  /** How many times the fake widget script was fetched. */
  widgetLoads(): number;
  close(): Promise<void>;
}

/**
 * A stand-in for Cloudflare's api.js with the same entry point the page uses:
 * `turnstile.render(el, {sitekey, callback})` calls back with a token the fake
 * siteverify accepts once (`pass:<random>`).
 */
const FAKE_WIDGET = `window.turnstile = {
  render: function (el, opts) {
    var box = document.createElement('p');
    box.className = 'fake-turnstile';
    box.textContent = 'Fake widget for site key ' + opts.sitekey;
    el.appendChild(box);
    setTimeout(function () { opts.callback('pass:' + Math.random().toString(36).slice(2)); }, 150);
    return 'fake-widget';
  },
  remove: function () {}
};`;

async function startWidgetServer(): Promise<{ server: Server; url: string; loads: () => number }> {
  let loads = 0;
  const server = createServer((req, res) => {
    if (req.url?.startsWith('/turnstile/v0/api.js')) {
      loads++;
      res.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8', 'cache-control': 'no-store' });
      res.end(FAKE_WIDGET);
      return;
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { server, url: `http://127.0.0.1:${port}/turnstile/v0/api.js`, loads: () => loads };
}

const INSPECT_HOST = 'www.inspect.test';
/** A name of the same site its certificate does not cover: what every browser rejects. */
export const WRONG_NAME_HOST = 'wrongname.inspect.test';

/** What a carefully configured site sends. */
const GOOD_HEADERS = {
  'strict-transport-security': 'max-age=63072000; includeSubDomains; preload',
  'content-security-policy': "default-src 'self'; object-src 'none'; base-uri 'self'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'strict-origin-when-cross-origin',
  'permissions-policy': 'camera=(), microphone=(), geolocation=()',
  'cross-origin-opener-policy': 'same-origin',
  'alt-svc': 'h3=":443"; ma=86400',
};

interface WebSite {
  address: string;
  close(): Promise<void>;
}

/**
 * http://www.inspect.test/ → https://www.inspect.test/ (good headers, h2), on one
 * free 127.0.0.x address. Ports 80 and 443 need root; without it there is no site.
 */
async function startWebSite(): Promise<WebSite | undefined> {
  const pki = await getTestPki();
  for (let i = 0; i < 40; i++) {
    const address = `127.0.0.${10 + ((process.pid * 13 + i) % 240)}`;
    let https: HttpTarget | undefined;
    try {
      const cert = await pki.issue({ dnsNames: [INSPECT_HOST, 'inspect.test'], ips: [address] });
      https = await startHttpTarget({
        protocol: 'https',
        address,
        h2: true,
        cert,
        fallback: { headers: GOOD_HEADERS, body: '<h1>hello</h1>' },
      });
      const http = await startHttpTarget({
        address,
        fallback: { status: 301, redirect: `https://${INSPECT_HOST}/` },
      });
      const site = https;
      return { address, close: async () => void (await Promise.all([http.close(), site.close()])) };
    } catch (err) {
      await https?.close();
      if ((err as NodeJS.ErrnoException).code === 'EACCES') return undefined;
    }
  }
  return undefined;
}

function inspectZone(address: string): FakeZone {
  return testZone(
    'inspect.test',
    [
      { name: 'inspect.test', type: 'A', data: address },
      { name: INSPECT_HOST, type: 'A', data: address },
      { name: WRONG_NAME_HOST, type: 'A', data: address },
    ],
    { ttl: 300 },
  );
}

/**
 * A sender for the SPF check (RFC 7208): its own MX, a mail provider's
 * addresses by include, and an explanation for everyone else (exp=, §6.2).
 * 198.51.100.7 passes through the include; 203.0.113.9 fails with the
 * explanation (the include's ~all does not match, sender.test's -all does);
 * broken.sender.test's policy is a permerror.
 */
export const SPF_SENDER = 'alice@sender.test';

function spfZones(): FakeZone[] {
  return [
    testZone('sender.test', [
      { name: 'sender.test', type: 'MX', data: { preference: 10, exchange: 'mx.sender.test' } },
      { name: 'mx.sender.test', type: 'A', data: '192.0.2.25' },
      {
        name: 'sender.test',
        type: 'TXT',
        data: ['v=spf1 mx include:_spf.mailhost.test -all exp=why._spf.sender.test'],
      },
      { name: 'why._spf.sender.test', type: 'TXT', data: ["%{i} is not one of %{d}'s mail servers"] },
      // An include of a name without SPF: a permerror (§5.2).
      { name: 'broken.sender.test', type: 'TXT', data: ['v=spf1 include:gone.sender.test -all'] },
    ]),
    testZone('mailhost.test', [
      {
        name: '_spf.mailhost.test',
        type: 'TXT',
        data: ['v=spf1 ip4:198.51.100.0/24 ip6:2001:db8:25::/48 ~all'],
      },
    ]),
  ];
}

/**
 * mailtls.test for the mail servers tool: mx1 (preference 10) with a DANE-EE
 * record of its key, mx2 (20) with the record of the key it had before a
 * certificate change (DANE mismatch), mx3 (30) on a permitted address where
 * nothing listens (unreachable), mx4 (40) on a loopback address outbound safety
 * refuses (not contacted). DANE counts only on netdiag's own DNSSEC validation
 * (issue 32), which these fixtures do not stand behind: the records are
 * matched against the chains, without a DNSSEC verdict.
 */
export const MAIL_DOMAIN = 'mailtls.test';

interface MailServers {
  /** The mail domain, and the reverse zone of the servers' addresses (PTR, so FCrDNS has an answer). */
  zones: FakeZone[];
  /** The addresses to permit as targets: the two servers' and the unreachable one's. */
  addresses: string[];
  close(): Promise<void>;
}

/** Outside the 127.0.0.10–249 range the servers take: nothing listens on its port 25. */
const UNREACHABLE_MX_ADDRESS = '127.0.0.254';
/** Not permitted: outbound safety refuses it (loopback). */
const REFUSED_MX_ADDRESS = '127.0.0.253';

/** A fake mail server for `name` on the first free 127.0.0.x:25, or undefined without root. */
async function mailServer(
  name: string,
  taken: Set<string>,
): Promise<{ server: FakeSmtpServer; certPem: string } | undefined> {
  const cert = await (await getTestPki()).issue({ dnsNames: [name] });
  for (let i = 0; i < 40; i++) {
    const host = `127.0.0.${10 + ((process.pid * 7 + i) % 240)}`;
    if (taken.has(host)) continue;
    try {
      const server = await startFakeSmtpServer({ cert, host, port: 25, hostname: name });
      taken.add(host);
      return { server, certPem: cert.certPem };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EACCES') return undefined;
    }
  }
  return undefined;
}

/** DANE-EE(3) SPKI(1) SHA2-256(1): the record most DANE mail servers publish. */
function tlsa(host: string, certPem: string): FakeRecord {
  const spki = new X509Certificate(certPem).publicKey.export({ type: 'spki', format: 'der' });
  return {
    name: `_25._tcp.${host}`,
    type: 'TLSA',
    data: { usage: 3, selector: 1, matchingType: 1, certificate: createHash('sha256').update(spki).digest() },
  };
}

async function startMailServers(siteAddress: string | undefined): Promise<MailServers | undefined> {
  const taken = new Set(siteAddress ? [siteAddress] : []);
  const [name1, name2, name3, name4] = [1, 2, 3, 4].map((n) => `mx${n}.${MAIL_DOMAIN}`) as [
    string,
    string,
    string,
    string,
  ];
  const mx1 = await mailServer(name1, taken);
  const mx2 = mx1 && (await mailServer(name2, taken));
  if (!mx1 || !mx2) {
    await mx1?.server.close();
    return undefined;
  }
  // The certificate mx2 had before the change its TLSA record was not updated for.
  const before = await (await getTestPki()).issue({ dnsNames: [name2] });
  const ptr = (address: string, name: string): FakeRecord => ({
    name: `${address.split('.').reverse().join('.')}.in-addr.arpa`,
    type: 'PTR',
    data: name,
  });
  return {
    zones: [
      testZone('127.in-addr.arpa', [ptr(mx1.server.host, name1), ptr(mx2.server.host, name2)]),
      testZone(MAIL_DOMAIN, [
        // Listed out of order: the answer lists them by preference.
        { name: MAIL_DOMAIN, type: 'MX', data: { preference: 10, exchange: name1 } },
        { name: MAIL_DOMAIN, type: 'MX', data: { preference: 40, exchange: name4 } },
        { name: MAIL_DOMAIN, type: 'MX', data: { preference: 20, exchange: name2 } },
        { name: MAIL_DOMAIN, type: 'MX', data: { preference: 30, exchange: name3 } },
        { name: name1, type: 'A', data: mx1.server.host },
        { name: name2, type: 'A', data: mx2.server.host },
        { name: name3, type: 'A', data: UNREACHABLE_MX_ADDRESS },
        { name: name4, type: 'A', data: REFUSED_MX_ADDRESS },
        tlsa(name1, mx1.certPem),
        tlsa(name2, before.certPem),
      ]),
    ],
    addresses: [mx1.server.host, mx2.server.host, UNREACHABLE_MX_ADDRESS],
    close: async () => void (await Promise.all([mx1.server.close(), mx2.server.close()])),
  };
}

/**
 * What the upstreams serve from real captures (../shared). Without it those answers are left
 * out: crt.sh knows no python.org, the RDAP aggregator and RIPEstat answer 404 and the relay
 * lists 404 (they never load); the tests that read them are skipped (`hasShared`).
 */
function captures(): Record<'rdap' | 'lists' | 'ripestat', Record<string, FakeReply>> & {
  crtsh: Record<string, unknown[]>;
  rdapType: Record<string, string>;
} {
  const rdapType = { 'content-type': 'application/rdap+json' };
  /** One answer per search, whichever spelling of `q` asks for it, as crt.sh does. */
  const crtsh: Record<string, unknown[]> = {
    'example.com': fixture('ct/crtsh-scenario-example.com.json') as unknown[],
  };
  if (!hasShared) return { crtsh, rdapType, rdap: {}, lists: {}, ripestat: {} };
  crtsh['python.org'] = sharedFixture('ct/crtsh-python.org-legacy-schema.first300.json') as unknown[];
  return {
    crtsh,
    rdapType,
    rdap: {
      '/domain/google.com': {
        headers: rdapType,
        json: sharedFixture('rdap/verisign-com-domain-google.com.json'),
      },
    },
    lists: {
      '/egress-ip-ranges.csv': { body: sharedFixtureText('relay/egress-ip-ranges.excerpt.csv') },
      '/torbulkexitlist': { body: sharedFixtureText('relay/tor-torbulkexitlist.txt') },
    },
    ripestat: { '/data/prefix-overview/data.json': { json: sharedFixture('ripestat/prefix-overview.json') } },
  };
}

export interface FixtureUpstreams {
  /** The configuration pointing the app at them (testConfig's fields). */
  config: Partial<Config>;
  /**
   * The same as variables of the configuration contract (docs/configuration.md), for a netdiag
   * process of its own (the `netdiag` command, the server): every upstream the fixtures do not
   * serve on loopback where nothing answers, as testConfig() has it, and the test CA trusted
   * through NODE_EXTRA_CA_CERTS. Without challenge protection (its fakes are in-process only).
   */
  env: Record<string, string>;
  dns: FakeDnsServer;
  /** The relay lists' upstream (Apple's egress ranges, the Tor exit list): who downloads them. */
  lists: FakeUpstream;
  siteverify: FakeSiteverify | undefined;
  inspectHost: string | undefined;
  mailDomain: string | undefined;
  scanHost: string | undefined;
  hierarchy: BindHierarchy | undefined;
  widgetLoads(): number;
  close(): Promise<void>;
}

/** Every fixture upstream, and the web site and mail servers when their ports can be bound. */
export async function startFixtureUpstreams(
  opts: Pick<FixtureAppOptions, 'challenge' | 'dnssec'> = {},
): Promise<FixtureUpstreams> {
  const real = captures();
  const hierarchy = opts.dnssec ? await startBindHierarchy() : undefined;
  const pki = await getTestPki();
  const listDir = mkdtempSync(join(tmpdir(), 'netdiag-e2e-lists-'));
  const site = await startWebSite();
  const mail = await startMailServers(site?.address);
  const scanServer = await startTlsScanServer();
  const [dns, crtsh, globalping, rdap, lists, ripestat] = await Promise.all([
    startFakeDnsServer({
      zones: [
        ...DEFAULT_ZONES,
        ...spfZones(),
        ...(site ? [inspectZone(site.address)] : []),
        ...(mail ? mail.zones : []),
        ...(scanServer
          ? [testZone('scan.test', [{ name: SCAN_HOST, type: 'A', data: scanServer.address }], { ttl: 300 })]
          : []),
      ],
    }),
    startCrtsh({ answers: real.crtsh }),
    // First poll: still running; then finished, as a real measurement goes.
    startGlobalping({
      createReply: { status: 202, json: { id: 'e2eMeasurement01', probesCount: 10 } },
      pollReplies: [
        { json: fixture('globalping/scenarios/ten-in-progress.json') },
        { json: fixture('globalping/scenarios/ten-finished-inconsistent.json') },
      ],
    }),
    startFakeUpstream({
      routes: real.rdap,
      handler: () => ({ status: 404, headers: real.rdapType, json: {} }),
    }),
    startFakeUpstream({ routes: real.lists }),
    startFakeUpstream({ routes: real.ripestat }),
  ]);
  const widget = opts.challenge ? await startWidgetServer() : undefined;
  const siteverify = opts.challenge ? await startFakeSiteverify() : undefined;
  const upstreams: FakeUpstream[] = [
    crtsh,
    globalping,
    rdap,
    lists,
    ripestat,
    ...(siteverify ? [siteverify] : []),
  ];
  // The web site's and mail servers' loopback addresses, and only they, are permitted targets
  // (docs/architecture.md §3 escape hatch).
  // The hierarchy's name servers too, when it runs (its whole 127.53.B.0/24 block).
  const allowed = [
    ...[site?.address, ...(mail?.addresses ?? []), scanServer?.address]
      .filter((a): a is string => a !== undefined)
      .map((a) => `${a}/32`),
    ...(hierarchy ? [hierarchy.cidr] : []),
  ];
  const config = {
    dnsResolvers: [dns.doh],
    crtshUrl: crtsh.url,
    globalpingUrl: globalping.url,
    rdapAggregatorUrl: rdap.url,
    rdapBootstrapUrl: `${rdap.url}/bootstrap`,
    relayRangesUrl: `${lists.url}/egress-ip-ranges.csv`,
    torExitListUrl: `${lists.url}/torbulkexitlist`,
    listCacheDir: listDir,
    ripestatUrl: ripestat.url,
    unsafeAllowTargetCidrs: allowed,
    ...(hierarchy
      ? { dnsRootHints: hierarchy.rootHints, dnssecTrustAnchors: hierarchy.trustAnchorFile }
      : {}),
    ...(siteverify && widget ? activeConfig(siteverify, { turnstileScriptUrl: widget.url }) : {}),
    providerTimeoutMs: 3000,
    // Roomy limits: a browser test makes many calls; the 429 test sets its own.
    rateLimitGeneral: { points: 1000, seconds: 60 },
    rateLimitExpensive: { points: 100, seconds: 60 },
    // A busy CI machine must not turn a page load into a 503: shedding has its own tests.
    loadShedEventLoopDelayMs: 0,
  } satisfies Partial<Config>;
  const env: Record<string, string> = {
    ...TEST_UPSTREAM_ENV,
    DNS_RESOLVERS: dns.doh,
    CRTSH_URL: config.crtshUrl,
    GLOBALPING_URL: config.globalpingUrl,
    RDAP_AGGREGATOR_URL: config.rdapAggregatorUrl,
    RDAP_BOOTSTRAP_URL: config.rdapBootstrapUrl,
    RELAY_RANGES_URL: config.relayRangesUrl,
    TOR_EXIT_LIST_URL: config.torExitListUrl,
    LIST_CACHE_DIR: listDir,
    RIPESTAT_URL: config.ripestatUrl,
    ...(allowed.length ? { UNSAFE_ALLOW_TARGET_CIDRS: allowed.join(',') } : {}),
    ...(hierarchy
      ? { DNS_ROOT_HINTS: hierarchy.rootHints.join(','), DNSSEC_TRUST_ANCHORS: hierarchy.trustAnchorFile }
      : {}),
    PROVIDER_TIMEOUT_MS: String(config.providerTimeoutMs),
    RATE_LIMIT_GENERAL: '1000/60',
    RATE_LIMIT_EXPENSIVE: '100/60',
    LOAD_SHED_EVENT_LOOP_DELAY_MS: '0',
    NODE_EXTRA_CA_CERTS: pki.caFile,
  };
  return {
    config,
    env,
    dns,
    lists,
    siteverify,
    inspectHost: site ? INSPECT_HOST : undefined,
    mailDomain: mail ? MAIL_DOMAIN : undefined,
    scanHost: scanServer ? SCAN_HOST : undefined,
    hierarchy,
    widgetLoads: () => widget?.loads() ?? 0,
    close: async () => {
      await Promise.all([
        dns.close(),
        site?.close(),
        mail?.close(),
        scanServer?.close(),
        hierarchy?.close(),
        ...upstreams.map((u) => u.close()),
      ]);
      if (widget) await new Promise<void>((resolve) => widget.server.close(() => resolve()));
      rmSync(listDir, { recursive: true, force: true });
    },
  };
}

export async function startFixtureApp(opts: FixtureAppOptions = {}): Promise<FixtureApp> {
  await build({ ifStale: true });
  const fx = await startFixtureUpstreams({
    challenge: opts.challenge === true,
    dnssec: opts.dnssec === true,
  });
  const config = testConfig({ ...fx.config, ...opts.config });
  const app = await buildApp(config, { ca: (await getTestPki()).caPem, logger: pino({ level: 'silent' }) });
  const url = await app.listen({ host: '127.0.0.1', port: 0 });
  return {
    url,
    app,
    dns: fx.dns,
    env: fx.env,
    siteverify: fx.siteverify,
    inspectHost: fx.inspectHost,
    mailDomain: fx.mailDomain,
    scanHost: fx.scanHost,
    hierarchy: fx.hierarchy,
    widgetLoads: fx.widgetLoads,
    close: async () => {
      await app.close();
      await fx.close();
    },
  };
}

if (process.argv[1]?.endsWith('fixture-app.ts')) {
  const fx = await startFixtureApp({
    challenge: process.argv.includes('--challenge'),
    dnssec: process.argv.includes('--dnssec'),
  });
  console.log(`netdiag on fixtures: ${fx.url}/?q=example.test&tool=dns`);
  if (fx.hierarchy) console.log(`DNSSEC: ${fx.url}/?q=www.expired.test&tool=dnssec`);
  process.on('SIGINT', () => fx.close().then(() => process.exit(0)));
}
