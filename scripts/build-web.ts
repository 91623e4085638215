/**
 * Builds the site (src/web) into dist/web, which src/features/site serves.
 *
 *   tsx scripts/build-web.ts             full build (npm run build): API types from /openapi.json,
 *                                        client type check against them, then the bundle
 *   tsx scripts/build-web.ts --if-stale  bundle only, and only when dist/web is missing or older
 *                                        than its sources (prestart, pretest: needs esbuild + preact)
 *   tsx scripts/build-web.ts --types     only write src/web/api/openapi.gen.d.ts (npm run typecheck)
 *
 * The client's API types are generated from the document the app itself
 * serves, never written by hand, so a contract change that the site does not
 * follow fails the client type check (and so the build and CI). The generated
 * file is build output (gitignored), not a second copy of the contract to keep
 * in step.
 *
 * Output: dist/web/index.html (served with `no-cache`) and dist/web/assets/
 * (content-hashed names, served as immutable). index.html is written last and
 * atomically, so a concurrent build (test workers) never leaves a page that
 * names assets not yet written.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  existsSync,
  readdirSync,
  readFileSync,
  renameSync,
  statSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { basename, extname, join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const WEB_SRC = join(ROOT, 'src/web');
export const WEB_OUT = join(ROOT, 'dist/web');
export const ASSETS_OUT = join(WEB_OUT, 'assets');
export const API_TYPES = join(WEB_SRC, 'api/openapi.gen.d.ts');

/** Browsers the bundle is written for: those with ES2022 syntax and the CSS the site uses (2023 on). */
const TARGETS = ['es2022', 'chrome111', 'edge111', 'firefox113', 'safari16.4'];

function newestSourceMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestSourceMtime(path));
    else if (path !== API_TYPES) newest = Math.max(newest, statSync(path).mtimeMs);
  }
  return newest;
}

/** True when dist/web/index.html is missing or older than any client source (or this script). */
export function siteIsStale(): boolean {
  const index = join(WEB_OUT, 'index.html');
  if (!existsSync(index)) return true;
  const built = statSync(index).mtimeMs;
  const sources = Math.max(newestSourceMtime(WEB_SRC), statSync(fileURLToPath(import.meta.url)).mtimeMs);
  return sources > built;
}

function hashName(name: string, content: Buffer): string {
  const hash = createHash('sha256').update(content).digest('hex').slice(0, 10);
  return `${basename(name, extname(name))}-${hash}${extname(name)}`;
}

function writeAtomically(path: string, content: string | Buffer): void {
  const tmp = `${path}.${process.pid}.${Date.now()}.tmp`;
  writeFileSync(tmp, content);
  renameSync(tmp, path);
}

export interface BundleResult {
  /** File names under dist/web/assets that index.html references. */
  assets: string[];
}

