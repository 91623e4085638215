/**
 * Fault injection for every provider adapter (issue 12), through the real app
 * and its real adapters pointed at loopback fixture servers:
 *
 *   timeout · connection reset · TLS failure (a certificate from a CA nobody
 *   trusts) · HTTP 5xx · HTTP 429 with Retry-After · garbage (HTML where JSON
 *   belongs, undecodable DNS) · a valid-looking but wrong-shaped answer ·
 *   a 50 MB body · a server that trickles one byte per second
 *
 * Each fault must end within its deadline as a recorded failed attempt
 * (`providers_tried`, and /api/providers' last_error), the fallback answering
 * where the chain has one, else the endpoint's failure status (502; 503 for
 * the challenge verify step; a part `status: "error"` for inspect). Nothing
 * is cached: with the fault cleared, the same request reaches the upstream
 * again and is a MISS. No unhandled rejection fires, and once every app and
 * fake has closed no socket is left open.
 *
 * One trial per (adapter, fault):
 *   1. chains with a fallback: primary faulted, fallback healthy → the fallback answers;
 *   2. fallback failing too → the failure status, within the deadline;
 *   3. the primary's fault cleared → a fresh answer from the primary (MISS).
 *      A TLS fault is the server's certificate and cannot be cleared: step 3
 *      then shows a second failed attempt instead of a cached answer.
 *
 * Faults are chosen per request by the name asked about (`timeout-b.com`,
 * one IP per fault for RIPEstat, one token per fault for Turnstile), so one
 * app serves every trial of an adapter; only the TLS trial (another server)
 * and the transports whose fake switches faults server-wide (DNS over
 * UDP/TCP/TLS, the IANA bootstrap file) get an app per fault. Every app
 * answers one healthy request before any trial starts: fast-json-stringify
 * compiles a route's response serializer on its first use, a CPU-bound second
 * or so for the large union schemas (RDAP), which would otherwise stall the
 * event loop under the concurrent trials and turn their timers late.
 *
 * Faults a transport cannot have are left out and say why (`notApplicable`):
 * UDP has no TLS, no byte stream to trickle, one datagram per answer, and its
 * "reset" is ICMP port unreachable; DNS over TCP/TLS frames cap a message at
 * 64 KiB, so "huge" is covered by DoH.
 *
 * PROVIDER_TIMEOUT_MS is short here (TIMEOUT_MS). crt.sh is the exception the
 * service makes on purpose: each search gets crt.sh's own deadline (30 s plus
 * 5 s in production, CRTSH_REQUEST_TIMEOUT_MS) whatever PROVIDER_TIMEOUT_MS
 * says; here that deadline is shortened to CRTSH_TIMEOUT_MS through the app's
 * tuning deps, and the timeout and trickle trials show it holds. Every trial
 * runs concurrently.
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as packet from 'dns-packet';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { type Config, testConfig } from '../../src/config/index.js';
import type { ProviderAttempt } from '../../src/errors.js';
import { type FakeDnsServer, startFakeDnsServer } from '../fakes/dns-server.js';
import { DEFAULT_ZONES, type FakeZone, testZone } from '../fakes/dns-zones.js';
import { startHttpTarget, type TargetReply, type TargetRequest } from '../fakes/http-targets.js';
import {
  type FakeReply,
  type FakeRequest,
  type FakeUpstream,
  type FakeUpstreamOptions,
  type Fault,
  HUGE_BODY_BYTES,
  startFakeUpstream,
} from '../fakes/https-upstream.js';
import { getTestPki, untrustedLeaf } from '../fakes/test-ca.js';
import { hasShared, sharedFixture, sharedFixtureText } from '../shared-data.js';

/**
 * Not shorter: every rig runs at once in this one process, so a "huge" trial reads its 2 MiB
 * over TLS while some twenty other streams do the same; beside a CPU-heavy process that took
 * over 2 s, and the body cap must be what ends it (bad_response), not the deadline. The timeout
 * and trickle trials wait this long, but all at once, so the suite pays it about twice.
 */
const TIMEOUT_MS = 5000;
/**
 * crt.sh's per-search deadline here: the service gives crt.sh its own (35 s in production,
 * CRTSH_REQUEST_TIMEOUT_MS), whatever PROVIDER_TIMEOUT_MS says; the same mechanism, shortened.
 */
const CRTSH_TIMEOUT_MS = 4000;
/**
 * What a deadline allows beyond the waiting the service does on purpose: scheduling on a
 * two-core CI machine that is busy with other work (this suite runs on its own, after the
 * rest, but the machine may not be idle). Generous on purpose: the failures these trials
 * catch are a fault that never ends, or one that waits out a much longer timeout.
 */
const SLACK_MS = 6000;

const FAULTS = [
  'timeout',
  'reset',
  'tls',
  '5xx',
  '429',
  'garbage',
  'wrong-shape',
  'huge',
  'trickle',
] as const;
type FaultName = (typeof FAULTS)[number];
type Variant = 'a' | 'b';

/** The failure kind (ProviderError.kind, the prefix of `providers_tried[].error`) each fault must produce. */
const KIND: Record<FaultName, RegExp> = {
  timeout: /^timeout: /,
  trickle: /^timeout: /,
  reset: /^network: /,
  tls: /^tls: /,
  '5xx': /^http_status: /,
  '429': /^rate_limited: /,
  garbage: /^bad_response: /,
  'wrong-shape': /^bad_response: /,
  huge: /^bad_response: /,
};

/** The https-upstream fault each fault name is (TLS is the server's certificate instead). */
const HTTP_FAULT: Record<FaultName, Fault> = {
  timeout: 'timeout',
  reset: 'reset',
  tls: 'none',
  '5xx': '503',
  '429': '429',
  garbage: 'garbage',
  'wrong-shape': 'wrong-shape',
  huge: 'huge',
  trickle: 'trickle',
};

// --- process-wide observations and shared fixtures ------------------------------------------------

const rejections: unknown[] = [];
const onRejection = (reason: unknown) => rejections.push(reason);
const SOCKET_TYPES = new Set(['TCPSocketWrap', 'TCPServerWrap', 'TLSWrap', 'UDPWrap', 'Http2Session']);
const openSockets = () => process.getActiveResourcesInfo().filter((t) => SOCKET_TYPES.has(t)).length;

let ca: string;
let baselineSockets: number;
let listDir: string;
/** Every app and fake of the suite, closed in afterAll. */
const closers: (() => Promise<unknown>)[] = [];
/** Healthy DNS for the rigs that are not about DNS (Cymru lookups, names of targets). */
let sharedDns: FakeDnsServer;

