/**
 * What each part of the build is made from, and whether dist/ is current: the hash of each
 * part's inputs beside the one dist/.build-state.json recorded when it was built. Plain
 * JavaScript so that ensure-built.mjs answers "current" (every `netdiag` command, every
 * `npm start`) without loading tsx and esbuild; scripts/build.ts reads the same functions.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SRC = join(ROOT, 'src');
export const DIST = join(ROOT, 'dist');
export const STATE_FILE = join(DIST, '.build-state.json');
export const WEB_SRC = join(ROOT, 'src/web');
export const CLIENT_SRC = join(ROOT, 'src/client');
export const API_TYPES = join(CLIENT_SRC, 'openapi.gen.d.ts');

/** Each part's build script: a change to how it is built is a change of the part. */
const BUILDERS = {
  server: [join(ROOT, 'scripts/build.ts'), fileURLToPath(import.meta.url)],
  web: [join(ROOT, 'scripts/build-web.ts'), join(ROOT, 'scripts/build.ts'), fileURLToPath(import.meta.url)],
};

/** What proves a part was built: its entry in dist/. */
const OUTPUTS = { server: join(DIST, 'server.js'), web: join(DIST, 'web/index.html') };

/** @param {string} dir @param {(path: string) => boolean} keep @returns {string[]} */
export function filesUnder(dir, keep) {
  const out = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...filesUnder(path, keep));
    else if (keep(path)) out.push(path);
  }
  return out.sort();
}

/** The server's sources: every .ts under src but the site's. */
export function serverSources() {
  return filesUnder(SRC, (p) => p.endsWith('.ts') && !p.endsWith('.d.ts') && !p.startsWith(WEB_SRC));
}

/**
 * Data files a server module reads relative to itself (the Mark Verifying Authority roots),
 * copied beside the built modules: a production install ships dist/ alone.
 */
export function serverData() {
  // Certificates, and the data files features read beside their modules (blocklists/data/*.json).
  const data = (p) => p.endsWith('.pem') || (p.endsWith('.json') && /[\\/]data[\\/]/.test(p));
  return filesUnder(SRC, (p) => data(p) && !p.startsWith(WEB_SRC));
}

/** @param {'server' | 'web'} part @returns {string[]} */
function inputsOf(part) {
  if (part === 'server') return [...serverSources(), ...serverData(), ...BUILDERS.server];
  // The site bundles the typed client: a change there is a change of the site.
  const source = (p) => p !== API_TYPES;
  return [...filesUnder(WEB_SRC, source), ...filesUnder(CLIENT_SRC, source), ...BUILDERS.web];
}

/** @param {'server' | 'web'} part @returns {string} */
export function inputHash(part) {
  const hash = createHash('sha256');
  for (const file of inputsOf(part))
    hash.update(relative(ROOT, file)).update('\0').update(readFileSync(file));
  return hash.digest('hex');
}

/** @returns {Partial<Record<'server' | 'web', string>>} */
export function readState() {
  try {
    return JSON.parse(readFileSync(STATE_FILE, 'utf8'));
  } catch {
    return {};
  }
}

/** @param {'server' | 'web'} part @param {string} hash */
export function isCurrent(part, hash, state = readState()) {
  return state[part] === hash && existsSync(OUTPUTS[part]);
}
