/**
 * One relay list's index files in the list cache directory, as this process
 * uses them: each parse places (or finds) the file for the list's content and
 * opens it (relay-list-parse.ts); the ListSource releases an index once no
 * snapshot holds it (replaced by a refresh, or at close()), and it is closed.
 *
 * Files of this list that no index of this process holds open are removed
 * whenever the set changes: the copies older lists left. Another process of
 * the machine may still read one: on POSIX an unlinked file stays readable
 * through the descriptors open on it, and a process about to open one finds
 * it gone and has it placed again (relay-list-worker.ts). At close() the file
 * in use stays, next to the persisted list it was built from: a restart (or
 * another process) loading that list opens it without parsing.
 *
 * Without a directory, or one that cannot be written, the index is kept in
 * memory (a Buffer, as degraded as before the index was a file: each process
 * holds its ~10 MB), and that is logged once.
 */
import { readdirSync, unlinkSync } from 'node:fs';
import { basename, join } from 'node:path';
import type { BlockFileOptions } from './block-file.js';
import type { ListLogger } from './list-source.js';
import { isRelayIndexFileName, type RelayIndexFile } from './relay-index-file.js';
import { type ParsedRelayList, parseRelayList } from './relay-list-parse.js';
import type { RelayListFormat } from './relay-list-worker.js';

export interface RelayIndexFilesOptions {
  /** LIST_CACHE_DIR; undefined: indexes in memory. */
  dir: string | undefined;
  /** The provider id: the first part of the files' names, and in the logs. */
  provider: string;
  format: RelayListFormat;
  log: ListLogger;
  blocks?: BlockFileOptions;
  /** Replaces the parse worker module (tests). */
  entry?: URL;
}

export class RelayIndexFiles {
  readonly #opts: RelayIndexFilesOptions;
  /** The indexes this process holds open, and the file's name each reads (undefined: in memory). */
  readonly #open = new Map<RelayIndexFile, string | undefined>();
  #loggedMemory = false;

  constructor(opts: RelayIndexFilesOptions) {
    this.#opts = opts;
  }

  /** ListSource's parse: the list's index, open. */
  async parse(body: Buffer, signal: AbortSignal): Promise<ParsedRelayList> {
    const { dir, provider, format, blocks, entry, log } = this.#opts;
    const parsed = await parseRelayList(format, body, {
      store: dir === undefined ? undefined : { dir, prefix: provider },
      blocks,
      signal,
      entry,
    });
    this.#open.set(parsed.data, parsed.path && basename(parsed.path));
    if (parsed.origin === 'memory' && !this.#loggedMemory) {
      this.#loggedMemory = true;
      log.warn(
        { provider, dir, err: parsed.writeError ?? 'no list cache directory' },
        'relay index could not be written: serving it from memory in this process',
      );
    }
    this.#removeUnused();
    return parsed;
  }

  /** ListSource's release: closes the index and removes the files no open index reads. */
  release(index: RelayIndexFile): void {
    index.close();
    this.#open.delete(index);
    // Nothing open is close(): the file in use stays for the next start.
    if (this.#open.size > 0) this.#removeUnused();
  }

  /** Index files this process holds open (for the tests). */
  get open(): number {
    return this.#open.size;
  }

  /**
   * Synchronous: it runs when a list is swapped (at start, then daily) over a
   * directory of a few files, and is over before the swap returns, so close()
   * never has a removal still under way.
   */
  #removeUnused(): void {
    const { dir, provider } = this.#opts;
    if (dir === undefined) return;
    const inUse = new Set(this.#open.values());
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      return; // no directory: nothing was written there
    }
    for (const name of names) {
      if (!isRelayIndexFileName(provider, name) || inUse.has(name)) continue;
      try {
        unlinkSync(join(dir, name));
      } catch {
        // Removed by another process meanwhile, or not ours to remove: the next swap tries again.
      }
    }
  }
}