async function app(config: Partial<Config>): Promise<FastifyInstance> {
  const instance = await buildApp(
    testConfig({
      loadShedEventLoopDelayMs: 0,
      providerTimeoutMs: TIMEOUT_MS,
      rateLimitGeneral: { points: 1_000_000, seconds: 60 },
      rateLimitExpensive: { points: 1_000_000, seconds: 60 },
      // Every trial of an RDAP rig asks the aggregator: its budget must not decide the outcome.
      rdapAggregatorRateLimit: { points: 1_000_000, seconds: 10 },
      dnsResolvers: [sharedDns.udp],
      listCacheDir: listDir,
      unsafeAllowTargetCidrs: ['127.0.0.0/8'],
      ...config,
    }),
    { ca, dnsOptions: { udpRetryAfterMs: 5000 }, crtsh: { requestTimeoutMs: CRTSH_TIMEOUT_MS } },
  );
  closers.push(() => instance.close());
  await instance.ready();
  return instance;
}

async function upstream(opts: FakeUpstreamOptions & { untrusted?: boolean }): Promise<FakeUpstream> {
  const { untrusted, ...rest } = opts;
  const fake = await startFakeUpstream({ ...rest, ...(untrusted ? { cert: await untrustedLeaf() } : {}) });
  closers.push(() => fake.close());
  return fake;
}

/** A zone the wire rigs' primary serves and their fallback does not: names below it are NXDOMAIN there, REFUSED here. */
const EXAMPLE_ORG = testZone('example.org', [{ name: 'example.org', type: 'A', data: '192.0.2.70' }], {
  ttl: 300,
});

async function dnsServer(zones?: FakeZone[]): Promise<FakeDnsServer> {
  const server = await startFakeDnsServer(zones ? { zones } : {});
  closers.push(() => server.close());
  return server;
}

// --- naming a fault in the request ---------------------------------------------------------------

const LABEL =
  /(?:^|[^a-z0-9-])(timeout|reset|tls|5xx|429|garbage|wrong-shape|huge|trickle)-([ab])(?=$|[^a-z0-9-])/;

/** `timeout-b` style label of a trial. */
const label = (fault: FaultName, variant: Variant) => `${fault}-${variant}`;

/** The fault and variant a request names, if any (the warm-up request names none). */
function parseLabel(text: string | undefined): { fault: FaultName; variant: Variant } | undefined {
  const m = LABEL.exec(text ?? '');
  return m ? { fault: m[1] as FaultName, variant: m[2] as Variant } : undefined;
}

/** Faults whose trial has cleared them (step 3), per rig. */
class Switchboard {
  readonly cleared = new Set<FaultName>();
  /** The fault a request naming `text` suffers now; undefined: healthy. */
  faultOf(text: string | undefined): FaultName | undefined {
    const named = parseLabel(text);
    return named && !this.cleared.has(named.fault) ? named.fault : undefined;
  }
  /** Whether `text` names a trial's variant 'b' (for which the fallback fails too). */
  isB(text: string | undefined): boolean {
    return parseLabel(text)?.variant === 'b';
  }
}

/** One IP per (fault, variant) for the RIPEstat rigs, all in 193.0.6.0/24 (RIPE NCC, public). */
const ipOf = (fault: FaultName, variant: Variant) =>
  `193.0.6.${100 + FAULTS.indexOf(fault) * 2 + (variant === 'b' ? 1 : 0)}`;
const WARM_IP = '193.0.6.50';
function ipLabel(ip: string | null | undefined): string | undefined {
  const n = Number(ip?.split('.')[3]) - 100;
  if (!ip?.startsWith('193.0.6.') || !(n >= 0 && n < FAULTS.length * 2)) return undefined;
  return label(FAULTS[Math.floor(n / 2)] as FaultName, n % 2 === 1 ? 'b' : 'a');
}

// --- rigs ---------------------------------------------------------------------------------------

interface Trial {
  request(variant: Variant): Promise<LightMyRequestResponse>;
  /** Clears the primary's fault; absent when it cannot be cleared (a TLS fault is the server's certificate). */
  clear?: () => void;
  /** Requests (or DNS queries) of this trial the primary upstream has received. */
  primaryHits(): number;
  app: FastifyInstance;
  /** Provider ids known only once the app is built (DNS resolvers are named by address and port). */
  primaryId?: string;
  fallbackId?: string;
}

interface Outcome {
  status: number;
  tried: ProviderAttempt[];
  sourceId: string | undefined;
  cache: string | undefined;
}

interface Rig {
  name: string;
  /** Provider id of the faulted adapter. */
  id: string;
  /** Provider id of the fallback that answers in step 1. */
  fallbackId?: string;
  faults: readonly FaultName[];
  /** Why the faults left out cannot happen on this transport. */
  notApplicable?: string;
  /** Upper bound on the faulted request. */
  deadlineMs(fault: FaultName): number;
  /** Status of a request whose every provider failed. Default 502. */
  failStatus?: number;
  kind?: Partial<Record<FaultName, RegExp>>;
  /** Starts fakes and apps for every fault and warms the apps; runs before any trial. */
  prepare(): Promise<Map<FaultName, Trial>>;
  /** Reads the attempts out of the response; default the top-level body. */
  outcome?(res: LightMyRequestResponse): Outcome;
  /** Slow trials started as soon as the rig is prepared, while the others are (they only wait). */
  early?: readonly FaultName[];
  /** Serves a real capture from ../shared: neither prepared nor run without it. */
  readsShared?: boolean;
}

function topLevel(res: LightMyRequestResponse): Outcome {
  const body = res.json() as { providers_tried?: ProviderAttempt[]; source_id?: string };
  return {
    status: res.statusCode,
    tried: body.providers_tried ?? [],
    sourceId: body.source_id,
    cache: res.headers['x-service-cache'] as string | undefined,
  };
}

const standard = (fault: FaultName) =>
  fault === 'timeout' || fault === 'trickle' ? TIMEOUT_MS + SLACK_MS : SLACK_MS;

/** Expects the warm-up answer to be a success: the serializer is then compiled. */
async function warm(res: Promise<LightMyRequestResponse>, what: string): Promise<void> {
  const r = await res;
  if (r.statusCode !== 200)
    throw new Error(`warm-up of ${what} answered ${r.statusCode}: ${r.body.slice(0, 300)}`);
}

/**
 * Trials for a rig whose primary is an https-upstream choosing its fault per
 * request: one shared app, plus one app for the TLS trial whose primary is
 * the same handler behind an untrusted certificate.
 */
