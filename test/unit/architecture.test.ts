/**
 * The shape docs/architecture.md describes, held by the tree itself: sockets and
 * raw HTTP only in src/net/ and src/providers/ (so outbound safety cannot be
 * bypassed by a feature), layers that point one way (§2), routes that only route
 * (providers are built and closed by providers/plugins.ts), and files that hold
 * one idea.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, posix, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SRC = join(ROOT, 'src');

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return /\.tsx?$/.test(entry.name) && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

const files = sources(SRC).map((path) => ({
  path: relative(ROOT, path).replaceAll('\\', '/'),
  text: readFileSync(path, 'utf8'),
}));

const SOCKET_MODULES = ['undici', 'tls', 'net', 'dns', 'dgram', 'http2'];
const IMPORT =
  /^\s*(?:import|export)\b[^'"]*?\bfrom\s+['"]([^'"]+)['"]|^\s*import\s+['"]([^'"]+)['"]|\bimport\(\s*['"]([^'"]+)['"]\s*\)/gm;

function imports(text: string): string[] {
  return [...text.matchAll(IMPORT)].map((m) => m[1] ?? m[2] ?? m[3] ?? '');
}

const byPath = new Map(files.map((f) => [f.path, f]));

/** The file under src/ a relative import names (`../errors.js` → `src/errors.ts`), or undefined. */
function resolveImport(from: string, spec: string): string | undefined {
  if (!spec.startsWith('.')) return undefined;
  const base = posix.normalize(posix.join(dirname(from), spec)).replace(/\.js$/, '');
  return [`${base}.ts`, `${base}.tsx`].find((path) => byPath.has(path));
}

/** `from imports to` for every import of `path` that resolves to a file under src/, types included. */
function ownImports(path: string): { from: string; to: string }[] {
  return imports(byPath.get(path)?.text ?? '').flatMap((spec) => {
    const to = resolveImport(path, spec);
    return to === undefined ? [] : [{ from: path, to }];
  });
}

/** Every file under src/ that `path` reaches through its imports, with the first edge that reached it. */
function reachable(path: string): Map<string, string> {
  const reached = new Map<string, string>();
  const queue = [path];
  for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
    for (const { from, to } of ownImports(next)) {
      if (reached.has(to) || to === path) continue;
      reached.set(to, `${from} imports ${to}`);
      queue.push(to);
    }
  }
  return reached;
}

