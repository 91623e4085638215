/**
 * Parses a relay list in a worker thread (relay-list-worker.ts) and rebuilds
 * the index it sends back over the very arrays it built. The body goes to the
 * worker as bytes, moved rather than copied when it owns its memory, so the
 * list never becomes a string on the main thread. One short-lived worker per
 * parse: a parse happens at start and once a day, and a thread that exits
 * frees its JavaScript heap.
 *
 * The promise settles once the thread has exited, and only through the
 * promise: a body that is not the list rejects with ListFormatError, as the
 * in-thread parser throws; a worker that cannot start, crashes or exits
 * without an answer rejects with an Error saying so; an abort
 * (ListSource.close()) terminates the worker and rejects with the signal's
 * reason.
 */
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ListFormatError } from './csv.js';
import type { ParsedList } from './list-source.js';
import { startModuleWorker } from './module-worker.js';
import { RelayIndex } from './relay-index.js';
import type { ParseReply, ParseRequest, RelayListFormat } from './relay-list-worker.js';

const WORKER = new URL(`./relay-list-worker${extname(fileURLToPath(import.meta.url))}`, import.meta.url);

let running = 0;

/** Parse workers started and not yet exited (for the tests that check close() leaves none). */
export function relayParseWorkersRunning(): number {
  return running;
}

/**
 * Parses `body` off the main thread. The caller gives `body` up: when it owns
 * its whole ArrayBuffer, that buffer is transferred and reads as empty here
 * afterwards. `entry` replaces the worker module (tests start broken ones).
 */
export function parseRelayList(
  format: RelayListFormat,
  body: Uint8Array,
  signal?: AbortSignal,
  entry: URL = WORKER,
): Promise<ParsedList<RelayIndex>> {
  return new Promise((resolve, reject) => {
    signal?.throwIfAborted();
    const { bytes, transfer } = forTransfer(body);
    const request: ParseRequest = { format, body: bytes };
    const worker = startModuleWorker(entry, request, transfer);
    running++;
    let answer: ParsedList<RelayIndex> | undefined;
    let failure: { error: unknown } | undefined;
    // Settled on 'exit', once the thread is gone: its memory is freed, and close() leaves nothing running.
    const onAbort = () => {
      failure = { error: signal?.reason };
      void worker.terminate();
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    worker.on('message', (reply: ParseReply) => {
      if (answer || failure) return;
      try {
        answer = fromReply(reply);
      } catch (err) {
        failure = { error: err };
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
      if (failure) reject(failure.error);
      else if (answer) resolve(answer);
      else reject(new Error(`relay list parser exited (${code}) without an answer`));
    });
  });
}

function fromReply(reply: ParseReply): ParsedList<RelayIndex> {
  if (!reply.ok) throw reply.formatError ? new ListFormatError(reply.message) : new Error(reply.message);
  const { index, entries, skipped, problems } = reply;
  return { data: RelayIndex.fromTransferable(index), entries, skipped, problems };
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
