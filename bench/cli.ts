/**
 * The `netdiag` command in-process, as people run it: the built bin (bin/netdiag.mjs) as a
 * child process against the fixture upstreams (test/e2e/fixture-app.ts, through the
 * configuration contract's variables, as test/integration/cli.test.ts runs it), for `dns`,
 * `email` and `ip-geo`, with `--version` as the floor every command pays (Node, ensure-built).
 * Each run reports wall time, the child's CPU (user + system) and its peak RSS (VmHWM), read
 * by a module preloaded with --import as the process exits. Median of the runs.
 *
 *   npm run bench -- cli [runs]
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { startFixtureUpstreams } from '../test/e2e/fixture-app.js';

const runs = Number(process.argv[2] ?? 5);
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'netdiag-bench-cli-'));
const probe = join(dir, 'probe.mjs');
// Written at exit (process.exit runs 'exit' listeners): the process's own account of itself.
writeFileSync(
  probe,
  `import { readFileSync, writeFileSync } from 'node:fs';
process.on('exit', () => {
  const status = readFileSync('/proc/self/status', 'utf8');
  const hwm = Number(/VmHWM:\\s+(\\d+)/.exec(status)?.[1] ?? 0);
  const r = process.resourceUsage();
  writeFileSync(process.env.NETDIAG_BENCH_OUT, JSON.stringify({ cpuUs: r.userCPUTime + r.systemCPUTime, hwmKb: hwm || r.maxRSS }));
});
`,
);

interface Sample {
  wallMs: number;
  cpuMs: number;
  rssMb: number;
  code: number;
}

const fx = await startFixtureUpstreams();

/** Asynchronous: the fake upstreams answer from this process's event loop. */
function once(args: string[], out: string): Promise<Sample> {
  const env = {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '',
    ...fx.env,
    NETDIAG_BENCH_OUT: out,
  };
  const start = performance.now();
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', pathToFileURL(probe).href, 'bin/netdiag.mjs', ...args],
      { cwd: ROOT, env, timeout: 120_000, maxBuffer: 16 * 1024 * 1024 },
      (err, _stdout, stderr) => {
        const wallMs = performance.now() - start;
        const code = err ? (typeof err.code === 'number' ? err.code : -1) : 0;
        if (code !== 0) process.stderr.write(`netdiag ${args.join(' ')}: exit ${code}\n${stderr}\n`);
        const { cpuUs, hwmKb } = JSON.parse(readFileSync(out, 'utf8')) as { cpuUs: number; hwmKb: number };
        resolve({ wallMs, cpuMs: cpuUs / 1000, rssMb: hwmKb / 1024, code });
      },
    );
  });
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;

const COMMANDS: [string, string[]][] = [
  ['--version', ['--version']],
  ['dns example.test MX', ['dns', 'example.test', 'MX']],
  ['email example.test', ['email', 'example.test']],
  ['ip-geo 8.8.8.8', ['ip-geo', '8.8.8.8']],
];

// One unmeasured run first: the build check's first pass and the relay lists' first download.
for (const [, args] of COMMANDS) await once(args, join(dir, 'warm.json'));
const lines = [
  `| command (median of ${runs}) | wall ms | CPU ms (user+sys) | peak RSS MB (VmHWM) |`,
  '|---|---:|---:|---:|',
];
for (const [label, args] of COMMANDS) {
  const samples: Sample[] = [];
  for (let i = 0; i < runs; i++) samples.push(await once(args, join(dir, `${i}.json`)));
  const failed = samples.filter((s) => s.code !== 0).length;
  lines.push(
    `| netdiag ${label}${failed ? ` (${failed} failed)` : ''} | ${median(samples.map((s) => s.wallMs)).toFixed(0)} | ${median(samples.map((s) => s.cpuMs)).toFixed(0)} | ${median(samples.map((s) => s.rssMb)).toFixed(0)} |`,
  );
}
process.stdout.write(`\n### netdiag in-process (Node ${process.versions.node})\n\n${lines.join('\n')}\n`);
await fx.close();
rmSync(dir, { recursive: true, force: true });
