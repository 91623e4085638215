/**
 * Worker thread entry: parses the ASN CSVs (AsnTableBuilder, as the table
 * always has been built), encodes the index and, when given a path, writes
 * it there atomically. Off the main thread, so the service's heap never
 * grows by the 33 MB of CSV text and the half-million-row builder, and its
 * event loop is not blocked for the second the parse takes; this thread's
 * heap is freed when it exits.
 */
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { parentPort, workerData } from 'node:worker_threads';
import { encodeAsnIndex } from './asn-index.js';
import { AsnTableBuilder } from './asn-table.js';
import { writeFileAtomically } from './atomic-file.js';

export interface BuildRequest {
  sources: readonly string[];
  /** Where to write the index; undefined: only send it back. */
  output: string | undefined;
}

export type BuildReply =
  | { ok: true; written: true }
  /** The index itself (its ArrayBuffer is transferred), when there was no path or writing failed. */
  | { ok: true; written: false; index: Uint8Array; writeError: string | undefined }
  | { ok: false; message: string; code: string | undefined };

function build({ sources, output }: BuildRequest): { reply: BuildReply; transfer: ArrayBuffer[] } {
  const builder = new AsnTableBuilder();
  for (const path of sources) builder.add(readFileSync(path, 'utf8'), basename(path));
  const index = encodeAsnIndex(builder.build());
  if (output === undefined) return { reply: inMemory(index, undefined), transfer: [arrayBufferOf(index)] };
  try {
    // Replacing: a file that was there is one openAsnIndex found unusable (or a racing builder's, identical).
    writeFileAtomically(output, index, { replace: true });
    return { reply: { ok: true, written: true }, transfer: [] };
  } catch (err) {
    return { reply: inMemory(index, describe(err).message), transfer: [arrayBufferOf(index)] };
  }
}

function inMemory(index: Buffer, writeError: string | undefined): BuildReply {
  return { ok: true, written: false, index, writeError };
}

function arrayBufferOf(buffer: Buffer): ArrayBuffer {
  // Buffer.alloc of this size owns its ArrayBuffer (never the shared pool), so transferring it moves only the index.
  return buffer.buffer as ArrayBuffer;
}

function describe(err: unknown): { message: string; code: string | undefined } {
  const code = (err as { code?: unknown } | null)?.code;
  return {
    message: err instanceof Error ? err.message : String(err),
    code: typeof code === 'string' ? code : undefined,
  };
}

if (parentPort) {
  let result: { reply: BuildReply; transfer: ArrayBuffer[] };
  try {
    result = build(workerData as BuildRequest);
  } catch (err) {
    result = { reply: { ok: false, ...describe(err) }, transfer: [] };
  }
  parentPort.postMessage(result.reply, result.transfer);
}
