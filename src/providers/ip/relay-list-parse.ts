/**
 * Parses a relay list in a worker thread (relay-list-worker.ts) and opens the
 * index it placed in the cache directory, or the one it sent back in memory.
 * The body goes to the worker as bytes, moved rather than copied when it owns
 * its memory, so the list never becomes a string on the main thread. One
 * short-lived worker per parse: a parse happens at start and once a day, and
 * a thread that exits frees its JavaScript heap.
 *
 * The promise settles once the thread has exited, and only through the
 * promise: a body that is not the list rejects with ListFormatError, as the
 * in-thread parser throws; a worker that cannot start, crashes or exits
 * without an answer rejects with an Error saying so; an abort
 * (ListSource.close()) terminates the worker, closes an index already opened
 * and rejects with the signal's reason.
 */
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BlockFile, type BlockFileOptions } from './block-file.js';
import { ListFormatError } from './csv.js';
import type { ParsedList } from './list-source.js';
import { startModuleWorker } from './module-worker.js';
import { RelayIndexFile } from './relay-index-file.js';
import type { ParseAck, ParseReply, ParseRequest, RelayListFormat } from './relay-list-worker.js';
import { openIndexFile } from './segment-file.js';

const WORKER = new URL(`./relay-list-worker${extname(fileURLToPath(import.meta.url))}`, import.meta.url);

/**
 * The index file's read cache. A lookup in Apple's list binary-searches ~18
 * records; the first ten levels of the search are the same ~1 000 records for
 * every address, which this keeps cached, and the last few blocks come from
 * the page cache.
 */
export const RELAY_INDEX_BLOCKS: BlockFileOptions = { maxBytes: 1024 * 1024 };

export interface ParseRelayListOptions {
  /** Where the index file goes and the first part of its name; undefined: the index is kept in memory. */
  store?: { dir: string; prefix: string } | undefined;
  /** The index file's read cache; default RELAY_INDEX_BLOCKS. */
  blocks?: BlockFileOptions;
  signal?: AbortSignal | undefined;
  /** Replaces the worker module (tests start broken ones). */
  entry?: URL;
}

export interface ParsedRelayList extends ParsedList<RelayIndexFile> {
  /** The index file read, or undefined for an index in memory. */
  path: string | undefined;
  /** reused: the file was there; written: this parse wrote it; memory: no file (see writeError). */
  origin: 'reused' | 'written' | 'memory';
  /** Why the index is in memory although a directory was given. */
  writeError: string | undefined;
}

let running = 0;

/** Parse workers started and not yet exited (for the tests that check close() leaves none). */
export function relayParseWorkersRunning(): number {
  return running;
}

/**
 * Parses `body` off the main thread. The caller gives `body` up: when it owns
 * its whole ArrayBuffer, that buffer is transferred and reads as empty here
 * afterwards.
 */
export function parseRelayList(
  format: RelayListFormat,
  body: Uint8Array,
  opts: ParseRelayListOptions = {},
): Promise<ParsedRelayList> {
  const { store, signal, blocks = RELAY_INDEX_BLOCKS, entry = WORKER } = opts;
  return new Promise((resolve, reject) => {
    signal?.throwIfAborted();
    const { bytes, transfer } = forTransfer(body);
    const request: ParseRequest = { format, body: bytes, store };
    const worker = startModuleWorker(entry, request, transfer);
    running++;
    let answer: ParsedRelayList | undefined;
    let failure: { error: unknown } | undefined;
    // Settled on 'exit', once the thread is gone: its memory is freed, and close() leaves nothing running.
    const onAbort = () => {
      failure = { error: signal?.reason };
      void worker.terminate();
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    const ack = (value: ParseAck) => worker.postMessage(value);
    worker.on('message', (reply: ParseReply) => {
      if (answer || failure) return;
      try {
        if (!reply.ok)
          throw reply.formatError ? new ListFormatError(reply.message) : new Error(reply.message);
        if ('path' in reply) {
          // Gone (another process removed it as unused) or unreadable since the worker placed it: again.
          const index = openIndexFile(reply.path, blocks, (file) => new RelayIndexFile(file));
          if (!index) {
            ack('again');
            return;
          }
          answer = parsed(index, reply.path, reply.reused ? 'reused' : 'written', undefined);
          ack('done');
        } else {
          const { buffer, byteOffset, byteLength } = reply.index;
          const index = new RelayIndexFile(BlockFile.fromBuffer(Buffer.from(buffer, byteOffset, byteLength)));
          answer = parsed(index, undefined, 'memory', reply.writeError);
        }
      } catch (err) {
        failure = { error: err };
        void worker.terminate(); // it may be waiting for an answer to a path
      }
    });
    worker.on('messageerror', (err) => {
      failure ??= { error: err };
      void worker.terminate();
    });
    worker.on('error', (err) => {
      failure ??= { error: err };
    });
    worker.on('exit', (code) => {
      running--;
      signal?.removeEventListener('abort', onAbort);
      if (failure) {
        answer?.data.close();
        reject(failure.error);
      } else if (answer) resolve(answer);
      else reject(new Error(`relay list parser exited (${code}) without an answer`));
    });
  });
}

function parsed(
  index: RelayIndexFile,
  path: string | undefined,
  origin: ParsedRelayList['origin'],
  writeError: string | undefined,
): ParsedRelayList {
  const { entries, skipped, problems } = index.report;
  return { data: index, entries, skipped, problems, path, origin, writeError };
}

/**
 * Moves the body's buffer when the body is all of it. A Buffer that is a
 * slice of another (Node's pool for small Buffers, which is not transferable,
 * or a view into a larger read) is copied: moving its buffer would take the
 * other slices' memory with it.
 */
function forTransfer(body: Uint8Array): { bytes: Uint8Array; transfer: ArrayBuffer[] } {
  const { buffer } = body;
  if (buffer instanceof ArrayBuffer && body.byteOffset === 0 && body.byteLength === buffer.byteLength)
    return { bytes: body, transfer: [buffer] };
  const copy = new Uint8Array(body);
  return { bytes: copy, transfer: [copy.buffer] };
}