/** esbuild → dist/web/assets (hashed names) + dist/web/index.html. Needs only esbuild and preact. */
export async function bundleSite(opts: { prune?: boolean } = {}): Promise<BundleResult> {
  const esbuild = await import('esbuild');
  await mkdir(ASSETS_OUT, { recursive: true });
  const result = await esbuild.build({
    absWorkingDir: ROOT,
    entryPoints: { app: join(WEB_SRC, 'main.tsx') },
    bundle: true,
    format: 'esm',
    minify: true,
    target: TARGETS,
    jsx: 'automatic',
    jsxImportSource: 'preact',
    entryNames: '[name]-[hash]',
    outdir: ASSETS_OUT,
    metafile: true,
    logLevel: 'warning',
    // Preact checks NODE_ENV-style flags nowhere, but dependencies may: build for production.
    define: { 'process.env.NODE_ENV': '"production"' },
  });

  const outputs = Object.entries(result.metafile.outputs);
  const js =
    outputs.find(([, o]) => o.entryPoint !== undefined && o.cssBundle !== undefined) ??
    outputs.find(([, o]) => o.entryPoint !== undefined);
  if (!js) throw new Error('esbuild produced no entry output');
  const jsFile = basename(js[0]);
  const cssFile = js[1].cssBundle ? basename(js[1].cssBundle) : undefined;

  const icon = readFileSync(join(WEB_SRC, 'icon.svg'));
  const iconFile = hashName('icon.svg', icon);
  writeFileSync(join(ASSETS_OUT, iconFile), icon);

  const template = readFileSync(join(WEB_SRC, 'index.html'), 'utf8');
  const html = template
    .replaceAll('%APP_JS%', `/assets/${jsFile}`)
    .replaceAll('%APP_CSS%', cssFile ? `/assets/${cssFile}` : '')
    .replaceAll('%ICON%', `/assets/${iconFile}`);
  if (/%[A-Z_]+%/.test(html)) throw new Error('src/web/index.html has a placeholder the build does not fill');

  const assets = [jsFile, iconFile, ...(cssFile ? [cssFile] : [])];
  writeAtomically(join(WEB_OUT, 'index.html'), html);

  // Old hashed files stay by default: a page loaded before a deploy may still ask for them.
  // A full build prunes them so dist/web holds exactly one version.
  if (opts.prune) {
    for (const name of readdirSync(ASSETS_OUT)) {
      if (!assets.includes(name)) unlinkSync(join(ASSETS_OUT, name));
    }
  }
  return { assets };
}

/** Bundles when the output is missing or stale; cheap when it is not. */
export async function ensureSiteBuilt(): Promise<void> {
  if (siteIsStale()) await bundleSite();
}

/** /openapi.json from the app itself (test config: no listener, no network), as TypeScript types. */
export async function generateApiTypes(): Promise<void> {
  const [{ buildApp }, { testConfig }, { default: openapiTS, astToString }, { default: pino }] =
    await Promise.all([
      import('../src/app.js'),
      import('../src/config/index.js'),
      import('openapi-typescript'),
      import('pino'),
    ]);
  // No load shedding: start-up work (databases loading) must not get this one request a 503.
  const app = await buildApp(testConfig({ loadShedEventLoopDelayMs: 0 }), {
    logger: pino({ level: 'silent' }),
  });
  try {
    const res = await app.inject('/openapi.json');
    if (res.statusCode !== 200) throw new Error(`/openapi.json answered ${res.statusCode}`);
    const ast = await openapiTS(res.json());
    const header =
      '// Generated by scripts/build-web.ts from /openapi.json. Do not edit; not committed.\n' +
      '// The client imports its API types from here so the site cannot drift from the contract.\n';
    writeAtomically(API_TYPES, header + astToString(ast));
  } finally {
    await app.close();
  }
}

/** tsc on the client tsconfig (DOM lib, JSX), kept apart from the server's Node-only one. */
function typecheckClient(): void {
  const tsc = join(ROOT, 'node_modules/typescript/bin/tsc');
  const run = spawnSync(process.execPath, [tsc, '--noEmit', '-p', join(WEB_SRC, 'tsconfig.json')], {
    stdio: 'inherit',
  });
  if (run.status !== 0) throw new Error('the client does not type-check against the API contract');
}

async function main(args: string[]): Promise<void> {
  const started = Date.now();
  if (args.includes('--types')) {
    await generateApiTypes();
    console.log(`web: API types written to ${relative(ROOT, API_TYPES)}`);
    return;
  }
  if (args.includes('--if-stale')) {
    if (!siteIsStale()) return;
    const { assets } = await bundleSite();
    console.log(`web: built ${assets.join(', ')} in ${Date.now() - started} ms`);
    return;
  }
  await generateApiTypes();
  typecheckClient();
  const { assets } = await bundleSite({ prune: true });
  console.log(`web: built ${assets.join(', ')} in ${Date.now() - started} ms`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main(process.argv.slice(2)).then(
    // The app's background work (list downloads, timers) must not keep the process alive.
    () => process.exit(0),
    (err: unknown) => {
      console.error(`web: ${err instanceof Error ? err.message : String(err)}`);
      process.exit(1);
    },
  );
}
