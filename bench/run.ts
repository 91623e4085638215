/**
 * npm run bench -- <name> [args]: runs one benchmark from bench/.
 * Benchmarks print markdown tables; copy the figures into docs/performance.md.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';

const available = readdirSync(new URL('.', import.meta.url))
  .filter((f) => f.endsWith('.ts') && !['run.ts', 'lib.ts'].includes(f))
  .map((f) => f.replace(/\.ts$/, ''));
const [name, ...args] = process.argv.slice(2);
if (!name || !available.includes(name)) {
  process.stderr.write(`usage: npm run bench -- <${available.join('|')}> [args]\n`);
  process.exit(2);
}
const result = spawnSync(
  process.execPath,
  ['--import', 'tsx', new URL(`${name}.ts`, import.meta.url).pathname, ...args],
  {
    stdio: 'inherit',
  },
);
process.exit(result.status ?? 1);
