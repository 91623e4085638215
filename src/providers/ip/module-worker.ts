/**
 * Starts a worker thread on one of the service's own modules, whether the
 * service runs as compiled JavaScript or from its TypeScript source (tsx in
 * production, vitest in tests).
 *
 * From source, the worker needs a TypeScript loader, and inheriting the
 * parent's does not give it one: on Node 20 a worker started on a .ts file
 * fails with "Unknown file extension" even with tsx's --import in its
 * execArgv, and vitest's module runner is not a Node loader at all. So a .ts
 * entry is imported through tsx's own API, tsImport
 * (https://tsx.is/node/ts-import), which loads one TypeScript module graph
 * without registering a loader for the whole thread.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';

/** `transferList`: ArrayBuffers in workerData to move to the worker rather than copy (detached here). */
export function startModuleWorker(
  entry: URL,
  workerData: unknown,
  transferList: readonly ArrayBuffer[] = [],
): Worker {
  const options = { workerData, transferList: [...transferList] };
  if (!entry.pathname.endsWith('.ts')) return new Worker(entry, options);
  const code = `import(${JSON.stringify(tsxApiUrl())}).then((tsx) => tsx.tsImport(${JSON.stringify(entry.href)}, ${JSON.stringify(entry.href)}))`;
  return new Worker(code, { eval: true, ...options });
}

let tsxApi: string | undefined;

/** The ESM build of tsx's API, as tsx's package.json exports it (require.resolve would give the CommonJS one). */
function tsxApiUrl(): string {
  if (tsxApi) return tsxApi;
  const require = createRequire(import.meta.url);
  const manifest = require.resolve('tsx/package.json');
  const api = (JSON.parse(readFileSync(manifest, 'utf8')) as TsxManifest).exports?.['./esm/api'];
  const target = typeof api === 'object' ? api.import?.default : undefined;
  if (typeof target !== 'string')
    throw new Error('tsx exports no ./esm/api: cannot start a TypeScript worker');
  tsxApi = new URL(target, pathToFileURL(manifest)).href;
  return tsxApi;
}

interface TsxManifest {
  exports?: Record<string, string | { import?: { default?: unknown } } | undefined>;
}
