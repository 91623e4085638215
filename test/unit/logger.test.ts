/**
 * The process logger's stdout (lines batched per turn of the event loop before
 * sonic-boom), the request id and the access-log line.
 */
import { spawn } from 'node:child_process';
import type { IncomingMessage } from 'node:http';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { accessLog, createLogger, requestIdOf } from '../../src/logger.js';

const LOGGER = fileURLToPath(new URL('../../src/logger.ts', import.meta.url));

/** Runs a module body in a child with createLogger imported; resolves with its stdout lines, parsed. */
function runChild(body: string): Promise<{ code: number | null; lines: Record<string, unknown>[] }> {
  const source = `import { createLogger } from ${JSON.stringify(LOGGER)};\n${body}`;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', source], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.on('error', reject);
    child.on('close', (code) =>
      resolve({
        code,
        lines: out
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l) as Record<string, unknown>),
      }),
    );
  });
}

describe('the process logger on stdout', () => {
  it('writes every line, in order, when the process exits in the turn that logged them', async () => {
    const { code, lines } = await runChild(`
      const log = createLogger({ logLevel: 'info' });
      // A first burst handed over, then one still waiting for its turn when exit() is called.
      for (let i = 0; i < 3000; i++) log.info({ n: i }, 'line');
      await new Promise((resolve) => setImmediate(resolve));
      for (let i = 3000; i < 6000; i++) log.info({ n: i }, 'line');
      process.exit(0);
    `);
    expect(code).toBe(0);
    expect(lines.map((l) => l.n)).toEqual(Array.from({ length: 6000 }, (_, i) => i));
  }, 30_000);

  it('writes what logger.flush() was asked to, before its callback', async () => {
    const { lines } = await runChild(`
      const log = createLogger({ logLevel: 'info' });
      log.info({ n: 1 }, 'before flush');
      log.flush(() => { log.info({ n: 2 }, 'after flush'); process.exit(0); });
    `);
    expect(lines.map((l) => l.n)).toEqual([1, 2]);
  }, 30_000);

  it('keeps redacting secrets', async () => {
    const { lines } = await runChild(`
      const log = createLogger({ logLevel: 'info' });
      log.info({ req: { headers: { cookie: 'nd_session=x' } }, upstream: { apiKey: 'k' } }, 'secret');
    `);
    expect(lines[0]).toMatchObject({
      req: { headers: { cookie: '[redacted]' } },
      upstream: { apiKey: '[redacted]' },
    });
  }, 30_000);
});

describe('requestIdOf', () => {
  const raw = (id?: string | string[]) =>
    ({ headers: id === undefined ? {} : { 'x-request-id': id } }) as IncomingMessage;

  it("keeps the caller's id when it is a plausible one, and makes one up otherwise", () => {
    expect(requestIdOf(raw('abc-123_x.Y'))).toBe('abc-123_x.Y');
    for (const bad of [undefined, '', 'has space', 'x'.repeat(65), ['a', 'b'], 'ünï']) {
      expect(requestIdOf(raw(bad))).toMatch(
        /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
      );
    }
  });
});

describe('accessLog', () => {
  it('writes one line with the request id first and a long URL elided', () => {
    const chunks: string[] = [];
    const access = accessLog(createLogger({ logLevel: 'info' }, { write: (s: string) => chunks.push(s) }));
    const long = `/api/dns?target=${'a'.repeat(400)}`;
    access('r-1', 'GET', long, 200, 1.234, '198.51.100.7');
    const line = JSON.parse(chunks[0] ?? '{}') as Record<string, unknown>;
    expect(Object.keys(line).slice(-7)).toEqual(['reqId', 'method', 'url', 'statusCode', 'ms', 'ip', 'msg']);
    expect(line).toMatchObject({
      reqId: 'r-1',
      statusCode: 200,
      ms: 1.2,
      ip: '198.51.100.7',
      msg: 'request',
    });
    expect(line.url).toBe(`${long.slice(0, 300)}…`);
  });
});
