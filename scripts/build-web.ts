/**
 * The site (src/web) → dist/web, which src/features/site serves. scripts/build.ts calls
 * these: the full build generates the client's API types from /openapi.json and
 * type-checks the client against them before bundling; a stale-only rebuild just bundles.
 *
 * The client's API types are generated from the document the app itself serves, never
 * written by hand, so a contract change that the site does not follow fails the client
 * type check (and so the build and CI). The generated file is build output (gitignored),
 * not a second copy of the contract to keep in step.
 *
 * Output: dist/web/index.html (served with `no-cache`) and dist/web/assets/ (content-hashed
 * names, served as immutable), each text file also written pre-compressed (.br, .gz) so
 * the server sends compressed bytes without compressing per request. index.html is
 * written last and atomically, so a concurrent build never leaves a page that names
 * assets not yet written.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { basename, extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, gzipSync, constants as zlib } from 'node:zlib';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const WEB_SRC = join(ROOT, 'src/web');
export const WEB_OUT = join(ROOT, 'dist/web');
export const ASSETS_OUT = join(WEB_OUT, 'assets');
export const API_TYPES = join(WEB_SRC, 'api/openapi.gen.d.ts');

/** Browsers the bundle is written for: those with ES2022 syntax and the CSS the site uses (2023 on). */
const TARGETS = ['es2022', 'chrome111', 'edge111', 'firefox113', 'safari16.4'];

function hashName(name: string, content: Buffer): string {
  const hash = createHash('sha256').update(content).digest('hex').slice(0, 10);
  return `${basename(name, extname(name))}-${hash}${extname(name)}`;
}

/**
 * Text worth compressing is written beside itself as .br and .gz at the strongest
 * settings: it is done once per build, and @fastify/static (preCompressed) then serves
 * whichever the client accepts. The icon is SVG, text too.
 */
const COMPRESSIBLE = new Set(['.js', '.css', '.svg', '.html']);

function writePrecompressed(path: string, content: Buffer): string[] {
  if (!COMPRESSIBLE.has(extname(path))) return [];
  const br = brotliCompressSync(content, {
    params: {
      [zlib.BROTLI_PARAM_QUALITY]: zlib.BROTLI_MAX_QUALITY,
      [zlib.BROTLI_PARAM_SIZE_HINT]: content.length,
    },
  });
  const gz = gzipSync(content, { level: zlib.Z_BEST_COMPRESSION });
  writeAtomically(`${path}.br`, br);
  writeAtomically(`${path}.gz`, gz);
  return [`${basename(path)}.br`, `${basename(path)}.gz`];
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
  const written = [...assets];
  for (const name of assets) {
    const path = join(ASSETS_OUT, name);
    written.push(...writePrecompressed(path, readFileSync(path)));
  }
  const indexPath = join(WEB_OUT, 'index.html');
  writePrecompressed(indexPath, Buffer.from(html));
  writeAtomically(indexPath, html);

  // Old hashed files stay by default: a page loaded before a deploy may still ask for them.
  // A full build prunes them so dist/web holds exactly one version.
  if (opts.prune) {
    for (const name of readdirSync(ASSETS_OUT)) {
      if (!written.includes(name)) unlinkSync(join(ASSETS_OUT, name));
    }
  }
  return { assets };
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
export function typecheckClient(): void {
  const tsc = join(ROOT, 'node_modules/typescript/bin/tsc');
  const run = spawnSync(process.execPath, [tsc, '--noEmit', '-p', join(WEB_SRC, 'tsconfig.json')], {
    stdio: 'inherit',
  });
  if (run.status !== 0) throw new Error('the client does not type-check against the API contract');
}