async function perRequestTrials(opts: {
  faults: readonly FaultName[];
  board: Switchboard;
  /** The primary's handler for healthy requests. */
  handler: (req: FakeRequest) => FakeReply | Promise<FakeReply>;
  /** A fault the generic https-upstream fault does not express for this protocol (DoH's wrong-shape). */
  faultReply?: (fault: FaultName, req: FakeRequest) => FakeReply | undefined;
  upstreamOptions?: FakeUpstreamOptions;
  /** Which trial a request to the primary belongs to. */
  keyOf(req: FakeRequest): string | undefined;
  /** The app, given the primary's URL. */
  build(primaryUrl: string): Promise<FastifyInstance>;
  request(a: FastifyInstance, fault: FaultName, variant: Variant): Promise<LightMyRequestResponse>;
  /** A healthy request (through the fallback for the TLS app, when the rig has one). */
  warmUp?: (a: FastifyInstance, tls: boolean) => Promise<void>;
  /** Faults whose trial needs an app of its own (one whose effect outlasts its request, such as a honoured Retry-After). */
  ownApp?: readonly FaultName[];
}): Promise<Map<FaultName, Trial>> {
  const { board } = opts;
  const handler = async (req: FakeRequest): Promise<FakeReply> => {
    const fault = board.faultOf(opts.keyOf(req));
    if (fault !== undefined && fault !== 'tls')
      return opts.faultReply?.(fault, req) ?? { fault: HTTP_FAULT[fault] };
    return opts.handler(req);
  };
  const primary = await upstream({ ...opts.upstreamOptions, handler });
  const shared = await opts.build(primary.url);
  await opts.warmUp?.(shared, false);
  const trials = new Map<FaultName, Trial>();
  for (const fault of opts.faults) {
    let target = shared;
    let server = primary;
    if (fault === 'tls') {
      server = await upstream({ ...opts.upstreamOptions, handler, untrusted: true });
      target = await opts.build(server.url);
      await opts.warmUp?.(target, true);
    } else if (opts.ownApp?.includes(fault)) {
      target = await opts.build(primary.url);
      await opts.warmUp?.(target, false);
    }
    const hits = () => server.requests.filter((r) => parseLabel(opts.keyOf(r))?.fault === fault).length;
    trials.set(fault, {
      app: target,
      request: (variant) => opts.request(target, fault, variant),
      clear: fault === 'tls' ? undefined : () => board.cleared.add(fault),
      primaryHits: hits,
    });
  }
  return trials;
}

// DNS over HTTPS: an https-upstream answering RFC 8484 POSTs, so every HTTP-level fault applies.
// Variant 'a' asks a name under example.com (the fallback answers NXDOMAIN: an answer), variant
// 'b' a name under example.org, outside the fallback's zones (it answers REFUSED: a failure).
function dohAnswer(req: FakeRequest, wrongQuestion: boolean): FakeReply {
  const query = packet.decode(req.body) as unknown as {
    id: number;
    questions: { name: string; type: string }[];
  };
  const q = query.questions[0] ?? { name: 'x', type: 'A' };
  const name = wrongQuestion ? 'wrong-question.invalid' : q.name;
  const wire = packet.encode({
    type: 'response',
    id: query.id,
    flags: packet.RECURSION_DESIRED | packet.RECURSION_AVAILABLE,
    questions: [{ name, type: q.type, class: 'IN' }],
    answers: [{ name, type: 'A', ttl: 60, data: '192.0.2.1' }],
  } as unknown as packet.Packet);
  return { headers: { 'content-type': 'application/dns-message' }, body: wire };
}

function qname(req: FakeRequest): string | undefined {
  try {
    return (packet.decode(req.body) as unknown as { questions: { name: string }[] }).questions[0]?.name;
  } catch {
    return undefined;
  }
}

const dnsName = (fault: FaultName, variant: Variant) =>
  `${label(fault, variant)}.${variant === 'a' ? 'example.com' : 'example.org'}`;
const dnsIds = (a: FastifyInstance) => ({
  primaryId: a.ctx.dns.providers[0]?.info.id,
  fallbackId: a.ctx.dns.providers[1]?.info.id,
});

function dohRig(http2: boolean): Rig {
  return {
    name: `DNS over HTTPS (${http2 ? 'HTTP/2' : 'HTTP/1.1'})`,
    id: 'dns-primary',
    fallbackId: 'dns-fallback',
    faults: FAULTS,
    deadlineMs: standard,
    // The generic garbage is HTML labelled JSON: refused for its content-type before any parsing.
    kind: { garbage: /^bad_response: .*content-type/ },
    async prepare() {
      const board = new Switchboard();
      const fallback = await dnsServer();
      const trials = await perRequestTrials({
        faults: FAULTS,
        board,
        upstreamOptions: { http2 },
        keyOf: qname,
        handler: (req) => dohAnswer(req, false),
        // 'wrong-shape' for DoH is a DNS answer to another question, not the generic JSON body.
        faultReply: (fault, req) => (fault === 'wrong-shape' ? dohAnswer(req, true) : undefined),
        build: (url) => app({ dnsResolvers: [`${url}/dns-query`, fallback.udp] }),
        request: (a, fault, variant) => a.inject(`/api/dns?type=A&target=${dnsName(fault, variant)}`),
      });
      for (const t of trials.values()) Object.assign(t, dnsIds(t.app));
      return trials;
    },
  };
}

