/**
 * DNSSEC validation, netdiag beside unbound, on the same loopback hierarchy (test/fakes/
 * bind-hierarchy.ts: BIND-signed zones served by named under a root of our own): a cold
 * validation (empty caches: a new engine over a new cache, a new unbound; netdiag's code warmed
 * by one validation first, so V8's compiling is not counted) of a signed name three zones down, then a
 * warm one of another name in the same zone under the cached chain. netdiag reports the upstream
 * queries each cost (`queries` in the answer) and the wall time; unbound the wall time of the same
 * two questions, asked in process over UDP. Median of the runs; needs named, bind9-utils, unbound and root
 * (or its own namespace):
 *
 *   unshare -rn sh -c 'ip link set lo up && npm run bench -- dnssec [runs]'
 */
import { createSocket } from 'node:dgram';
import * as packet from 'dns-packet';
import { MemoryCache } from '../src/cache/memory.js';
import { IterativeResolver } from '../src/dns-engine/index.js';
import { loadTrustAnchors } from '../src/features/dnssec/trust-anchors.js';
import { validate } from '../src/features/dnssec/validate.js';
import { bindHierarchyUnavailable, startBindHierarchy } from '../test/fakes/bind-hierarchy.js';
import { startValidatingUnbound, unboundUnavailable } from '../test/fakes/dnssec-peers.js';

/** One recursive question with DO to unbound, in process as netdiag's is: whether the answer came back AD. */
async function askResolver(address: string, name: string, type: string): Promise<boolean> {
  const socket = createSocket('udp4');
  try {
    return await new Promise<boolean>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`unbound: no answer for ${name}`)), 5_000);
      socket.once('message', (msg) => {
        clearTimeout(timer);
        resolve(((packet.decode(msg).flags ?? 0) & packet.AUTHENTIC_DATA) !== 0);
      });
      const query = packet.encode({
        type: 'query',
        id: 7,
        flags: packet.RECURSION_DESIRED,
        questions: [{ type: type as 'A', name }],
        additionals: [
          {
            type: 'OPT',
            name: '.',
            udpPayloadSize: 1232,
            extendedRcode: 0,
            ednsVersion: 0,
            flags: packet.DNSSEC_OK,
            flag_do: true,
            options: [],
          },
        ],
      });
      socket.send(query, 53, address);
    });
  } finally {
    socket.close();
  }
}
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
const anchors = loadTrustAnchors(h.trustAnchorFile);
// One validation first on a throwaway engine: the figures below are the work, not V8 compiling it.
await validate(
  new IterativeResolver({ cache: new MemoryCache(), rootHints: h.rootHints, allowCidrs: [h.cidr] }),
  COLD.name,
  COLD.type,
  { anchors },
);
const netdiag = {
  coldMs: [] as number[],
  coldQ: [] as number[],
  warmMs: [] as number[],
  warmQ: [] as number[],
};
const unbound = { coldMs: [] as number[], warmMs: [] as number[] };
try {
  for (let i = 0; i < runs; i++) {
    // A fresh engine over a fresh cache: nothing known but the root hints, as a new unbound.
    const engine = new IterativeResolver({
      cache: new MemoryCache(),
      rootHints: h.rootHints,
      allowCidrs: [h.cidr],
    });
    for (const [q, ms, queries] of [
      [COLD, netdiag.coldMs, netdiag.coldQ],
      [WARM, netdiag.warmMs, netdiag.warmQ],
    ] as const) {
      const t = performance.now();
      const result = await validate(engine, q.name, q.type, { anchors });
      ms.push(performance.now() - t);
      if (result.status !== 'secure')
        throw new Error(`${q.name}: ${result.status} ${JSON.stringify(result.reason)}`);
      queries.push(result.queries.length);
    }

    const resolver = await startValidatingUnbound(h);
    for (const [q, ms] of [
      [COLD, unbound.coldMs],
      [WARM, unbound.warmMs],
    ] as const) {
      const t = performance.now();
      const ad = await askResolver(resolver.address, q.name, q.type);
      ms.push(performance.now() - t);
      if (!ad) throw new Error(`unbound did not validate ${q.name}`);
    }
    await resolver.close();
  }
} finally {
  await h.close();
}

const fmt = (ms: number) => `${ms.toFixed(1)} ms`;
console.log(
  `\nDNSSEC validation, ${runs} runs, medians (cold: ${COLD.name} ${COLD.type}; warm: ${WARM.name} ${WARM.type})\n`,
);
console.log('| | cold: wall | cold: upstream queries | warm: wall | warm: upstream queries |');
console.log('|---|---|---|---|---|');
console.log(
  `| netdiag (engine + validator) | ${fmt(median(netdiag.coldMs))} | ${median(netdiag.coldQ)} | ${fmt(median(netdiag.warmMs))} | ${median(netdiag.warmQ)} |`,
);
console.log(`| unbound | ${fmt(median(unbound.coldMs))} | — | ${fmt(median(unbound.warmMs))} | — |`);
