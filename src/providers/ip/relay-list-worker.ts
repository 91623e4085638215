/**
 * Worker thread entry: turns one relay list (the iCloud Private Relay geofeed
 * or the Tor exit list) into its index file (relay-index-file.ts) in the list
 * cache directory, and answers with the file's path; the main thread reads
 * the index from there. Off the main thread, so the service's heap never holds
 * the 12 MB body as a string, its lines or the parse's arrays (V8 keeps old
 * space it grew to), and its event loop is not blocked for the ~0.7 s the
 * parse takes; this thread's memory is freed when it exits.
 *
 * The file is named by the list's content: when another process of the
 * machine (or this one, before a restart) already wrote it, it is used as it
 * is and the list is not even parsed. Another process may also remove it
 * (one that no longer uses it cleans up) between this thread's answer and the
 * main thread opening it: the main thread then answers 'again' and the file is
 * placed anew. Without a directory, when the file cannot be written, or after
 * placing it PLACEMENTS times in vain, the index comes back in memory, its
 * bytes transferred rather than copied.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { type MessagePort, parentPort, workerData } from 'node:worker_threads';
import { writeFileAtomically } from './atomic-file.js';
import { ListFormatError } from './csv.js';
import { parseExitList, parseGeofeed } from './relay-index.js';
import { encodeRelayIndex, RelayIndexFile, relayIndexFileName } from './relay-index-file.js';
import { openIndexFile } from './segment-file.js';

export type RelayListFormat = 'geofeed' | 'tor-exits';

export interface ParseRequest {
  format: RelayListFormat;
  /** The list as downloaded or read, UTF-8. */
  body: Uint8Array;
  /** Where the index file goes and the first part of its name (the provider); undefined: send the index back. */
  store: { dir: string; prefix: string } | undefined;
}

export type ParseReply =
  /** The index is in this file (reused: it was there already); the main thread answers with a ParseAck. */
  | { ok: true; path: string; reused: boolean }
  /** The index itself, its ArrayBuffer transferred; writeError: why it is not in a file, when it was meant to be. */
  | { ok: true; index: Uint8Array; writeError: string | undefined }
  /** formatError: the body is not the list (ListFormatError), as opposed to a failure of the parser itself. */
  | { ok: false; message: string; formatError: boolean };

/** The main thread's answer to a path: opened it ('done'), or could not (gone, unreadable): place it 'again'. */
export type ParseAck = 'done' | 'again';

/** Times the file is placed for a main thread that cannot open it, before the index is sent in memory. */
const PLACEMENTS = 3;

const PARSERS = { geofeed: parseGeofeed, 'tor-exits': parseExitList } as const;

/** The index file's bytes; throws ListFormatError for a body that is not the list. */
export function encodeRelayList(format: RelayListFormat, body: Uint8Array): Buffer {
  const text = Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8');
  const { index, report } = PARSERS[format](text);
  return encodeRelayIndex(index, report);
}

type Port = Pick<MessagePort, 'postMessage' | 'once'>;

/** Places the index and answers on `port` until the main thread has it (exported for the tests that drive it). */
export async function answer(port: Port, { format, body, store }: ParseRequest): Promise<void> {
  let encoded: Buffer | undefined;
  const encode = () => {
    encoded ??= encodeRelayList(format, body);
    return encoded;
  };
  try {
    if (store === undefined) return send(port, inMemory(encode(), undefined));
    const path = join(store.dir, relayIndexFileName(store.prefix, format, body));
    for (let placed = 0; ; placed++) {
      const reply =
        placed < PLACEMENTS
          ? place(path, encode)
          : inMemory(encode(), `the index file could not be opened after ${PLACEMENTS} attempts`);
      send(port, reply);
      if (!('path' in reply)) return;
      const ack = await new Promise<ParseAck>((resolve) => port.once('message', resolve));
      if (ack === 'done') return;
    }
  } catch (err) {
    send(port, {
      ok: false,
      message: messageOf(err),
      formatError: err instanceof ListFormatError,
    });
  }
}

/** The file at `path` when it is a whole index already, else the index written there. */
function place(path: string, encode: () => Buffer): ParseReply {
  const existing = openIndexFile(path, { maxBytes: 0 }, (file) => new RelayIndexFile(file));
  if (existing) {
    existing.close();
    return { ok: true, path, reused: true };
  }
  const index = encode();
  try {
    // A file there is not a whole index: replace it. None: link, keeping one another process placed meanwhile.
    const written = writeFileAtomically(path, index, { replace: existsSync(path) });
    return { ok: true, path, reused: written === 'exists' };
  } catch (err) {
    return inMemory(index, messageOf(err));
  }
}

function inMemory(index: Buffer, writeError: string | undefined): ParseReply {
  return { ok: true, index, writeError };
}

function send(port: Port, reply: ParseReply): void {
  // Buffer.alloc of the index's size owns its ArrayBuffer (never the shared pool): transferring it moves only the index.
  port.postMessage(reply, 'index' in reply ? [reply.index.buffer as ArrayBuffer] : []);
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

if (parentPort) void answer(parentPort, workerData as ParseRequest);