/** DNS over UDP, TCP and TLS against the fake DNS server's server-wide fault switches: an app per fault. */
function wireRig(transport: 'udp' | 'tcp' | 'dot'): Rig {
  const faults: FaultName[] =
    transport === 'udp'
      ? ['timeout', 'reset', '5xx', '429', 'garbage', 'wrong-shape']
      : transport === 'tcp'
        ? ['timeout', 'reset', '5xx', '429', 'garbage', 'wrong-shape', 'trickle']
        : ['timeout', 'reset', 'tls', '5xx', '429', 'garbage', 'wrong-shape', 'trickle'];
  return {
    name: `DNS over ${transport === 'dot' ? 'TLS' : transport.toUpperCase()}`,
    id: 'dns-primary',
    fallbackId: 'dns-fallback',
    faults,
    notApplicable:
      transport === 'udp'
        ? 'UDP: no TLS, no byte stream to trickle, one datagram per answer; "reset" is ICMP port unreachable'
        : 'a DNS message over TCP/TLS is at most 64 KiB by its framing: "huge" is covered by DoH',
    // Over UDP, garbage and a wrong-shaped answer end as timeouts (below), so they get a timeout's deadline.
    deadlineMs: (fault) =>
      transport === 'udp' && (fault === 'garbage' || fault === 'wrong-shape')
        ? standard('timeout')
        : standard(fault),
    kind: {
      // SERVFAIL is a resolver's 5xx, REFUSED its 429: both are operational failures (RFC 8914 §4).
      '5xx': /SERVFAIL/,
      '429': /REFUSED/,
      // Over UDP a datagram that does not answer our question is ignored, as a spoofed one would be
      // (RFC 5452 §9.1): the client keeps waiting, and the attempt ends as a timeout.
      ...(transport === 'udp' ? { garbage: /^timeout: /, 'wrong-shape': /^timeout: / } : {}),
    },
    async prepare() {
      const trials = new Map<FaultName, Trial>();
      await Promise.all(
        faults.map(async (fault) => {
          const server = await dnsServer([...DEFAULT_ZONES, EXAMPLE_ORG]);
          const fallback = await dnsServer();
          let url = server[transport];
          if (fault === 'tls') {
            // A TLS server whose certificate no client trusts: the handshake fails before any DNS.
            url = `tls://127.0.0.1:${(await upstream({ untrusted: true })).port}`;
          }
          // Nothing listens there: the kernel answers ICMP port unreachable, the socket reports ECONNREFUSED.
          if (fault === 'reset' && transport === 'udp') url = 'udp://127.0.0.1:9';
          const behaviour: Record<FaultName, Parameters<FakeDnsServer['set']>[0]> = {
            timeout: { drop: true },
            reset: { hangUp: true },
            tls: {},
            '5xx': { rcode: 'SERVFAIL' },
            '429': { rcode: 'REFUSED' },
            garbage: { garbage: true },
            'wrong-shape': { wrongQuestion: true },
            huge: {},
            trickle: { trickle: true },
          };
          server.set(behaviour[fault]);
          const a = await app({ dnsResolvers: [url, fallback.udp] });
          const fixed = fault === 'tls' || (fault === 'reset' && transport === 'udp');
          trials.set(fault, {
            app: a,
            ...dnsIds(a),
            request: (variant) => a.inject(`/api/dns?type=A&target=${dnsName(fault, variant)}`),
            clear: fixed ? undefined : () => server.reset(),
            primaryHits: () => server.counts[transport],
          });
        }),
      );
      return trials;
    },
  };
}

const RDAP_DOMAIN = (name: string) => ({
  objectClassName: 'domain',
  handle: `${name.toUpperCase()}-TEST`,
  ldhName: name,
  status: ['active'],
  events: [{ eventAction: 'registration', eventDate: '2001-02-03T04:05:06Z' }],
});
const nameInPath = (path: string) => path.split('/').pop() ?? 'x';
const rdapJson = (name: string): FakeReply => ({
  headers: { 'content-type': 'application/rdap+json' },
  json: RDAP_DOMAIN(name),
});
const bootstrapFile = (registry: string) => ({
  version: '1.0',
  publication: '2025-01-01T00:00:00Z',
  services: [[['com'], [`${registry}/`]]],
});
const rdapRequest = (a: FastifyInstance, fault: FaultName, variant: Variant) =>
  a.inject(`/api/rdap?type=domain&target=${label(fault, variant)}.com`);

/**
 * An RDAP registry on 127.0.0.x:443 reached through outbound safety (net/), as
 * every registry is; `reply` decides per request.
 */
async function registryTarget(reply: (req: TargetRequest) => TargetReply, untrusted = false) {
  const target = await startHttpTarget({
    protocol: 'https',
    ...(untrusted ? { cert: await untrustedLeaf() } : {}),
    fallback: reply,
  });
  closers.push(() => target.close());
  return target;
}

const rdapTarget = (req: TargetRequest): TargetReply => ({
  headers: { 'content-type': 'application/rdap+json' },
  body: JSON.stringify(RDAP_DOMAIN(nameInPath(req.path))),
});

const rdapOrgRig: Rig = {
  name: 'rdap.org (aggregator)',
  id: 'rdap-org',
  fallbackId: 'iana-rdap-bootstrap',
  faults: FAULTS,
  deadlineMs: standard,
  kind: { 'wrong-shape': /^bad_response: .*objectClassName/ },
  async prepare() {
    const board = new Switchboard();
    // The fallback path: the IANA bootstrap names a registry that fails variant 'b'.
    const registry = await registryTarget((req) =>
      board.isB(req.path) ? { status: 503, body: 'maintenance' } : rdapTarget(req),
    );
    const bootstrap = await upstream({ routes: { '/dns.json': { json: bootstrapFile(registry.origin) } } });
    return perRequestTrials({
      faults: FAULTS,
      board,
      keyOf: (req) => req.path,
      handler: (req) => rdapJson(nameInPath(req.path)),
      build: (url) => app({ rdapAggregatorUrl: url, rdapBootstrapUrl: bootstrap.url }),
      request: rdapRequest,
      warmUp: (a) => warm(a.inject('/api/rdap?type=domain&target=warm.com'), 'rdap'),
      // The aggregator's Retry-After is honoured (no request to it until it passes): alone, it
      // would send every other trial of a shared app to the bootstrap for a second.
      ownApp: ['429'],
    });
  },
};

/** The bootstrap file is one fetch per app (then kept 24 h): an app per fault. */
const bootstrapRig: Rig = {
  name: 'IANA RDAP bootstrap',
  id: 'iana-rdap-bootstrap',
  faults: FAULTS,
  deadlineMs: standard,
  async prepare() {
    const registry = await registryTarget(rdapTarget);
    // The aggregator answers only the warm-up; every trial goes the bootstrap way.
    const aggregator = await upstream({
      handler: (req) => (req.path.endsWith('/warm.com') ? rdapJson('warm.com') : { fault: '503' }),
    });
    const trials = new Map<FaultName, Trial>();
    // One after another: each warm-up compiles the RDAP serializer, CPU-bound.
    for (const fault of FAULTS) {
      {
        const bootstrap = await upstream({
          untrusted: fault === 'tls',
          routes: { '/dns.json': { json: bootstrapFile(registry.origin) } },
        });
        bootstrap.fault = HTTP_FAULT[fault];
        const a = await app({ rdapAggregatorUrl: aggregator.url, rdapBootstrapUrl: bootstrap.url });
        await warm(a.inject('/api/rdap?type=domain&target=warm.com'), 'rdap');
        trials.set(fault, {
          app: a,
          request: (variant) => rdapRequest(a, fault, variant),
          clear: fault === 'tls' ? undefined : () => (bootstrap.fault = 'none'),
          primaryHits: () => bootstrap.count(),
        });
      }
    }
    return trials;
  },
};

