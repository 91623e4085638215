/**
 * `netdiag blocklists` as people and scripts run it (the built bin, as cli-message.test.ts runs
 * it), in-process against the fixture upstreams and with --api against the fixture app. The
 * fixtures have no blocklist servers: the engine's root (DNS_ROOT_HINTS, 192.0.2.53 in the test
 * configuration) answers nothing, so every list is `error`, which is still an answer to render
 * (exit 0). What stands is held here: the kind of target chooses ip or domain, the summary first,
 * one grey row per list saying it gave no answer, a domain's MX host from the fixture DNS, --json
 * the API's body; the rich cases are test/unit/client/blocklists-words.test.ts's judged answer.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Value } from 'typebox/value';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type BlocklistsResponse,
  BlocklistsResponseSchema,
} from '../../src/features/blocklists/blocklists.schema.js';
import { type FixtureApp, startFixtureApp } from '../e2e/fixture-app.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const BIN = 'bin/netdiag.mjs';

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

let app: FixtureApp;

function netdiag(args: string[]): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      {
        cwd: ROOT,
        env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...app.env },
        timeout: 60_000,
        maxBuffer: 16 * 1024 * 1024,
      },
      (err, stdout, stderr) => {
        resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr });
      },
    );
  });
}

/** The answer without the moment it was made: two calls differ in nothing else. */
function timeless(body: BlocklistsResponse): Omit<BlocklistsResponse, 'checked_at'> {
  const { checked_at: _at, ...rest } = body;
  return rest;
}

beforeAll(async () => {
  app = await startFixtureApp();
}, 60_000);
afterAll(async () => {
  await app?.close();
});

describe('netdiag blocklists', () => {
  it('an address: the summary first, every list a grey "no answer" row, exit 0', async () => {
    const run = await netdiag(['blocklists', '1.1.1.1']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toBe('');
    const lines = run.stdout.split('\n');
    expect(lines[0]).toMatch(
      /^No list gave a usable answer about 1\.1\.1\.1: none can be said to list it or not\. \d+ did not give/,
    );
    expect(lines).toContain('NO USABLE ANSWER  1.1.1.1');
    const header = lines.findIndex((l) => /^STATUS +LIST +ZONE +ANSWER$/.test(l));
    expect(header).toBeGreaterThan(0);
    expect(lines[header - 1]).toMatch(/^Lists \((\d+): \1 no answer\)$/);
    const rows = lines.slice(header + 1).filter((l) => l.startsWith('no answer'));
    expect(rows.length).toBeGreaterThan(0);
    for (const row of rows) expect(row).toMatch(/No answer, not counted: /);
    expect(run.stdout).toContain('bl.spamcop.net');
    expect(run.stdout).not.toMatch(/^listed /m);
    expect(run.stdout).not.toContain('MX hosts');
  }, 60_000);

  it('a domain: its lists, then its MX host and that address’s own rows', async () => {
    const run = await netdiag(['blocklists', 'sender.test']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('Domain lists (');
    expect(run.stdout).toMatch(
      /\nMX hosts\nmx\.sender\.test\n {2}192\.0\.2\.25 {2}listed on none of 0 usable lists \(\d+ without a usable answer\)\n {4}STATUS/,
    );
  }, 60_000);

  it('--json is the API’s body, in-process and through --api', async () => {
    const api = (await (
      await fetch(`${app.url}/api/blocklists?domain=sender.test`)
    ).json()) as BlocklistsResponse;
    expect([...Value.Errors(BlocklistsResponseSchema, api)]).toEqual([]);
    for (const args of [[], ['--api', app.url]]) {
      const run = await netdiag(['blocklists', 'sender.test', '--json', ...args]);
      expect(run.code, run.stderr).toBe(0);
      const body = JSON.parse(run.stdout) as BlocklistsResponse;
      expect(timeless(body), args.join(' ')).toEqual(timeless(api));
    }
    const ip = await netdiag(['blocklists', '1.1.1.1', '--json', '--api', app.url]);
    const body = JSON.parse(ip.stdout) as BlocklistsResponse;
    expect(body.subject).toEqual({ kind: 'ip', value: '1.1.1.1' });
    expect(body.mx).toBeNull();
    expect(body.lists.every((l) => l.status === 'error')).toBe(true);
  }, 60_000);

  it('--ip and --domain by name; a private address is the route’s 400 (exit 2); no target a usage error', async () => {
    const named = await netdiag(['blocklists', '--ip', '1.1.1.1', '--json']);
    expect(named.code, named.stderr).toBe(0);
    expect((JSON.parse(named.stdout) as BlocklistsResponse).subject.kind).toBe('ip');
    const privateAddress = await netdiag(['blocklists', '10.0.0.1']);
    expect(privateAddress.code).toBe(2);
    expect(privateAddress.stderr).toMatch(/10\.0\.0\.1/);
    const none = await netdiag(['blocklists']);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('missing <ip|domain>');
  }, 60_000);
});
