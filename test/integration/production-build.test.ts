/**
 * `npm install --omit=dev` + `node dist/server.js` is the production install
 * (docs/operations.md): the compiled server may import only Node's own modules
 * and packages listed in `dependencies`. .ci/run also performs such an install
 * for real (scripts/production-smoke.sh); this catches the mistake without the
 * registry, in every `npm test`.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = new URL('../../', import.meta.url);
const DIST = new URL('dist/', ROOT).pathname;
const pkg = JSON.parse(readFileSync(new URL('package.json', ROOT), 'utf8')) as {
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
};

function serverModules(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'web' && dir === DIST ? [] : serverModules(path);
    return path.endsWith('.js') ? [path] : [];
  });
}

// esbuild starts every static import or re-export on its own line (`import {…} from "x"`, `import "x"`)
// and keeps dynamic `import("x")` as written.
const SPECIFIER =
  /^(?:import|export)\b[^;"]*?\bfrom\s*"([^"]+)"|^import\s*"([^"]+)"|\bimport\(\s*"([^"]+)"\s*\)/gm;

function packageOf(specifier: string): string | undefined {
  if (specifier.startsWith('.') || specifier.startsWith('node:') || builtinModules.includes(specifier))
    return undefined;
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
}

describe('the production build', () => {
  it('dist/ holds the compiled server', () => {
    expect(serverModules(DIST).map((p) => p.slice(DIST.length))).toEqual(
      expect.arrayContaining(['server.js', 'app.js', 'config/index.js']),
    );
  });

  it('imports only production dependencies', () => {
    const used = new Map<string, string>();
    for (const file of serverModules(DIST)) {
      for (const match of readFileSync(file, 'utf8').matchAll(SPECIFIER)) {
        const name = packageOf(match[1] ?? match[2] ?? match[3] ?? '');
        if (name !== undefined) used.set(name, file.slice(DIST.length));
      }
    }
    expect(used.size).toBeGreaterThan(10);
    const missing = [...used].filter(([name]) => pkg.dependencies[name] === undefined);
    expect(missing, 'imported by dist/ but not in dependencies').toEqual([]);
  });

  it('ships no compiler or bundler as a production dependency', () => {
    for (const tool of ['tsx', 'esbuild', 'typescript', 'vitest', 'preact']) {
      expect(pkg.dependencies[tool], tool).toBeUndefined();
    }
  });
});