/** The registry the aggregator redirects to (and the bootstrap names), reached through net/ outbound safety. */
const registryRig: Rig = {
  name: 'RDAP registry (through outbound safety)',
  id: 'rdap-org',
  faults: FAULTS,
  // Both RDAP sources reach the same registry, one after the other.
  deadlineMs: (fault) => 2 * standard(fault),
  kind: { 'wrong-shape': /^bad_response: .*objectClassName/ },
  async prepare() {
    const board = new Switchboard();
    const reply = (req: TargetRequest): TargetReply => {
      const type = { 'content-type': 'application/rdap+json' };
      switch (board.faultOf(req.path)) {
        case 'timeout':
          return { hang: true };
        case 'reset':
          return { reset: true };
        case '5xx':
          return { status: 503, body: 'maintenance' };
        case '429':
          return { status: 429, headers: { 'retry-after': '1' }, body: '' };
        case 'garbage':
          return { headers: type, body: '<html><h1>502 Bad Gateway</h1></html>' };
        case 'wrong-shape':
          return { headers: type, body: JSON.stringify({ status: 'ok', items: [] }) };
        case 'huge':
          return { headers: type, streamBytes: HUGE_BODY_BYTES };
        case 'trickle':
          return { headers: type, trickle: true };
        default:
          return rdapTarget(req);
      }
    };
    const build = async (untrusted: boolean) => {
      const target = await registryTarget(reply, untrusted);
      const aggregator = await upstream({
        handler: (req) => ({ status: 302, headers: { location: `${target.origin}${req.path}` }, body: '' }),
      });
      const bootstrap = await upstream({ routes: { '/dns.json': { json: bootstrapFile(target.origin) } } });
      const a = await app({ rdapAggregatorUrl: aggregator.url, rdapBootstrapUrl: bootstrap.url });
      if (!untrusted) await warm(a.inject('/api/rdap?type=domain&target=warm.com'), 'rdap');
      return { target, a };
    };
    const shared = await build(false);
    const tls = await build(true);
    // The fetcher honours a registry's Retry-After per host (retry-after.ts): the 429 trial gets its
    // own registry, or it would stop every other trial's requests to the shared one for a second.
    const limited = await build(false);
    const trials = new Map<FaultName, Trial>();
    for (const fault of FAULTS) {
      const { target, a } = fault === 'tls' ? tls : fault === '429' ? limited : shared;
      trials.set(fault, {
        app: a,
        request: (variant) => rdapRequest(a, fault, variant),
        clear: fault === 'tls' ? undefined : () => board.cleared.add(fault),
        primaryHits: () => target.requests.filter((r) => parseLabel(r.path)?.fault === fault).length,
      });
    }
    return trials;
  },
};

const certificatesRequest = (a: FastifyInstance, fault: FaultName, variant: Variant) =>
  a.inject(`/api/certificates?domain=${label(fault, variant)}.com`);
const CS_KEY = 'cs_fault_injection_key';
const crtshQuery = (req: FakeRequest) => req.query.get('q')?.replace(/^%\./, '');

const crtshRig: Rig = {
  name: 'crt.sh',
  id: 'crtsh',
  fallbackId: 'certspotter',
  faults: FAULTS,
  // crt.sh is bounded by its own search deadline, not PROVIDER_TIMEOUT_MS (see the file comment);
  // a 5xx is retried once after up to 750 ms.
  deadlineMs: (fault) =>
    fault === 'timeout' || fault === 'trickle' ? CRTSH_TIMEOUT_MS + SLACK_MS : SLACK_MS + 750,
  early: ['timeout', 'trickle'],
  async prepare() {
    const board = new Switchboard();
    const certspotter = await upstream({
      routes: {
        '/v1/issuances': (req) =>
          board.isB(req.query.get('domain') ?? '') ? { fault: '503' } : { json: [] },
      },
    });
    return perRequestTrials({
      faults: FAULTS,
      board,
      upstreamOptions: { prefix: '/crtsh' },
      keyOf: crtshQuery,
      handler: () => ({ json: [] }),
      build: (url) => app({ crtshUrl: url, certspotterUrl: certspotter.url, certspotterApiKey: CS_KEY }),
      request: certificatesRequest,
      warmUp: (a) => warm(a.inject('/api/certificates?domain=warm.com'), 'certificates'),
    });
  },
};

const certspotterRig: Rig = {
  name: 'Cert Spotter',
  id: 'certspotter',
  faults: FAULTS,
  // crt.sh fails first: a 503, retried once after up to 750 ms.
  deadlineMs: (fault) => standard(fault) + 750,
  async prepare() {
    const board = new Switchboard();
    const crtsh = await upstream({
      prefix: '/crtsh',
      handler: (req) => (crtshQuery(req) === 'warm.com' ? { json: [] } : { fault: '503' }),
    });
    return perRequestTrials({
      faults: FAULTS,
      board,
      keyOf: (req) => req.query.get('domain') ?? undefined,
      handler: () => ({ json: [] }),
      build: (url) => app({ crtshUrl: crtsh.url, certspotterUrl: url, certspotterApiKey: CS_KEY }),
      request: certificatesRequest,
      warmUp: (a) => warm(a.inject('/api/certificates?domain=warm.com'), 'certificates'),
    });
  },
};

const globalpingRig: Rig = {
  name: 'Globalping',
  id: 'globalping',
  faults: FAULTS,
  deadlineMs: standard,
  readsShared: true,
  kind: { 'wrong-shape': /^bad_response: .*without an id/ },
  async prepare() {
    const measurement = sharedFixture('globalping/get-measurement-dns.json');
    const keyOf = (req: FakeRequest) =>
      req.method === 'POST'
        ? (JSON.parse(req.body.toString('utf8')) as { target?: string }).target
        : req.path;
    return perRequestTrials({
      faults: FAULTS,
      board: new Switchboard(),
      keyOf,
      handler: (req) =>
        req.method === 'POST'
          ? { status: 202, json: { id: `m-${keyOf(req)}`, probesCount: 1 } }
          : { json: measurement },
      build: (url) => app({ globalpingUrl: url }),
      request: (a, fault, variant) =>
        a.inject({
          method: 'POST',
          url: '/api/global-dns',
          payload: { target: `${label(fault, variant)}.com`, type: 'A' },
        }),
      warmUp: async (a, tls) => {
        if (!tls)
          await warm(
            a.inject({ method: 'POST', url: '/api/global-dns', payload: { target: 'warm.com', type: 'A' } }),
            'global-dns',
          );
      },
    });
  },
};

const ripestatGeoRig: Rig = {
  name: 'RIPEstat maxmind-geo-lite (ip-geo)',
  id: 'ripestat',
  faults: FAULTS,
  deadlineMs: standard,
  readsShared: true,
  async prepare() {
    const geo = sharedFixture('ripestat/maxmind-geo-lite.json');
    return perRequestTrials({
      faults: FAULTS,
      board: new Switchboard(),
      keyOf: (req) => ipLabel(req.query.get('resource')),
      handler: () => ({ json: geo }),
      // No offline database: every lookup falls to RIPEstat.
      build: (url) => app({ ripestatUrl: url, geoipDb: join(listDir, 'absent.mmdb') }),
      request: (a, fault, variant) => a.inject(`/api/ip-geo?ip=${ipOf(fault, variant)}`),
      warmUp: async (a, tls) => {
        if (!tls) await warm(a.inject(`/api/ip-geo?ip=${WARM_IP}`), 'ip-geo');
      },
    });
  },
};

