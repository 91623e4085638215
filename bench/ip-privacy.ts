/**
 * The relay-range store at full size: a synthetic iCloud Private Relay list
 * the shape and size of Apple's (~290 000 RFC 8805 rows, ~25% IPv4 /26-/32,
 * ~75% IPv6 /64 and shorter, a few thousand distinct egress regions,
 * ~12 MB), measured for
 *   - load time: CSV text → sorted typed arrays (parse + build), median of 5;
 *   - heap held by the loaded index (after GC);
 *   - lookups per second: the binary search alone, the full classification
 *     (match object with prefix text and region), and from a string address.
 *
 *   npm run bench -- ip-privacy [rows]
 *
 * Targets (issue 8): load < 1 s, < 40 MB heap, ≥ 1 M lookups/s.
 */
import { cpus, loadavg } from 'node:os';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { forEachLine } from '../src/providers/ip/csv.js';
import { formatIp, type ParsedIp, parseIp, parsePrefix, type Words } from '../src/providers/ip/ip-number.js';
import { NO_MATCH, RangeTableBuilder } from '../src/providers/ip/range-table.js';
import { parseGeofeed, type RelayIndex } from '../src/providers/ip/relay-index.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const rows = Number(process.argv[2] ?? 290_000);

/** CPU time of this process in seconds: on a shared machine, the time it actually ran. */
function cpuSeconds(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1e6;
}

/** Deterministic pseudo-random numbers (mulberry32), so every run measures the same list. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const COUNTRIES = ['US', 'GB', 'DE', 'FR', 'JP', 'BR', 'IN', 'AU', 'CA', 'NL', 'SE', 'SG', 'ZA', 'MX', 'ES'];

interface Synthetic {
  text: string;
  /** Addresses inside listed ranges and in the gaps between them, per family. */
  hits4: number[];
  misses4: number[];
  hits6: Words[];
  misses6: Words[];
}

const M32 = 0xffffffffn;
const words = (hi: bigint, lo: number): Words => [Number(hi >> 32n), Number(hi & M32), 0, lo];

function syntheticGeofeed(count: number): Synthetic {
  const rand = random(8805);
  const regions = Array.from({ length: 3000 }, (_, i) => {
    const country = COUNTRIES[i % COUNTRIES.length]!;
    // Some rows leave region and city empty, as Apple's do.
    return i % 7 === 0 ? `${country},,` : `${country},${country}-R${i % 40},City ${i}`;
  });
  const lines: string[] = [];
  const out: Synthetic = { text: '', hits4: [], misses4: [], hits6: [], misses6: [] };
  let a4 = 0xace00000; // 172.224.0.0, where Apple's IPv4 ranges start
  let hi = 0x2a0226f7c7000000n; // 2a02:26f7:c700::, the top half of Apple's IPv6 ranges
  const v4Rows = Math.round(count * 0.25);
  for (let i = 0; i < count; i++) {
    const region = regions[Math.floor(rand() * regions.length)]!;
    const gap = Math.floor(rand() * 3); // 0-2 unlisted blocks after each range
    if (i < v4Rows) {
      const bits = 26 + Math.floor(rand() * 7); // /26../32
      const size = 2 ** (32 - bits);
      a4 = Math.ceil(a4 / size) * size;
      lines.push(
        `${(a4 >>> 24) & 255}.${(a4 >>> 16) & 255}.${(a4 >>> 8) & 255}.${a4 & 255}/${bits},${region},`,
      );
      out.hits4.push(a4 + Math.floor(rand() * size));
      if (gap > 0) out.misses4.push(a4 + size);
      a4 += size * (1 + gap);
    } else {
      const bits = rand() < 0.9 ? 64 : 48 + Math.floor(rand() * 16);
      const size = 1n << BigInt(64 - bits);
      hi = ((hi + size - 1n) / size) * size;
      const groups = [48n, 32n, 16n, 0n].map((shift) => ((hi >> shift) & 0xffffn).toString(16));
      lines.push(`${groups.join(':')}::/${bits},${region},`);
      out.hits6.push(words(hi, 42));
      if (gap > 0) out.misses6.push(words(hi + size, 7));
      hi += size * BigInt(1 + gap);
    }
  }
  out.text = `${lines.join('\n')}\n`;
  return out;
}

const synthetic = syntheticGeofeed(rows);
const { text } = synthetic;

// Load time: median of five full loads, wall and CPU time.
const loads: number[] = [];
const loadsCpu: number[] = [];
let index: RelayIndex | undefined;
for (let i = 0; i < 5; i++) {
  index = undefined;
  gc();
  const start = performance.now();
  const cpu = cpuSeconds();
  index = parseGeofeed(text).index;
  loads.push(performance.now() - start);
  loadsCpu.push((cpuSeconds() - cpu) * 1000);
}
loads.sort((a, b) => a - b);
loadsCpu.sort((a, b) => a - b);