describe('architecture', () => {
  it('finds the sources it checks', () => {
    expect(files.length).toBeGreaterThan(100);
    expect(files.some((f) => f.path === 'src/net/safe-http.ts')).toBe(true);
  });

  it('imports undici, node:tls, node:net, node:dns, node:dgram and node:http2 only in src/net/ and src/providers/', () => {
    const offenders = files
      .filter((f) => !f.path.startsWith('src/net/') && !f.path.startsWith('src/providers/'))
      .flatMap((f) =>
        imports(f.text)
          .filter((spec) => SOCKET_MODULES.includes(spec.replace(/^node:/, '')))
          .map((spec) => `${f.path} imports ${spec}`),
      );
    expect(offenders).toEqual([]);
  });

  // src/client runs in browsers and in Node (the site bundles it, the CLI imports it): nothing
  // of Node's, the DOM's framework or the server's may come in.
  it('keeps src/client to itself and openapi-fetch, and the site and the CLI on its one Tone', () => {
    const outside = files
      .filter((f) => f.path.startsWith('src/client/'))
      .flatMap((f) =>
        imports(f.text)
          .filter((spec) => !spec.startsWith('./') && spec !== 'openapi-fetch')
          .map((spec) => `${f.path} imports ${spec}`),
      );
    expect(outside).toEqual([]);
    const ownTone = files
      .filter((f) => !f.path.startsWith('src/client/') && /^export type Tone\s*=/m.test(f.text))
      .map((f) => f.path);
    expect(ownTone).toEqual([]);
  });

  // Layers point one way (docs/architecture.md §2): the safety layer stands below the
  // providers and the features (what both sides share lives in net/ or in src/errors.ts,
  // which stands below every layer), a cross-cutting plugin knows no feature, and the CLI
  // reaches the app through buildApp and the tools, never through an adapter.
  it('keeps src/net/, through everything it imports, free of src/providers/ and src/features/', () => {
    const offenders = files
      .filter((f) => f.path.startsWith('src/net/'))
      .flatMap((f) =>
        [...reachable(f.path)]
          .filter(([to]) => to.startsWith('src/providers/') || to.startsWith('src/features/'))
          .map(([to, edge]) => `${f.path} reaches ${to} (${edge})`),
      );
    expect(offenders).toEqual([]);
    expect(ownImports('src/errors.ts')).toEqual([]);
  });

  it('loads the MCP SDK and zod on the first /mcp request, not at start (static imports from app.ts and server.ts)', () => {
    const STATIC = /^\s*import\s+(?!type\b)[^'"]*?\bfrom\s+['"]([^'"]+)['"]|^\s*import\s+['"]([^'"]+)['"]/gm;
    // The families' modules are imported as buildApp registers them, all of them in the server: for
    // these two registries a dynamic import is a start-up import.
    const REGISTRIES = ['src/features/index.ts', 'src/providers/plugins.ts'];
    const DYNAMIC = /\bimport\(\s*['"]([^'"]+)['"]\s*\)/g;
    const staticImports = (path: string) => {
      const text = byPath.get(path)?.text ?? '';
      return [
        ...[...text.matchAll(STATIC)].map((m) => m[1] ?? m[2] ?? ''),
        ...(REGISTRIES.includes(path) ? [...text.matchAll(DYNAMIC)].map((m) => m[1] ?? '') : []),
      ];
    };
    const seen = new Set<string>();
    const offenders: string[] = [];
    const queue = ['src/server.ts', 'src/app.ts'];
    for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
      if (seen.has(next)) continue;
      seen.add(next);
      for (const spec of staticImports(next)) {
        if (/^@modelcontextprotocol\/|^zod(\/|$)/.test(spec)) offenders.push(`${next} imports ${spec}`);
        const to = resolveImport(next, spec);
        if (to !== undefined) queue.push(to);
      }
    }
    expect(seen.has('src/features/mcp/mcp.route.ts')).toBe(true);
    expect(offenders).toEqual([]);
  });

  it('keeps src/plugins/ from importing src/features/', () => {
    const edges = files
      .filter((f) => f.path.startsWith('src/plugins/'))
      .flatMap((f) => ownImports(f.path))
      .filter(({ to }) => to.startsWith('src/features/'))
      .map(({ from, to }) => `${from} imports ${to}`);
    expect(edges).toEqual([]);
  });

  it('has one onRequest hook, the request checks', () => {
    const hooks = files
      .filter((f) => f.path.startsWith('src/'))
      .flatMap((f) => (f.text.match(/addHook\(\s*'onRequest'/g) ?? []).map(() => f.path));
    expect(hooks).toEqual(['src/plugins/request-checks.ts']);
  });

  it('keeps src/cli/ from importing src/providers/', () => {
    const offenders = files
      .filter((f) => f.path.startsWith('src/cli/'))
      .flatMap((f) => ownImports(f.path))
      .filter(({ to }) => to.startsWith('src/providers/'))
      .map(({ from, to }) => `${from} imports ${to}`);
    expect(offenders).toEqual([]);
  });

  it('keeps provider construction and lifecycle out of route files', () => {
    const offenders = files
      .filter((f) => f.path.endsWith('.route.ts'))
      .filter((f) =>
        /registerChain\(|addHook\(\s*'on(Ready|Listen|Close)'|new \w+(Verifier|Database|Geo)\(/.test(f.text),
      )
      .map((f) => f.path);
    expect(offenders).toEqual([]);
  });

  it('sends every cached lookup through answer(), never reply.sendShared from a route', () => {
    const offenders = files.filter((f) => f.path.endsWith('.route.ts') && /\.sendShared\(/.test(f.text));
    expect(offenders.map((f) => f.path)).toEqual([]);
  });

  it('keeps every file under src/ within ~450 lines, or says in its header why it is one file', () => {
    const offenders = files
      .filter((f) => f.text.split('\n').length > 460)
      .filter((f) => !/^\/\*\*[\s\S]*?Why one file:[\s\S]*?\*\//.test(f.text))
      .map((f) => `${f.path} (${f.text.split('\n').length} lines)`);
    expect(offenders).toEqual([]);
  });
});
