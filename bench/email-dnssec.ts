/**
 * What netdiag's own DNSSEC validation costs an email-security check (issue 32), on the
 * BIND-signed hierarchy of test/fakes/bind-hierarchy.ts (root, or `npm test`'s namespace, and
 * named installed): each mail zone gets MX, A, AAAA, TLSA, SPF and DMARC records, and one app
 * checks them in turn, first with the hierarchy's non-validating recursive view as its resolver,
 * then behind a validating unbound (where a bogus domain's every question is SERVFAIL and is read
 * through netdiag's engine instead). Prints one markdown table: the engine's upstream queries
 * (UDP exchanges with the hierarchy's name servers) and the wall time per check.
 *
 *   unshare -n sh -c 'ip link set lo up && npm run bench -- email-dnssec'
 */
import dgram from 'node:dgram';
import { buildApp } from '../src/app.js';
import { testConfig } from '../src/config/index.js';
import { startBindHierarchy } from '../test/fakes/bind-hierarchy.js';
import { startValidatingUnbound } from '../test/fakes/dnssec-peers.js';

const ZONES = [
  'signed.example',
  'ed25519.test',
  'rsasha512.test',
  'nsec3.test',
  'unsigned.test',
  'expired.test',
];

/** The engine's exchanges: each is a UDP socket connected to a name server of the hierarchy. */
const counter = { prefix: '', resolver: '', count: 0 };
const connect = dgram.Socket.prototype.connect;
dgram.Socket.prototype.connect = function counted(this: dgram.Socket, ...args: unknown[]) {
  const address = args.find((a) => typeof a === 'string') as string | undefined;
  if (address?.startsWith(counter.prefix) && address !== counter.resolver) counter.count++;
  return (connect as (...a: unknown[]) => unknown).apply(this, args);
} as typeof dgram.Socket.prototype.connect;

const mail = (zone: string) => [
  '@ IN MX 10 mx',
  'mx IN A 192.0.2.25',
  'mx IN AAAA 2001:db8::25',
  `_25._tcp.mx IN TLSA 3 1 1 ${'ab'.repeat(32)}`,
  '@ IN TXT "v=spf1 mx -all"',
  `_dmarc IN TXT "v=DMARC1; p=reject; rua=mailto:d@${zone}"`,
];
const h = await startBindHierarchy({ records: Object.fromEntries(ZONES.map((z) => [z, mail(z)])) });
counter.prefix = h.prefix;
const unbound = await startValidatingUnbound(h);

/** One app (a cold engine cache), every zone in turn: the first check walks the chain from the root. */
async function pass(
  resolver: string,
): Promise<{ zone: string; state: string; points: string; queries: number; ms: number }[]> {
  counter.resolver = resolver;
  const app = await buildApp(
    testConfig({
      dnsResolvers: [`udp://${resolver}:53`],
      dnsRootHints: h.rootHints,
      dnssecTrustAnchors: h.trustAnchorFile,
      unsafeAllowTargetCidrs: [h.cidr],
      rateLimitExpensive: { points: 1000, seconds: 60 },
      rateLimitGeneral: { points: 1000, seconds: 60 },
    }),
  );
  const rows = [];
  for (const zone of ZONES) {
    counter.count = 0;
    const started = performance.now();
    const body = (await app.inject({ url: '/api/email-security', query: { domain: zone } })).json();
    const ms = performance.now() - started;
    const check = body.checks.find((c: { id: string }) => c.id === 'dnssec');
    rows.push({
      zone,
      state: body.details.dnssec.state,
      points: `${check.points}/${check.max_points}`,
      queries: counter.count,
      ms: Math.round(ms),
    });
  }
  await app.close();
  return rows;
}

// Warm named's and unbound's own caches first: only netdiag's engine starts cold in the passes measured.
await pass(h.serverAddresses.resolver);
await pass(unbound.address);
const plain = await pass(h.serverAddresses.resolver);
const validating = await pass(unbound.address);
await unbound.close();
await h.close();

console.log(
  '| zone | verdict | DNSSEC points | engine queries, non-validating resolver | ms | engine queries, behind unbound | ms |',
);
console.log('|---|---|---:|---:|---:|---:|---:|');
for (const [i, row] of plain.entries()) {
  const v = validating[i]!;
  console.log(
    `| ${row.zone} | ${row.state} | ${row.points} | ${row.queries} | ${row.ms} | ${v.queries} | ${v.ms} |`,
  );
}
