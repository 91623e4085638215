/**
 * dist/ must hold the current build before it runs: `npm start`'s first step (prestart), and
 * the `netdiag` command's (bin/netdiag.mjs) before every run. In a clone with its
 * devDependencies installed, build whatever is stale (scripts/build.ts decides, by content). In
 * a production install (`npm install --omit=dev` beside a dist/ built elsewhere) there is
 * nothing to build with, and the shipped build is what runs.
 *
 * Plain JavaScript on purpose: it must run where neither tsx nor TypeScript is installed. When
 * nothing is stale (build-inputs.mjs hashes the inputs, some tens of milliseconds) that is all
 * it does: tsx and esbuild are not loaded, which every `netdiag` command and `npm start` would
 * otherwise pay (a quarter of a second and ~35 MB). Otherwise the build runs in this process
 * through tsx's scoped loader (tsImport), not in a child.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));

function resolvable(specifier) {
  try {
    createRequire(import.meta.url).resolve(specifier);
    return true;
  } catch {
    return false;
  }
}

/**
 * Builds what is stale, writing progress with `log` (stdout for npm start; stderr for the
 * command line, whose stdout is the answer). Returns false, having said why, when there is
 * neither a build nor the tools to make one.
 */
export async function ensureBuilt({ log = (line) => process.stdout.write(`${line}\n`) } = {}) {
  if (!resolvable('tsx') || !resolvable('esbuild')) {
    if (existsSync(`${root}/dist/server.js`)) return true;
    process.stderr.write(
      'netdiag: dist/ is not built, and the build tools (devDependencies) are not installed: ' +
        'run `npm install && npm run build`, or deploy a dist/ built elsewhere (docs/operations.md)\n',
    );
    return false;
  }
  // Only where the tools are: a production install ships this file alone (bin/netdiag.mjs's first step).
  const { inputHash, isCurrent, readState } = await import('./build-inputs.mjs');
  const state = readState();
  if (isCurrent('server', inputHash('server'), state) && isCurrent('web', inputHash('web'), state))
    return true;
  const { tsImport } = await import('tsx/esm/api');
  const { build } = await tsImport(`${root}/scripts/build.ts`, import.meta.url);
  await build({ ifStale: true, log });
  return true;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  ensureBuilt().then(
    (ok) => process.exit(ok ? 0 : 1),
    (err) => {
      process.stderr.write(`build: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exit(1);
    },
  );
}
