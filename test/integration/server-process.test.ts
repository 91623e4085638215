/**
 * The real entry point, as an operator runs it: starts on the embedded
 * defaults and shuts down cleanly on SIGTERM.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

describe('src/server.ts', () => {
  it('serves on its defaults and exits 0 on SIGTERM after closing', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
      env: {
        PATH: process.env.PATH,
        PORT: '0',
        HOST: '127.0.0.1',
        LOG_LEVEL: 'info',
        // Embedded defaults otherwise, but no test reaches the internet: background list downloads go to a closed port.
        RELAY_RANGES_URL: 'https://127.0.0.1:9/egress-ip-ranges.csv',
        TOR_EXIT_LIST_URL: 'https://127.0.0.1:9/torbulkexitlist',
        LIST_CACHE_DIR: mkdtempSync(join(tmpdir(), 'netdiag-lists-')),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const lines: Record<string, unknown>[] = [];
    let buffer = '';
    const listening = new Promise<string>((resolve, reject) => {
      child.stdout.on('data', (chunk: Buffer) => {
        buffer += chunk.toString();
        let nl = buffer.indexOf('\n');
        while (nl >= 0) {
          const line = JSON.parse(buffer.slice(0, nl)) as Record<string, unknown>;
          lines.push(line);
          buffer = buffer.slice(nl + 1);
          const url = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(String(line.msg))?.[1];
          if (url) resolve(url);
          nl = buffer.indexOf('\n');
        }
      });
      child.once('exit', (code) => reject(new Error(`exited early with ${code}`)));
    });
    const base = await listening;
    const res = await fetch(`${base}/healthz`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ok' });

    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(lines.some((l) => String(l.msg).startsWith('shutting down'))).toBe(true);
    await expect(fetch(`${base}/healthz`)).rejects.toThrow();
  });
});
