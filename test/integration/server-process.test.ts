/**
 * The real entry point, as an operator runs it: the compiled server
 * (`node dist/server.js`) and `npm start`, each on the embedded defaults,
 * ending gracefully on SIGTERM.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { startNetdiag } from '../scale/netdiag-process.js';

function defaults(): Record<string, string> {
  return {
    // Embedded defaults otherwise, but no test reaches the internet: background list downloads go to a closed port.
    RELAY_RANGES_URL: 'https://127.0.0.1:9/egress-ip-ranges.csv',
    TOR_EXIT_LIST_URL: 'https://127.0.0.1:9/torbulkexitlist',
    LIST_CACHE_DIR: mkdtempSync(join(tmpdir(), 'netdiag-lists-')),
  };
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('the compiled server', () => {
  it('node dist/server.js serves on its defaults and exits 0 on SIGTERM after closing', async () => {
    const server = await startNetdiag(defaults());
    onTestFinished(() => void server.stop());
    expect(server.serverPid).toBe(server.pid);
    const res = await server.get('/healthz');
    expect(res.status).toBe(200);
    expect(res.json()).toEqual({ status: 'ok' });
    // Issue 29: on the defaults the EHLO name is the reserved fallback, not the machine's name; said once.
    const helo = server.lines.filter((l) => String(l.msg).includes('SMTP_HELO_NAME'));
    expect(helo).toHaveLength(1);
    expect(helo[0]).toMatchObject({ level: 40 });
    expect(String(helo[0]?.msg)).toContain('netdiag.invalid');

    expect(await server.stop()).toBe(0);
    expect(server.lines.some((l) => String(l.msg).startsWith('shutting down'))).toBe(true);
    await expect(server.get('/healthz')).rejects.toThrow();
  });

  // Issue 16: `npm start` ran the server under a shell that did not pass npm's forwarded
  // SIGTERM on, so stopping npm left the server orphaned and still serving.
  it('npm start: SIGTERM to the npm process ends the server gracefully and leaves no process behind', async () => {
    const npm = await startNetdiag(defaults(), { via: 'npm' });
    const pid = npm.serverPid;
    // A failing run must not leave a server behind for the rest of the suite.
    onTestFinished(() => {
      if (alive(pid)) process.kill(pid, 'SIGKILL');
    });
    expect(pid).not.toBe(npm.pid);
    expect((await npm.get('/healthz')).status).toBe(200);
    // With the process's memory settings (docs/operations.md, "Memory"): the shell's `exec` passes both on.
    if (process.platform === 'linux') {
      expect(readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')).toContain('--max-semi-space-size=8');
      expect(readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0')).toContain(
        'MALLOC_MMAP_THRESHOLD_=131072',
      );
    }

    await npm.stop();
    expect(npm.lines.some((l) => l.pid === pid && String(l.msg).startsWith('shutting down'))).toBe(true);
    await expect(npm.get('/healthz')).rejects.toThrow();
    // The server exits as npm does; allow it the moment its exit takes to be reaped.
    await expect.poll(() => alive(pid), { timeout: 10_000 }).toBe(false);
  }, 60_000);
});
