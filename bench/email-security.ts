/**
 * GET /api/email-security: uncached wall time against the fake DNS server
 * with 50 ms injected per answer, compared with the depth of the SPF tree in
 * round trips (docs/architecture.md §7: an email-security check costs about the
 * depth of its SPF include tree in round trips, not the number of queries).
 * One app serves every run (warmed up first, as a long-running process is);
 * each run asks about a domain of its own, so nothing comes from the cache:
 * ~40 DNS questions per run. The MTA-STS policy and BIMI logo come from an
 * HTTPS target on 127.0.0.x:443 (loopback, no injected delay), so outbound
 * safety and two TLS handshakes are in the path too.
 *
 *   npm run bench -- email-security [runs per depth]
 */
import pino from 'pino';
import { buildApp } from '../src/app.js';
import { testConfig } from '../src/config/index.js';
import { startFakeDnsServer } from '../test/fakes/dns-server.js';
import type { FakeZone } from '../test/fakes/dns-zones.js';
import { startHttpTarget } from '../test/fakes/http-targets.js';
import { getTestPki } from '../test/fakes/test-ca.js';
import { fixtureText, sharedZones } from '../test/fixtures/email/zones.js';
import { makeZone } from '../test/unit/features/email/zone-resolver.js';

const RTT_MS = 50;
const runs = Number(process.argv[2] ?? 5);
const DEPTHS = [1, 2, 3, 4, 5];

const { caPem } = await getTestPki();
/** One domain per (depth, run), plus a warm-up domain: none is ever answered from the cache. */
const domains = DEPTHS.flatMap((depth) =>
  Array.from({ length: runs + 1 }, (_, run) => ({ depth, name: `r${run}-d${depth}.bench.test` })),
);
const target = await startHttpTarget({
  protocol: 'https',
  names: domains.flatMap(({ name }) => [`mta-sts.${name}`, `bimi.${name}`]),
  routes: {
    '/.well-known/mta-sts.txt': (req) => ({
      body: `version: STSv1\nmode: enforce\nmx: *.${req.host?.replace(/^mta-sts\./, '')}\nmax_age: 1209600\n`,
    }),
    '/logo.svg': { body: fixtureText('logo.svg') },
  },
});

/** A complete domain whose SPF tree is `depth` records deep: root → l1 → … → l(depth-1). */
function zone(d: string, depth: number): FakeZone {
  const rows: [string, string, unknown][] = [
    [d, 'MX', { preference: 10, exchange: `mx1.${d}` }],
    [d, 'MX', { preference: 20, exchange: `mx2.${d}` }],
    [`mx1.${d}`, 'A', '192.0.2.61'],
    [`mx2.${d}`, 'A', '192.0.2.62'],
    [`_dmarc.${d}`, 'TXT', `v=DMARC1; p=reject; rua=mailto:dmarc@${d}`],
    [`_mta-sts.${d}`, 'TXT', 'v=STSv1; id=1'],
    [`mta-sts.${d}`, 'A', target.address],
    [`_smtp._tls.${d}`, 'TXT', `v=TLSRPTv1; rua=mailto:tls@${d}`],
    [`default._bimi.${d}`, 'TXT', `v=BIMI1; l=https://bimi.${d}/logo.svg`],
    [`bimi.${d}`, 'A', target.address],
    [`google._domainkey.${d}`, 'TXT', 'v=DKIM1; k=ed25519; p=11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo='],
  ];
  for (let level = 0; level < depth; level++) {
    const owner = level === 0 ? d : `l${level}.${d}`;
    const next = level + 1 < depth ? ` include:l${level + 1}.${d}` : '';
    rows.push([owner, 'TXT', `v=spf1 ip4:192.0.2.${level}/32${next} -all`]);
  }
  return makeZone(d, rows);
}

const dns = await startFakeDnsServer({
  zones: [
    ...sharedZones(),
    makeZone('bench.test', []),
    ...domains.map(({ name, depth }) => zone(name, depth)),
  ],
});
const app = await buildApp(
  testConfig({
    dnsResolvers: [dns.doh],
    unsafeAllowTargetCidrs: ['127.0.0.0/8'],
    rateLimitGeneral: { points: 1e9, seconds: 60 },
    rateLimitExpensive: { points: 1e9, seconds: 60 },
    maxConnectionsPerIp: 0,
  }),
  { logger: pino({ level: 'silent' }), ca: caPem },
);

async function once(domain: string): Promise<{ ms: number; queries: number }> {
  const start = performance.now();
  const res = await app.inject(`/api/email-security?domain=${domain}`);
  const ms = performance.now() - start;
  if (res.statusCode !== 200) throw new Error(`HTTP ${res.statusCode}: ${res.body}`);
  if (res.headers['x-service-cache'] !== 'MISS') throw new Error('answered from the cache');
  return { ms, queries: res.json().dns_queries };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
// Warm-up at full speed: JIT, the DoH connection, the route's compiled schemas.
for (const depth of DEPTHS) await once(`r${runs}-d${depth}.bench.test`);
dns.set({ delayMs: RTT_MS });
const lines = [
  `| SPF tree depth (records) | DNS questions | wall ms, median of ${runs} | wall ms, best | depth × RTT | questions × RTT (one at a time) | median ÷ (depth × RTT) |`,
  '|---:|---:|---:|---:|---:|---:|---:|',
];
for (const depth of DEPTHS) {
  const samples: { ms: number; queries: number }[] = [];
  for (let run = 0; run < runs; run++) samples.push(await once(`r${run}-d${depth}.bench.test`));
  const ms = median(samples.map((s) => s.ms));
  const queries = samples[0]!.queries;
  const best = Math.min(...samples.map((s) => s.ms));
  lines.push(
    `| ${depth} | ${queries} | ${ms.toFixed(0)} | ${best.toFixed(0)} | ${depth * RTT_MS} | ${queries * RTT_MS} | ${(ms / (depth * RTT_MS)).toFixed(2)} |`,
  );
}
process.stdout.write(
  `\n### Uncached GET /api/email-security, ${RTT_MS} ms per DNS answer (fake DoH on loopback)\n\n${lines.join('\n')}\n\n` +
    'Outside SPF, the longest chains are 2 round trips (MX → exchange addresses and TLSA; _mta-sts TXT → policy host address →\n' +
    'HTTPS; BIMI TXT → logo host address → HTTPS; 27 DKIM selectors at 16 in flight), so below depth 2 the floor is\n' +
    `about 2 × ${RTT_MS} ms plus the two TLS fetches.\n`,
);
await app.close();
await Promise.all([dns.close(), target.close()]);
