/**
 * Whether this process may listen on ports 53, 80 and 443, which the fake name servers and
 * targets of some suites need (vitest.config.ts, NEEDS_LOW_PORTS): as root (a user
 * namespace's root included), or where net.ipv4.ip_unprivileged_port_start has been
 * lowered to 53.
 * Shared by vitest.config.ts and scripts/test.mjs, so they never disagree.
 *
 * Plain JavaScript: scripts/test.mjs runs before any TypeScript loader.
 */
import { readFileSync } from 'node:fs';

export function canBindLowPorts() {
  if (process.getuid?.() === 0) return true;
  try {
    return Number(readFileSync('/proc/sys/net/ipv4/ip_unprivileged_port_start', 'utf8').trim()) <= 53;
  } catch {
    return false;
  }
}
