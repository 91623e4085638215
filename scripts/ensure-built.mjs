/**
 * `npm start`'s first step (prestart): dist/ must hold the current build before
 * `node dist/server.js` runs. In a clone with its devDependencies installed, build
 * whatever is stale (scripts/build.ts decides, by content). In a production install
 * (`npm install --omit=dev` beside a dist/ built elsewhere) there is nothing to build
 * with, and the shipped build is what runs.
 *
 * Plain JavaScript on purpose: it must run where neither tsx nor TypeScript is installed.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));

function resolvable(specifier) {
  try {
    createRequire(import.meta.url).resolve(specifier);
    return true;
  } catch {
    return false;
  }
}

if (!resolvable('tsx') || !resolvable('esbuild')) {
  if (existsSync(`${root}/dist/server.js`)) process.exit(0);
  process.stderr.write(
    'netdiag: dist/ is not built, and the build tools (devDependencies) are not installed: ' +
      'run `npm install && npm run build`, or deploy a dist/ built elsewhere (docs/operations.md)\n',
  );
  process.exit(1);
}
const run = spawnSync(process.execPath, ['--import', 'tsx', `${root}/scripts/build.ts`, '--if-stale'], {
  cwd: root,
  stdio: 'inherit',
});
process.exit(run.status ?? 1);
