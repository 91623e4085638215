/**
 * Finds or builds the ASN index for a set of CSV files. The index lives in
 * the data cache directory (LIST_CACHE_DIR), named by a hash of the sources'
 * paths, sizes and modification times, so every process on the machine and
 * every restart reuses the one a first process built, and a new data release
 * (npm update) gets a new one. Building runs in a worker thread
 * (asn-index-worker.ts), in one process at a time (a lock file; the others
 * wait for its index). When the directory cannot be written, the index the
 * worker built is served from memory: degraded (each process holds its ~10 MB)
 * but working, and the caller says so.
 */
import { createHash } from 'node:crypto';
import { mkdir, stat, unlink, writeFile } from 'node:fs/promises';
import { dirname, extname, join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { AsnIndex } from './asn-index.js';
import type { BuildReply, BuildRequest } from './asn-index-worker.js';
import { BlockFile, type BlockFileOptions } from './block-file.js';
import { startModuleWorker } from './module-worker.js';
import { openIndexFile } from './segment-file.js';

/**
 * Part of the file name: bump it when the parse or the overlap resolution
 * (asn-table.ts, range-table.ts) changes what an index holds, so no process
 * reuses an index built by the old rules.
 */
const BUILD_RULES = 'NDASNIX1/1';

/** A build takes about a second; a lock older than this was left by a builder that died. */
const LOCK_STALE_MS = 30_000;
/** How long a process waits for another's build before building itself. */
const LOCK_WAIT_MS = 60_000;
const LOCK_POLL_MS = 100;

export interface OpenAsnIndexOptions {
  /** ASN CSV files (IPv4 and IPv6 ranges go into one index). */
  sources: readonly string[];
  /** Where indexes are kept; undefined: build into memory. */
  cacheDir: string | undefined;
  /** Cache bounds for the index file's reader. */
  blocks?: BlockFileOptions;
  signal?: AbortSignal;
}

export interface OpenedAsnIndex {
  index: AsnIndex;
  /** reused: an index file was there; built: this process wrote it; memory: it could not be written. */
  origin: 'reused' | 'built' | 'memory';
  /** The index file, when there is one. */
  path: string | undefined;
  /** Why the index could not be written (origin 'memory' with a cache directory). */
  writeError: string | undefined;
}

export async function openAsnIndex(opts: OpenAsnIndexOptions): Promise<OpenedAsnIndex> {
  const { sources, cacheDir, blocks, signal } = opts;
  const path = cacheDir === undefined ? undefined : join(cacheDir, await asnIndexFileName(sources));
  let locked = false;
  try {
    if (path !== undefined) {
      // Another process building this index: wait for its file rather than build a second copy at once.
      for (const deadline = Date.now() + LOCK_WAIT_MS; ; ) {
        const index = openIndexFile(path, blocks, (file) => new AsnIndex(file));
        if (index) return { index, origin: 'reused', path, writeError: undefined };
        const lock = await takeLock(`${path}.lock`);
        locked = lock === 'taken';
        if (locked) {
          // The builder before us may have renamed its index into place and dropped its lock
          // between our look and our lock: look again before building a second copy.
          const built = openIndexFile(path, blocks, (file) => new AsnIndex(file));
          if (built) return { index: built, origin: 'reused', path, writeError: undefined };
        }
        if (lock !== 'held' || Date.now() >= deadline) break;
        await sleep(LOCK_POLL_MS, undefined, { signal }).catch(() => signal?.throwIfAborted());
      }
    }
    const reply = await runAsnIndexWorker({ sources, output: path }, signal);
    if (reply.written) {
      if (path === undefined) throw new Error('index written without a path'); // the worker writes only where told
      return {
        index: new AsnIndex(BlockFile.open(path, blocks)),
        origin: 'built',
        path,
        writeError: undefined,
      };
    }
    const bytes = Buffer.from(reply.index.buffer, reply.index.byteOffset, reply.index.byteLength);
    return {
      index: new AsnIndex(BlockFile.fromBuffer(bytes)),
      origin: 'memory',
      path,
      writeError: reply.writeError,
    };
  } finally {
    if (locked && path !== undefined) await unlink(`${path}.lock`).catch(() => {});
  }
}

/**
 * One builder per machine, not one per worker process: the lock is a file
 * created exclusively. It only saves work and memory (a build peaks at
 * ~190 MB): when it fails (a stale lock taken over twice, a wait that runs
 * out), two builders rename identical files over each other, which is
 * harmless. A directory where the lock cannot be created is one where the
 * index cannot be written either: build (into memory) without it.
 */
async function takeLock(lock: string): Promise<'taken' | 'held' | 'unavailable'> {
  try {
    await mkdir(dirname(lock), { recursive: true });
    await writeFile(lock, `${process.pid}\n`, { flag: 'wx' });
    return 'taken';
  } catch (err) {
    if ((err as { code?: unknown }).code !== 'EEXIST') return 'unavailable';
  }
  try {
    // A builder that died leaves its lock: past LOCK_STALE_MS it is removed, and the next poll takes it.
    if (Date.now() - (await stat(lock)).mtimeMs > LOCK_STALE_MS) await unlink(lock);
  } catch {
    // Gone meanwhile: the next poll finds the index or takes the lock.
  }
  return 'held';
}

/** asn-index-<hash>.bin; a source that cannot be stat'ed fails here, as its read would. */
export async function asnIndexFileName(sources: readonly string[]): Promise<string> {
  const hash = createHash('sha256').update(BUILD_RULES);
  for (const source of sources) {
    const { size, mtimeMs } = await stat(source);
    hash.update(JSON.stringify([resolve(source), size, mtimeMs]));
  }
  return `asn-index-${hash.digest('hex').slice(0, 16)}.bin`;
}

const WORKER = new URL(`./asn-index-worker${extname(fileURLToPath(import.meta.url))}`, import.meta.url);

/** Runs the builder worker (exported for the tests that race it). */
export function runAsnIndexWorker(
  request: BuildRequest,
  signal: AbortSignal | undefined,
): Promise<Extract<BuildReply, { ok: true }>> {
  return new Promise((resolvePromise, reject) => {
    signal?.throwIfAborted();
    const worker = startModuleWorker(WORKER, request);
    let settled = false;
    const settle = (fn: () => void) => {
      if (settled) return;
      settled = true;
      signal?.removeEventListener('abort', onAbort);
      fn();
    };
    const onAbort = () => {
      settle(() => reject(signal?.reason));
      void worker.terminate();
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    worker.on('message', (reply: BuildReply) => {
      if (reply.ok) settle(() => resolvePromise(reply));
      else settle(() => reject(Object.assign(new Error(reply.message), { code: reply.code })));
    });
    worker.on('error', (err) => settle(() => reject(err)));
    worker.on('exit', (code) =>
      settle(() => reject(new Error(`ASN index worker exited (${code}) without an answer`))),
    );
  });
}