/** Inspect's `routing` part (RIPEstat routing-status) for its `ip` parameter; the site itself is a closed port. */
const ripestatRoutingRig: Rig = {
  name: 'RIPEstat routing-status (inspect)',
  id: 'ripestat',
  faults: FAULTS,
  deadlineMs: standard,
  readsShared: true,
  outcome(res) {
    const body = res.json() as {
      routing?: { status: string; providers_tried: ProviderAttempt[]; source_id: string | null };
    };
    return {
      // Inspect answers 200 whatever its parts say; the routing part's status is the outcome here.
      status: res.statusCode !== 200 ? res.statusCode : body.routing?.status === 'ok' ? 200 : 502,
      tried: body.routing?.providers_tried ?? [],
      sourceId: body.routing?.source_id ?? undefined,
      cache: res.headers['x-service-cache'] as string | undefined,
    };
  },
  async prepare() {
    const routing = sharedFixture('ripestat/routing-status.json');
    const prefix = sharedFixture('ripestat/prefix-overview.json');
    return perRequestTrials({
      faults: FAULTS,
      board: new Switchboard(),
      keyOf: (req) => (req.path.includes('routing-status') ? ipLabel(req.query.get('resource')) : undefined),
      handler: (req) => ({ json: req.path.includes('routing-status') ? routing : prefix }),
      build: (url) => app({ ripestatUrl: url }),
      request: (a, fault, variant) =>
        a.inject(`/api/inspect?target=127.0.0.1&include_tls=false&ip=${ipOf(fault, variant)}`),
      warmUp: (a) =>
        warm(a.inject(`/api/inspect?target=127.0.0.1&include_tls=false&ip=${WARM_IP}`), 'inspect'),
    });
  },
};

const turnstileRig: Rig = {
  name: 'Turnstile siteverify',
  id: 'turnstile',
  faults: FAULTS,
  failStatus: 503,
  deadlineMs: standard,
  readsShared: true,
  outcome(res) {
    // The verify step answers 503 {error} without providers_tried; the attempt shows in /api/providers.
    return { status: res.statusCode, tried: [], sourceId: undefined, cache: undefined };
  },
  async prepare() {
    const success = sharedFixture('turnstile/siteverify-success.json');
    let n = 0;
    return perRequestTrials({
      faults: FAULTS,
      board: new Switchboard(),
      keyOf: (req) => new URLSearchParams(req.body.toString('utf8')).get('response') ?? undefined,
      handler: () => ({ json: success }),
      build: (url) =>
        app({
          turnstileSiteKey: '1x00000000000000000000AA',
          turnstileSecretKey: '1x0000000000000000000000000000000AA',
          turnstileVerifyUrl: `${url}/siteverify`,
        }),
      // A fresh token every time: a token is single-use once siteverify has answered for it.
      request: (a, fault, variant) =>
        a.inject({
          method: 'POST',
          url: '/api/challenge/verify',
          payload: { token: `${label(fault, variant)} ${n++}` },
        }),
      warmUp: async (a, tls) => {
        if (!tls)
          await warm(
            a.inject({ method: 'POST', url: '/api/challenge/verify', payload: { token: 'warm' } }),
            'verify',
          );
      },
    });
  },
};

const RIGS: Rig[] = [
  // First: its two 35 s trials start while the other rigs are prepared.
  crtshRig,
  dohRig(true),
  dohRig(false),
  wireRig('udp'),
  wireRig('tcp'),
  wireRig('dot'),
  rdapOrgRig,
  bootstrapRig,
  registryRig,
  certspotterRig,
  globalpingRig,
  ripestatGeoRig,
  ripestatRoutingRig,
  turnstileRig,
];

const prepared = new Map<Rig, Map<FaultName, Trial>>();
/** Findings of the trials started early, per rig and fault. */
const started = new Map<Rig, Map<FaultName, Promise<Finding[]>>>();

/** A trial whose crash is a finding (never an unhandled rejection while it waits to be awaited). */
function runTrial(rig: Rig, fault: FaultName, t: Trial): Promise<Finding[]> {
  return trial(rig, fault, t).catch((err: unknown) => [{ fault, step: 'crash', problem: String(err) }]);
}

beforeAll(async () => {
  process.on('unhandledRejection', onRejection);
  ca = (await getTestPki()).caPem;
  await untrustedLeaf();
  baselineSockets = openSockets();
  listDir = mkdtempSync(join(tmpdir(), 'netdiag-faults-'));
  sharedDns = await dnsServer();
  // One rig at a time: warming compiles serializers, which is CPU-bound.
  for (const rig of RIGS) {
    if (rig.readsShared && !hasShared) continue;
    const trials = await rig.prepare();
    prepared.set(rig, trials);
    const early = new Map<FaultName, Promise<Finding[]>>();
    for (const fault of rig.early ?? []) {
      const t = trials.get(fault);
      if (t) early.set(fault, runTrial(rig, fault, t));
    }
    started.set(rig, early);
  }
}, 120_000);

afterAll(async () => {
  await Promise.all(closers.map((close) => close()));
  rmSync(listDir, { recursive: true, force: true });
  process.off('unhandledRejection', onRejection);
  // Sockets close asynchronously after close(): poll for a moment rather than sleep blindly.
  const deadline = Date.now() + 5000;
  while (openSockets() > baselineSockets && Date.now() < deadline)
    await new Promise((r) => setTimeout(r, 50));
  expect(rejections, 'unhandled rejections').toEqual([]);
  expect(openSockets(), `open sockets: ${process.getActiveResourcesInfo().join(', ')}`).toBeLessThanOrEqual(
    baselineSockets,
  );
}, 30_000);

// --- the trials ---------------------------------------------------------------------------------

interface Finding {
  fault: FaultName;
  step: string;
  problem: string;
}

async function timed<T>(run: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const start = performance.now();
  const value = await run();
  return { value, ms: Math.round(performance.now() - start) };
}

