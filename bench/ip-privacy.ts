/**
 * The relay-range store at full size: a synthetic iCloud Private Relay list
 * the shape and size of Apple's (~290 000 RFC 8805 rows, ~25% IPv4 /26-/32,
 * ~75% IPv6 /64 and shorter, a few thousand distinct egress regions,
 * ~12 MB), measured for
 *   - load time: CSV text → sorted typed arrays (parse + build), median of 5;
 *   - heap held by the loaded index (after GC);
 *   - lookups per second: the binary search alone, the full classification
 *     (match object with prefix text and region), and from a string address;
 *   - the same classification through the index file the service reads
 *     (relay-index-file.ts, with the service's block cache; the file in the
 *     page cache, as it is once a process has loaded it), and what of it the
 *     process holds.
 *
 *   npm run bench -- ip-privacy [rows]
 *
 * Targets (issue 8): load < 1 s, < 40 MB heap, ≥ 1 M lookups/s.
 */
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { BlockFile } from '../src/providers/ip/block-file.js';
import { forEachLine } from '../src/providers/ip/csv.js';
import {
  formatIpNumber,
  type ParsedIp,
  parseIpNumber,
  parsePrefix,
  type Words,
} from '../src/providers/ip/ip-number.js';
import { NO_MATCH, RangeTableBuilder } from '../src/providers/ip/range-table.js';
import { parseGeofeed, type RelayIndex } from '../src/providers/ip/relay-index.js';
import { encodeRelayIndex, RelayIndexFile } from '../src/providers/ip/relay-index-file.js';
import { RELAY_INDEX_BLOCKS } from '../src/providers/ip/relay-list-parse.js';
import { seededFraction } from '../test/samples.js';
import { syntheticGeofeed } from './synthetic-geofeed.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const rows = Number(process.argv[2] ?? 290_000);

/** CPU time of this process in seconds: on a shared machine, the time it actually ran. */
function cpuSeconds(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1e6;
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
const rand = seededFraction(1);
const pick = <T>(list: T[]): T => list[Math.floor(rand() * list.length)]!;
const queries: ParsedIp[] = [];
for (let i = 0; i < 1_000_000; i++) {
  const hit = rand() < 0.5;
  if (rand() < 0.25) queries.push({ version: 4, v4: pick(hit ? synthetic.hits4 : synthetic.misses4) });
  // A fresh array per query, as parseIpNumber makes one per request (not one object shared by many queries).
  else queries.push({ version: 6, w: [...pick(hit ? synthetic.hits6 : synthetic.misses6)] as Words });
}
const queryText = queries.slice(0, 200_000).map(formatIpNumber);

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
const textRate = perSecond(queryText.length, (i) => idx.lookup(parseIpNumber(queryText[i]!)!));

// The index file the service reads, with its block cache; checked to answer as the index above.
const dir = mkdtempSync(join(tmpdir(), 'netdiag-bench-relay-'));
const indexPath = join(dir, 'relay.index');
const parsed = parseGeofeed(text);
writeFileSync(indexPath, encodeRelayIndex(parsed.index, parsed.report));
const file = new RelayIndexFile(BlockFile.open(indexPath, RELAY_INDEX_BLOCKS));
for (const q of queries.slice(0, 100_000)) {
  if (JSON.stringify(file.lookup(q)) !== JSON.stringify(idx.lookup(q)))
    throw new Error('the index file answers differently');
}
const fileRate = perSecond(queries.length, (i) => file.lookup(queries[i]!));
const fileV4Rate = perSecond(v4Only.length, (i) => file.lookup(v4Only[i]!));
const fileV6Rate = perSecond(v6Only.length, (i) => file.lookup(v6Only[i]!));
const fileHeld = file.cachedBytes;
const fileSize = statSync(indexPath).size;
file.close();
rmSync(dir, { recursive: true, force: true });

const mb = (b: number) => (b / 1024 / 1024).toFixed(1);
const m = (r: { wall: number; cpu: number }) =>
  `${(r.wall / 1e6).toFixed(2)} M/s (${(r.cpu / 1e6).toFixed(2)} M per CPU-second, ${(1e6 / r.cpu).toFixed(2)} µs each)`;
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
    `| full lookup through the index file the service reads (RelayIndexFile.lookup, ${mb(RELAY_INDEX_BLOCKS.maxBytes ?? 0)} MB block cache, page cache warm), same mix | ${m(fileRate)} | |`,
    `| the same, IPv4 only | ${m(fileV4Rate)} | |`,
    `| the same, IPv6 only | ${m(fileV6Rate)} | |`,
    `| index file size / held by the process (its block cache) | ${mb(fileSize)} MB / ${mb(fileHeld)} MB | |`,
    '',
    `(Node ${process.versions.node}, ${new Date().toISOString().slice(0, 10)}, load average ${loadavg()[0]!.toFixed(1)} on ${cpus().length} CPUs. Wall-time rates fall when other processes compete for the CPUs; per-CPU-second rates much less so.)`,
    '',
  ].join('\n'),
);
