/**
 * Worker thread entry: decodes and parses one relay list (the iCloud Private
 * Relay geofeed or the Tor exit list) and sends back the finished index, its
 * typed arrays transferred, not copied. Off the main thread, so the service's
 * heap never holds the 12 MB body as a string, its lines or the builder's
 * growing arrays (V8 keeps old space it grew to), and its event loop is not
 * blocked for the ~0.7 s the parse takes; this thread's heap is freed when it
 * exits.
 */
import { type MessagePort, parentPort, workerData } from 'node:worker_threads';
import { ListFormatError } from './csv.js';
import { parseExitList, parseGeofeed, type TransferableRelayIndex } from './relay-index.js';

export type RelayListFormat = 'geofeed' | 'tor-exits';

export interface ParseRequest {
  format: RelayListFormat;
  /** The list as downloaded or read, UTF-8. */
  body: Uint8Array;
}

export type ParseReply =
  | { ok: true; index: TransferableRelayIndex; entries: number; skipped: number; problems: string[] }
  /** formatError: the body is not the list (ListFormatError), as opposed to a failure of the parser itself. */
  | { ok: false; message: string; formatError: boolean };

const PARSERS = { geofeed: parseGeofeed, 'tor-exits': parseExitList } as const;

/** The reply to post and its transfer list. */
export function parseRelayListRequest({ format, body }: ParseRequest): {
  reply: ParseReply;
  transfer: ArrayBuffer[];
} {
  try {
    const text = Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8');
    const { index, report } = PARSERS[format](text);
    const { index: data, transfer } = index.toTransferable();
    return { reply: { ok: true, index: data, ...report }, transfer };
  } catch (err) {
    return {
      reply: {
        ok: false,
        message: err instanceof Error ? err.message : String(err),
        formatError: err instanceof ListFormatError,
      },
      transfer: [],
    };
  }
}

/** Parses and posts the reply with its transfer list (exported for the tests that check what is transferred). */
export function answer(port: Pick<MessagePort, 'postMessage'>, request: ParseRequest): void {
  const { reply, transfer } = parseRelayListRequest(request);
  port.postMessage(reply, transfer);
}

if (parentPort) answer(parentPort, workerData as ParseRequest);