/** Runs one fault against one rig; returns what went wrong (empty: all good). */
async function trial(rig: Rig, fault: FaultName, t: Trial): Promise<Finding[]> {
  const findings: Finding[] = [];
  const check = (step: string, ok: boolean, problem: string) => {
    if (!ok) findings.push({ fault, step, problem });
  };
  const read = rig.outcome ?? topLevel;
  const kind = rig.kind?.[fault] ?? KIND[fault];
  const deadline = rig.deadlineMs(fault);
  const failStatus = rig.failStatus ?? 502;
  const id = t.primaryId ?? rig.id;
  const fallbackId = t.fallbackId ?? rig.fallbackId;

  const failedAttempt = (o: Outcome, step: string) => {
    // Turnstile's 503 carries no providers_tried: its attempt is checked in the registry below.
    if (rig.outcome !== undefined && o.tried.length === 0) return;
    const attempt = o.tried.find((p) => p.id === id && p.status === 'failed');
    check(step, attempt !== undefined, `no failed attempt of ${id} in ${JSON.stringify(o.tried)}`);
    if (attempt)
      check(step, kind.test(attempt.error ?? ''), `error "${attempt.error}" does not match ${kind}`);
  };

  // Steps 1 and 2 ask about different names (variants), so they run side by side.
  const [viaFallback, failure] = await Promise.all([
    fallbackId ? timed(() => t.request('a')) : undefined,
    timed(() => t.request('b')),
  ]);

  if (viaFallback) {
    const { value: res, ms } = viaFallback;
    const o = read(res);
    check('fallback', o.status === 200, `status ${o.status}: ${res.body.slice(0, 300)}`);
    check('fallback', ms <= deadline, `took ${ms} ms, deadline ${deadline} ms`);
    failedAttempt(o, 'fallback');
    check('fallback', o.sourceId === fallbackId, `source_id ${o.sourceId}, expected ${fallbackId}`);
  }

  const { value: res, ms } = failure;
  const o = read(res);
  check(
    'failure',
    o.status === failStatus,
    `status ${o.status}, expected ${failStatus}: ${res.body.slice(0, 300)}`,
  );
  check('failure', ms <= deadline, `took ${ms} ms, deadline ${deadline} ms`);
  failedAttempt(o, 'failure');
  if (res.statusCode >= 400) {
    check(
      'failure',
      res.headers['cache-control'] === 'no-store',
      `cache-control ${res.headers['cache-control']}`,
    );
  }
  // The registry saw it: /api/providers shows the failure.
  const listed = t.app.ctx.registry.list().find((p) => p.id === id);
  check(
    'failure',
    (listed?.status.last_error ?? null) !== null,
    `/api/providers shows no last_error for ${id}`,
  );

  // Nothing cached: the same request again reaches the upstream.
  if (t.clear) {
    t.clear();
    const hits = t.primaryHits();
    // Work the failed request shared may still be ending (the IANA bootstrap file is one fetch for
    // every caller) and a 429's Retry-After is honoured: a few tries, within a few seconds.
    let o3: Outcome | undefined;
    let body = '';
    for (let i = 0; i < 4 && o3?.status !== 200; i++) {
      if (i > 0) await new Promise((r) => setTimeout(r, 500));
      const fresh = await t.request('b');
      body = fresh.body;
      o3 = read(fresh);
    }
    check('after', o3?.status === 200, `status ${o3?.status} once the fault cleared: ${body.slice(0, 300)}`);
    check('after', t.primaryHits() > hits, 'the upstream was not asked again: a failure was cached');
    if (o3?.cache !== undefined) check('after', o3.cache === 'MISS', `X-Service-Cache ${o3.cache}`);
  } else {
    const o2 = read(await t.request('b'));
    check('after', o2.status === failStatus, `status ${o2.status} on the second try`);
    failedAttempt(o2, 'after');
  }
  return findings;
}

describe.concurrent('every provider adapter under every fault', () => {
  for (const rig of RIGS) {
    const title = `${rig.name}: ${rig.faults.join(', ')}${rig.notApplicable ? ` (n/a: ${rig.notApplicable})` : ''}`;
    const timeout = Math.max(...rig.faults.map((f) => rig.deadlineMs(f))) * 3 + 10_000;
    it.skipIf(rig.readsShared && !hasShared)(
      title,
      async () => {
        const trials = prepared.get(rig);
        if (!trials) throw new Error(`${rig.name} was not prepared`);
        const early = started.get(rig) ?? new Map<FaultName, Promise<Finding[]>>();
        const results = await Promise.all(
          [...trials].map(([fault, t]) => early.get(fault) ?? runTrial(rig, fault, t)),
        );
        expect(results.flat()).toEqual([]);
      },
      timeout,
    );
  }
});

/**
 * The published lists behind /api/ip-privacy (iCloud Private Relay egress
 * ranges, Tor exits) are not asked per request: they download in the
 * background, on start-up and then daily. Under each fault the refresh must
 * end as a recorded failure (/api/providers' last_error), keep nothing (no
 * copy persisted), leave /api/ip-privacy answering 503 with Retry-After
 * rather than a false "not a relay", and never hold up shutdown. A hung or
 * trickling download is bounded by the list's own 120 s limit, longer than
 * this suite waits: for those two the checks are that nothing loaded and that
 * close() aborts the download at once.
 */
describe.skipIf(!hasShared).concurrent('published relay lists under every fault', () => {
  // The real lists (../shared); this body runs even when skipped, so nothing is read then.
  const real = (rel: string) => (hasShared ? sharedFixtureText(rel) : '');
  const LISTS = [
    { id: 'tor-exit-list', key: 'torExitListUrl', body: real('relay/tor-torbulkexitlist.txt') },
    {
      id: 'apple-private-relay',
      key: 'relayRangesUrl',
      body: real('relay/egress-ip-ranges.excerpt.csv'),
    },
  ] as const;

  for (const list of LISTS) {
    it(`${list.id}: ${FAULTS.join(', ')}`, async () => {
      const findings = await Promise.all(
        FAULTS.map(async (fault): Promise<Finding[]> => {
          const found: Finding[] = [];
          const check = (step: string, ok: boolean, problem: string) => {
            if (!ok) found.push({ fault, step, problem });
          };
          const faulty = await upstream({ untrusted: fault === 'tls', handler: () => ({ body: list.body }) });
          faulty.fault = HTTP_FAULT[fault];
          const healthy = await upstream({
            handler: () => ({ body: LISTS.find((l) => l.id !== list.id)?.body ?? '' }),
          });
          const other = list.key === 'torExitListUrl' ? 'relayRangesUrl' : 'torExitListUrl';
          const dir = mkdtempSync(join(listDir, `${list.id}-${fault}-`));
          const a = await buildApp(
            testConfig({
              loadShedEventLoopDelayMs: 0,
              listCacheDir: dir,
              [list.key]: `${faulty.url}/list`,
              [other]: `${healthy.url}/list`,
            }),
            { ca },
          );
          await a.ready();
          const hangs = fault === 'timeout' || fault === 'trickle';
          const entry = () => a.ctx.registry.list().find((p) => p.id === list.id)?.status;
          // Waits for the failure to be recorded (it ends the wait at once); only a refresh that never
          // fails at all runs into the window, whose width is slack for a busy machine (each parse
          // starts a worker thread), not a bound on the service.
          const until = Date.now() + (hangs ? 1500 : 2 * SLACK_MS + 2000);
          while (Date.now() < until && (hangs || entry()?.last_error === null))
            await new Promise((r) => setTimeout(r, 50));
          if (!hangs) {
            const error = entry()?.last_error ?? '';
            check('refresh', KIND[fault].test(error), `last_error "${error}" does not match ${KIND[fault]}`);
          } else {
            check('refresh', entry()?.last_success_at === null, 'a hung download counted as a success');
          }
          const res = await a.inject('/api/ip-privacy?ip=193.0.6.139');
          check(
            'answer',
            res.statusCode === 503,
            `ip-privacy answered ${res.statusCode}: ${res.body.slice(0, 200)}`,
          );
          check('answer', Number(res.headers['retry-after']) > 0, 'no Retry-After');
          const started = performance.now();
          await a.close();
          const closeMs = performance.now() - started;
          // A download in flight must not hold close() for its two-minute timeout.
          check(
            'close',
            closeMs < SLACK_MS,
            `close() took ${Math.round(closeMs)} ms with a download in flight`,
          );
          const persisted = readdirSync(dir).filter((f) => f.startsWith(list.id));
          check('cache', persisted.length === 0, `persisted ${persisted.join(', ')}`);
          return found;
        }),
      );
      expect(findings.flat()).toEqual([]);
    }, 30_000);
  }
});

