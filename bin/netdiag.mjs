#!/usr/bin/env node
/**
 * The `netdiag` command (package.json "bin"): makes sure dist/ holds the current build
 * (scripts/ensure-built.mjs; whatever the build prints goes to stderr, stdout is the answer),
 * then runs dist/cli/main.js. Plain JavaScript: it runs before anything is compiled.
 *
 * A cluster worker of `netdiag serve` (WEB_CONCURRENCY > 1) runs this file again; its primary
 * has already built.
 */
import { ensureBuilt } from '../scripts/ensure-built.mjs';

if (process.env.NODE_UNIQUE_ID === undefined) {
  const ok = await ensureBuilt({ log: (line) => process.stderr.write(`${line}\n`) });
  if (!ok) process.exit(1);
}
await import('../dist/cli/main.js');
