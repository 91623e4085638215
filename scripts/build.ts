/**
 * The build: the server (src → dist, one .js per .ts; the typed client src/client among them)
 * and the site (src/web → dist/web).
 *
 *   tsx scripts/build.ts             everything (npm run build): the API types generated from
 *                                    the app's own /openapi.json first, the site type-checked
 *                                    against them, the client's declarations (dist/client/*.d.ts)
 *   tsx scripts/build.ts --if-stale  only what changed since the last build (npm start via
 *                                    scripts/ensure-built.mjs, and the test suite's global setup);
 *                                    no API types or declarations, nothing at run time needs them
 *   tsx scripts/build.ts --api-types only src/client/openapi.gen.d.ts (npm run typecheck, before tsc)
 *
 * The server is transpiled by esbuild, file by file, keeping src's layout so paths taken
 * relative to a module (dist/web from the site route, bundled data files) hold in both
 * trees. esbuild does not type-check: `npm run typecheck` (tsc) is the gate, in CI and in
 * `npm run check`; the build only has to be fast enough to run before every start.
 *
 * Staleness is decided by content, not mtimes: dist/.build-state.json records a hash of
 * each part's inputs (scripts/build-inputs.mjs), so a fresh clone, a checkout or a copied tree
 * never serves code older than its sources, and an unchanged tree costs one hash of ~250 files.
 */
import { copyFileSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { API_TYPES, emitClientDeclarations, generateApiTypes } from './build-client.js';
import {
  DIST,
  inputHash,
  isCurrent,
  readState,
  STATE_FILE,
  serverData,
  serverSources,
} from './build-inputs.mjs';
import { bundleSite, typecheckSite } from './build-web.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SRC = join(ROOT, 'src');

export { DIST };

type Part = 'server' | 'web';

/** dist/ without the site, rebuilt from scratch so a deleted source leaves no module behind. */
async function buildServer(): Promise<number> {
  const esbuild = await import('esbuild');
  mkdirSync(DIST, { recursive: true });
  for (const entry of readdirSync(DIST)) {
    if (entry !== 'web' && entry !== '.build-state.json') rmSync(join(DIST, entry), { recursive: true });
  }
  const entryPoints = serverSources();
  await esbuild.build({
    absWorkingDir: ROOT,
    entryPoints,
    outdir: DIST,
    outbase: SRC,
    format: 'esm',
    platform: 'node',
    // The oldest Node the service still runs on (package.json engines lists the supported ones).
    target: 'node20',
    logLevel: 'warning',
  });
  for (const file of serverData()) {
    const out = join(DIST, relative(SRC, file));
    mkdirSync(dirname(out), { recursive: true });
    copyFileSync(file, out);
  }
  return entryPoints.length;
}

export interface BuildOptions {
  /** Rebuild only the parts whose inputs changed; the site without its contract type check. */
  ifStale?: boolean;
  log?: (line: string) => void;
}

/** Builds what is needed; returns the parts built. */
export async function build(opts: BuildOptions = {}): Promise<Part[]> {
  const log = opts.log ?? (() => {});
  const state = readState();
  const built: Part[] = [];
  // The contract first: the site's type check and the client's declarations are made from it.
  if (!opts.ifStale) await generateApiTypes();
  const serverHash = inputHash('server');
  const serverCurrent = isCurrent('server', serverHash, state);
  if (!opts.ifStale || !serverCurrent) {
    const started = Date.now();
    const files = await buildServer();
    state.server = serverHash;
    built.push('server');
    log(`build: server, ${files} modules in ${Date.now() - started} ms`);
  }
  if (!opts.ifStale) {
    emitClientDeclarations();
    log('build: client declarations in dist/client');
  }
  const webHash = inputHash('web');
  const webCurrent = isCurrent('web', webHash, state);
  if (!opts.ifStale || !webCurrent) {
    const started = Date.now();
    if (!opts.ifStale) typecheckSite();
    const { assets } = await bundleSite({ prune: !opts.ifStale });
    state.web = webHash;
    built.push('web');
    log(`build: site, ${assets.join(', ')} in ${Date.now() - started} ms`);
  }
  if (built.length > 0) writeFileSync(STATE_FILE, `${JSON.stringify(state, null, 2)}\n`);
  return built;
}

async function main(args: string[]): Promise<void> {
  if (args.includes('--api-types')) {
    await generateApiTypes();
    console.log(`build: API types written to ${relative(ROOT, API_TYPES)}`);
    return;
  }
  await build({ ifStale: args.includes('--if-stale'), log: (line) => console.log(line) });
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main(process.argv.slice(2)).then(
    // The app built for the API types may leave background work (timers) behind.
    () => process.exit(0),
    (err: unknown) => {
      console.error(`build: ${err instanceof Error ? err.message : String(err)}`);
      process.exit(1);
    },
  );
}
