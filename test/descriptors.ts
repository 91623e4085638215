/**
 * The files this process holds open under a directory, from /proc/self/fd
 * (Linux): how a test sees that closing a list let its index file go.
 */
import { readdirSync, readlinkSync } from 'node:fs';

/** Paths under `dir` that a file descriptor of this process is open on; [] where /proc is not there. */
export function descriptorsUnder(dir: string): string[] {
  let fds: string[];
  try {
    fds = readdirSync('/proc/self/fd');
  } catch {
    return [];
  }
  const open: string[] = [];
  for (const fd of fds) {
    try {
      const target = readlinkSync(`/proc/self/fd/${fd}`);
      if (target.startsWith(`${dir}/`)) open.push(target);
    } catch {
      // Closed while listed (the directory's own descriptor, for one).
    }
  }
  return open;
}