// Memory: what the loaded index holds after GC.
index = undefined;
gc();
const before = process.memoryUsage();
index = parseGeofeed(text).index;
gc();
const after = process.memoryUsage();
// JS objects (regions, wrappers) from the heap delta; the typed arrays (off-heap) counted exactly.
const heldHeap = after.heapUsed - before.heapUsed;
const heldArrays = index.byteLength;

// The bare range table over the same prefixes, for the search alone.
const builder = new RangeTableBuilder();
let row = 0;
forEachLine(text, (line) => {
  const prefix = parsePrefix(line.slice(0, line.indexOf(',')));
  if (prefix) builder.addPrefix(prefix, row++);
});
const table = builder.build();

// Lookup workload: half hits, half misses (addresses in the gaps); 25% IPv4 like the list.
const rand = random(1);
const pick = <T>(list: T[]): T => list[Math.floor(rand() * list.length)]!;
const queries: ParsedIp[] = [];
for (let i = 0; i < 1_000_000; i++) {
  const hit = rand() < 0.5;
  if (rand() < 0.25) queries.push({ version: 4, v4: pick(hit ? synthetic.hits4 : synthetic.misses4) });
  // A fresh array per query, as parseIp makes one per request (not one object shared by many queries).
  else queries.push({ version: 6, w: [...pick(hit ? synthetic.hits6 : synthetic.misses6)] as Words });
}
const queryText = queries.slice(0, 200_000).map(formatIp);

/** Operations per second of wall time and of CPU time (the two differ when other processes compete). */
function perSecond(n: number, run: (i: number) => unknown): { wall: number; cpu: number } {
  for (let i = 0; i < Math.min(n, 100_000); i++) run(i); // warm-up (JIT)
  let sink = 0;
  const wall = performance.now();
  const cpu = cpuSeconds();
  for (let i = 0; i < n; i++) if (run(i) !== undefined) sink++;
  const wallSeconds = (performance.now() - wall) / 1000;
  const cpuUsed = cpuSeconds() - cpu;
  if (sink < 0) process.stdout.write(''); // keep the results alive
  return { wall: n / wallSeconds, cpu: n / cpuUsed };
}

const idx = index;
let hits = 0;
for (const q of queries) if (idx.lookup(q)) hits++;
const findRate = perSecond(queries.length, (i) => (table.find(queries[i]!) === NO_MATCH ? undefined : 1));
const lookupRate = perSecond(queries.length, (i) => idx.lookup(queries[i]!));
const v4Only = queries.filter((q) => q.version === 4);
const v6Only = queries.filter((q) => q.version === 6);
const v4Rate = perSecond(v4Only.length, (i) => (table.find(v4Only[i]!) === NO_MATCH ? undefined : 1));
const v6Rate = perSecond(v6Only.length, (i) => (table.find(v6Only[i]!) === NO_MATCH ? undefined : 1));
const textRate = perSecond(queryText.length, (i) => idx.lookup(parseIp(queryText[i]!)!));

const mb = (b: number) => (b / 1024 / 1024).toFixed(1);
const m = (r: { wall: number; cpu: number }) =>
  `${(r.wall / 1e6).toFixed(2)} M/s (${(r.cpu / 1e6).toFixed(2)} M per CPU-second)`;
process.stdout.write(
  [
    '',
    `### Relay-range store, synthetic Apple-sized list (${rows} rows, 25% IPv4, 75% IPv6; ${mb(text.length)} MB CSV)`,
    '',
    '| measure | value | target |',
    '|---|---:|---:|',
    `| load (parse + sort + build), median of 5 | ${loads[2]!.toFixed(0)} ms wall (min ${loads[0]!.toFixed(0)}, max ${loads[4]!.toFixed(0)}); ${loadsCpu[2]!.toFixed(0)} ms CPU | < 1000 ms |`,
    `| heap held by the loaded index (JS heap + typed arrays) | ${mb(heldHeap + heldArrays)} MB (${mb(heldHeap)} + ${mb(heldArrays)}) | < 40 MB |`,
    `| binary search alone (RangeTable.find), mixed 25% IPv4 / 75% IPv6, ${((hits / queries.length) * 100).toFixed(0)}% hits | ${m(findRate)} | ≥ 1 M/s |`,
    `| full lookup (RelayIndex.lookup: search + match object with prefix text and region), same mix | ${m(lookupRate)} | |`,
    `| binary search alone, IPv4 only | ${m(v4Rate)} | |`,
    `| binary search alone, IPv6 only | ${m(v6Rate)} | |`,
    `| full lookup from address text (parse + RelayIndex.lookup) | ${m(textRate)} | |`,
    '',
    `(Node ${process.versions.node}, ${new Date().toISOString().slice(0, 10)}, load average ${loadavg()[0]!.toFixed(1)} on ${cpus().length} CPUs. Wall-time rates fall when other processes compete for the CPUs; per-CPU-second rates much less so.)`,
    '',
  ].join('\n'),
);
