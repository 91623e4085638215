/**
 * Writing the index files that several processes of a machine share
 * (LIST_CACHE_DIR): a temporary file, then renamed or linked into place, so a
 * reader never sees half a file. Synchronous: the writers are worker threads
 * (asn-index-worker.ts, relay-list-worker.ts) with nothing else to do.
 */
import { randomBytes } from 'node:crypto';
import { linkSync, mkdirSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { threadId } from 'node:worker_threads';

/**
 * Writes `data` to `path`, creating the directory. With `replace` (rename,
 * atomic on POSIX) a file already there is replaced; without it (a hard link,
 * which fails when the name exists) the file already there is kept and
 * 'exists' returned, so processes writing the same content at once all end
 * up reading the first one's file, not one each (a process that has opened a
 * file someone renamed another over keeps reading the replaced one). Where
 * the filesystem has no hard links, it renames.
 */
export function writeFileAtomically(
  path: string,
  data: Uint8Array,
  { replace }: { replace: boolean },
): 'written' | 'exists' {
  mkdirSync(dirname(path), { recursive: true });
  const tmp = `${path}.${process.pid}-${threadId}-${randomBytes(4).toString('hex')}.tmp`;
  try {
    writeFileSync(tmp, data);
    if (!replace) {
      try {
        linkSync(tmp, path);
        return 'written';
      } catch (err) {
        if (codeOf(err) === 'EEXIST') return 'exists';
        if (!NO_HARD_LINKS.has(codeOf(err) ?? '')) throw err;
      }
    }
    renameSync(tmp, path);
    return 'written';
  } finally {
    // Renamed: nothing left to remove. Linked, refused or failed: the temporary name goes.
    try {
      unlinkSync(tmp);
    } catch {}
  }
}

/** What link(2) answers on a filesystem without hard links (FAT, some network and FUSE mounts). */
const NO_HARD_LINKS = new Set(['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS']);

function codeOf(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}