/**
 * Targets are not providers: /api/tls and /api/inspect connect to whatever the
 * caller names (through outbound safety, here allowed onto loopback), and a
 * target that misbehaves is evidence about the target, not a failure of ours.
 * The same faults at the socket (nothing after accept, a reset, bytes that are
 * not TLS or HTTP, a trickle, an endless stream) and a certificate from an
 * untrusted CA must still end within the deadline, never as a 500: /api/tls
 * answers 502 for a handshake that did not complete (not cached: the next
 * request connects again) and 200 with the certificate's verdict for an
 * untrusted one; /api/inspect answers 200 with each part's status.
 */
describe.concurrent('user-named targets (/api/tls, /api/inspect) under socket faults', () => {
  type SocketFault = 'timeout' | 'reset' | 'garbage' | 'trickle' | 'huge';
  const SOCKET_FAULTS: Record<SocketFault, (socket: Socket, timers: Set<NodeJS.Timeout>) => void> = {
    timeout: () => {},
    reset: (socket) => socket.destroy(),
    garbage: (socket) => socket.write('HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok'),
    trickle: (socket, timers) => {
      const timer = setInterval(
        () => (socket.destroyed ? clearInterval(timer) : socket.write('\u0016')),
        1000,
      );
      timers.add(timer);
    },
    huge: (socket) => {
      const chunk = Buffer.alloc(64 * 1024, 0x16);
      const pump = () => {
        while (!socket.destroyed && socket.write(chunk));
        if (!socket.destroyed) socket.once('drain', pump);
      };
      pump();
    },
  };

  /** A loopback address with the fault on both 80 and 443, counting connections. */
  async function rawTarget(fault: SocketFault) {
    const timers = new Set<NodeJS.Timeout>();
    const sockets = new Set<Socket>();
    let connections = 0;
    const make = () =>
      createServer((socket) => {
        connections++;
        sockets.add(socket);
        socket.on('error', () => {});
        socket.once('close', () => sockets.delete(socket));
        SOCKET_FAULTS[fault](socket, timers);
      });
    const servers = [make(), make()];
    const listen = (server: ReturnType<typeof make>, address: string, port: number) =>
      new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, address, () => resolve());
      });
    for (let i = 0; i < 200; i++) {
      const address = `127.0.${1 + (process.pid % 50)}.${10 + ((i * 7) % 240)}`;
      try {
        await listen(servers[0]!, address, 443);
        try {
          await listen(servers[1]!, address, 80);
        } catch (err) {
          await new Promise((r) => servers[0]!.close(r));
          servers[0] = make();
          throw err;
        }
        const close = async () => {
          for (const t of timers) clearInterval(t);
          for (const s of sockets) s.destroy();
          await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
        };
        closers.push(close);
        return { address, connections: () => connections };
      } catch {
        // In use (another test file's target): the next address.
      }
    }
    throw new Error('no free loopback address for a raw target');
  }

  it('/api/tls and /api/inspect: timeout, reset, garbage, trickle, huge, untrusted certificate', async () => {
    // The targets are what is under test; inspect's network evidence (RIPEstat) is refused at once, on purpose.
    const a = await app({ ripestatUrl: 'https://127.0.0.1:9' });
    const findings = await Promise.all(
      (Object.keys(SOCKET_FAULTS) as SocketFault[]).map(async (fault): Promise<Finding[]> => {
        const found: Finding[] = [];
        const check = (step: string, ok: boolean, problem: string) => {
          if (!ok) found.push({ fault: fault as FaultName, step, problem });
        };
        const target = await rawTarget(fault);
        const tls = await timed(() => a.inject(`/api/tls?target=${target.address}`));
        // A target's failure is an answer about it (issue 31): 200 with the error part, never cached.
        const failed = (res: { statusCode: number; body: string }) =>
          res.statusCode === 200 &&
          (JSON.parse(res.body) as { tls?: { status?: string } }).tls?.status === 'error';
        check(
          'tls',
          failed(tls.value),
          `/api/tls answered ${tls.value.statusCode}: ${tls.value.body.slice(0, 200)}`,
        );
        check('tls', tls.ms <= standard('timeout'), `/api/tls took ${tls.ms} ms`);
        const before = target.connections();
        const again = await a.inject(`/api/tls?target=${target.address}`);
        check(
          'tls',
          failed(again) && target.connections() > before,
          'the failure was cached: no new connection',
        );
        const inspect = await timed(() => a.inject(`/api/inspect?target=${target.address}`));
        check(
          'inspect',
          inspect.value.statusCode === 200,
          `/api/inspect answered ${inspect.value.statusCode}: ${inspect.value.body.slice(0, 200)}`,
        );
        check('inspect', inspect.ms <= 2 * standard('timeout'), `/api/inspect took ${inspect.ms} ms`);
        return found;
      }),
    );
    // A complete handshake with a certificate nobody trusts is an answer about the target.
    const untrusted = await startHttpTarget({ protocol: 'https', cert: await untrustedLeaf() });
    closers.push(() => untrusted.close());
    const verdict = await a.inject(`/api/tls?target=${untrusted.address}`);
    expect(verdict.statusCode, verdict.body.slice(0, 300)).toBe(200);
    expect(verdict.body).toMatch(/UNABLE_TO_VERIFY_LEAF_SIGNATURE|unable to verify/i);
    expect(findings.flat()).toEqual([]);
  }, 30_000);
});
