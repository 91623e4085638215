/**
 * DNSSEC validation, netdiag beside unbound, on the same loopback hierarchy (test/fakes/
 * bind-hierarchy.ts: BIND-signed zones served by named under a root of our own): a cold
 * validation (empty caches: a new app, a new unbound) of a signed name three zones down, then a
 * warm one of another name in the same zone under the cached chain. netdiag reports the upstream
 * queries each cost (`queries` in the answer) and the wall time; unbound the wall time of the same
 * two questions through `dig`. Median of the runs; needs named, bind9-utils, unbound and root
 * (or its own namespace):
 *
 *   unshare -rn sh -c 'ip link set lo up && npm run bench -- dnssec [runs]'
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { buildApp } from '../src/app.js';
import { testConfig } from '../src/config/index.js';
import { bindHierarchyUnavailable, startBindHierarchy } from '../test/fakes/bind-hierarchy.js';
import { startValidatingUnbound, unboundUnavailable } from '../test/fakes/dnssec-peers.js';

const run = promisify(execFile);
const runs = Number(process.argv[2] ?? 7);
const COLD = { name: 'www.sub.secure.test', type: 'A' };
const WARM = { name: 'sub.secure.test', type: 'SOA' };

const unavailable = bindHierarchyUnavailable() ?? unboundUnavailable();
if (unavailable) {
  console.error(`bench dnssec: ${unavailable}`);
  process.exit(2);
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;

const h = await startBindHierarchy();
const netdiag = { coldMs: [] as number[], coldQ: [] as number[], warmMs: [] as number[], warmQ: [] as number[] };
const unbound = { coldMs: [] as number[], warmMs: [] as number[] };
try {
  for (let i = 0; i < runs; i++) {
    const app = await buildApp(
      testConfig({
        dnsRootHints: h.rootHints,
        dnssecTrustAnchors: h.trustAnchorFile,
        unsafeAllowTargetCidrs: [h.cidr],
        rateLimitExpensive: { points: 1000, seconds: 60 },
        rateLimitGeneral: { points: 1000, seconds: 60 },
      }),
    );
    for (const [q, ms, queries] of [
      [COLD, netdiag.coldMs, netdiag.coldQ],
      [WARM, netdiag.warmMs, netdiag.warmQ],
    ] as const) {
      const t = performance.now();
      const res = await app.inject({ url: `/api/dnssec?target=${q.name}&type=${q.type}` });
      ms.push(performance.now() - t);
      const body = res.json() as { status: string; queries: number };
      if (body.status !== 'secure') throw new Error(`${q.name}: ${res.body}`);
      queries.push(body.queries);
    }
    await app.close();

    const resolver = await startValidatingUnbound(h);
    for (const [q, ms] of [
      [COLD, unbound.coldMs],
      [WARM, unbound.warmMs],
    ] as const) {
      const t = performance.now();
      const { stdout } = await run('dig', [`@${resolver.address}`, '+dnssec', '+tries=1', '+time=5', q.name, q.type]);
      ms.push(performance.now() - t);
      if (!/flags: [^;]*\bad\b/.test(stdout)) throw new Error(`unbound did not validate ${q.name}: ${stdout}`);
    }
    await resolver.close();
  }
} finally {
  await h.close();
}

const fmt = (ms: number) => `${ms.toFixed(1)} ms`;
console.log(`\nDNSSEC validation, ${runs} runs, medians (cold: ${COLD.name} ${COLD.type}; warm: ${WARM.name} ${WARM.type})\n`);
console.log('| | cold: wall | cold: upstream queries | warm: wall | warm: upstream queries |');
console.log('|---|---|---|---|---|');
console.log(
  `| netdiag /api/dnssec | ${fmt(median(netdiag.coldMs))} | ${median(netdiag.coldQ)} | ${fmt(median(netdiag.warmMs))} | ${median(netdiag.warmQ)} |`,
);
console.log(`| unbound (dig) | ${fmt(median(unbound.coldMs))} | — | ${fmt(median(unbound.warmMs))} | — |`);
