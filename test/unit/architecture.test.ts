/**
 * The shape docs/architecture.md describes, held by the tree itself: sockets and
 * raw HTTP only in src/net/ and src/providers/ (so outbound safety cannot be
 * bypassed by a feature), routes that only route (providers are built and closed
 * by providers/plugins.ts), and files that hold one idea.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
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

  it('keeps provider construction and lifecycle out of route files', () => {
    const offenders = files
      .filter((f) => f.path.endsWith('.route.ts'))
      .filter((f) =>
        /registerChain\(|addHook\(\s*'on(Ready|Listen|Close)'|new \w+(Verifier|Database|Geo)\(/.test(f.text),
      )
      .map((f) => f.path);
    expect(offenders).toEqual([]);
  });

  it('keeps every file under src/ within ~450 lines, or says in its header why it is one file', () => {
    const offenders = files
      .filter((f) => f.text.split('\n').length > 460)
      .filter((f) => !/^\/\*\*[\s\S]*?Why one file:[\s\S]*?\*\//.test(f.text))
      .map((f) => `${f.path} (${f.text.split('\n').length} lines)`);
    expect(offenders).toEqual([]);
  });
});
