/**
 * `netdiag message` as people and scripts run it (the built bin, as test/integration/cli.test.ts
 * runs the others): the message from a file or standard input, sent as message/rfc822 with who
 * connected in the query, in-process against the fixture upstreams and with --api against the
 * fixture app listening; --json is the API's body, as POST /api/message answers it.
 *
 * While src/message/ is being written the answer has no signatures or hops to show: these tests
 * hold what stands whatever they become (the verdict sentence first, the envelope given,
 * SPF for it, the sections, the exit status), and never the message's text on stderr.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FixtureApp, startFixtureApp } from '../e2e/fixture-app.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const BIN = 'bin/netdiag.mjs';
const RUN_TIMEOUT_MS = 60_000;

/** A message from sender.test's own mail server (SPF: 198.51.100.0/24 through its include). */
const SUBJECT = 'Quarterly figures 7f3a';
const MESSAGE = [
  'From: Alice <alice@sender.test>',
  'To: bob@receiver.test',
  `Subject: ${SUBJECT}`,
  'Date: Sat, 28 Nov 2026 09:57:59 +0000',
  'Message-ID: <1@sender.test>',
  '',
  'Hello Bob, the figures are attached.',
  '',
].join('\n');
const WHO = ['--ip', '198.51.100.7', '--helo', 'mail.sender.test', '--mail-from', 'alice@sender.test'];

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

let app: FixtureApp;
let dir: string;

/** The bin with the fixtures' variables, `input` on its standard input (closed at once without). */
function netdiag(args: string[], input = ''): Promise<Run> {
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      [BIN, ...args],
      {
        cwd: ROOT,
        env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...app.env },
        timeout: RUN_TIMEOUT_MS,
        maxBuffer: 16 * 1024 * 1024,
      },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : -1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
    child.stdin?.end(input);
  });
}

beforeAll(async () => {
  app = await startFixtureApp();
  dir = mkdtempSync(join(tmpdir(), 'netdiag-message-'));
  writeFileSync(join(dir, 'mail.eml'), MESSAGE);
}, 60_000);
afterAll(async () => {
  await app?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('netdiag message', () => {
  it('a file: the verdict sentence first, the four methods, SPF for the envelope given, nothing on stderr', async () => {
    const run = await netdiag(['message', join(dir, 'mail.eml'), ...WHO]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toBe('');
    const lines = run.stdout.split('\n');
    const body = (await (
      await fetch(
        `${app.url}/api/message?ip=198.51.100.7&helo=mail.sender.test&mail_from=alice%40sender.test`,
        { method: 'POST', headers: { 'content-type': 'message/rfc822' }, body: MESSAGE },
      )
    ).json()) as { verdict: { summary: string } };
    // The MCP summary's first sentence, then the headline with the status over the same sentence.
    expect(lines[0]?.startsWith(body.verdict.summary)).toBe(true);
    expect(lines[2]).toMatch(/^(AUTHENTICATED|NOT AUTHENTICATED|UNKNOWN) {2}/);
    expect(lines[2]).toContain(body.verdict.summary);
    for (const method of ['DKIM', 'ARC', 'SPF', 'DMARC'])
      expect(run.stdout).toMatch(new RegExp(`\\n${method} +\\S`));
    expect(run.stdout).toMatch(
      /\nSPF\nPASS {2}198\.51\.100\.7 is authorized to send mail as alice@sender\.test\./,
    );
    expect(run.stdout).toMatch(/\nAddress\s+198\.51\.100\.7\n/);
    expect(run.stdout).toMatch(/\nMAIL FROM\s+<alice@sender\.test>\n/);
    expect(run.stdout).toMatch(/\nTaken from\s+the request\n/);
    expect(run.stdout).toMatch(/\nDMARC\n/);
    expect(run.stdout).toMatch(/\nDNS lookups \(\d+\)\n/);
    expect(run.stdout).not.toContain(SUBJECT);
  }, 90_000);

  it('standard input (netdiag message < mail.eml), and - for it: the same answer as the file', async () => {
    const fromFile = await netdiag(['message', join(dir, 'mail.eml'), ...WHO, '--json']);
    const fromStdin = await netdiag(['message', ...WHO, '--json'], MESSAGE);
    const dash = await netdiag(['message', '-', ...WHO, '--json'], MESSAGE);
    for (const run of [fromFile, fromStdin, dash]) expect(run.code, run.stderr).toBe(0);
    const strip = (text: string) => {
      const {
        analyzed_at: _a,
        spf,
        ...rest
      } = JSON.parse(text) as { analyzed_at: string; spf: object | null };
      const { checked_at: _c, ...spfRest } = (spf ?? {}) as { checked_at?: string };
      return { ...rest, spf: spfRest };
    };
    expect(strip(fromStdin.stdout)).toEqual(strip(fromFile.stdout));
    expect(strip(dash.stdout)).toEqual(strip(fromFile.stdout));
  }, 90_000);

  it('--json is the API body, in process and through --api; the progress line never carries the message', async () => {
    const local = await netdiag(['message', join(dir, 'mail.eml'), ...WHO, '--json']);
    const remote = await netdiag(['--api', app.url, 'message', ...WHO, '--json'], MESSAGE);
    expect(local.code, local.stderr).toBe(0);
    expect(remote.code, remote.stderr).toBe(0);
    const rest = (await (
      await fetch(`${app.url}/api/message`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          message: MESSAGE,
          ip: '198.51.100.7',
          helo: 'mail.sender.test',
          mail_from: 'alice@sender.test',
        }),
      })
    ).json()) as Record<string, unknown>;
    const withoutTimes = (b: Record<string, unknown>) => {
      const { analyzed_at: _a, ...rest } = b;
      const spf = rest.spf as Record<string, unknown> | null;
      if (spf) {
        const { checked_at: _c, ...s } = spf;
        rest.spf = s;
      }
      return rest;
    };
    expect(withoutTimes(JSON.parse(local.stdout))).toEqual(withoutTimes(rest));
    expect(withoutTimes(JSON.parse(remote.stdout))).toEqual(withoutTimes(rest));
    expect(JSON.parse(local.stdout)).toMatchObject({
      from: { address: 'alice@sender.test', domain: 'sender.test' },
      envelope: {
        ip: '198.51.100.7',
        helo: 'mail.sender.test',
        mail_from: 'alice@sender.test',
        source: 'given',
      },
      spf: { result: 'pass' },
    });
    for (const run of [local, remote]) expect(run.stderr).not.toContain(SUBJECT);
  }, 90_000);

  it('usage: no file and a terminal-less empty input is the route’s 400; a missing file is exit 2 naming it', async () => {
    const empty = await netdiag(['message']);
    expect(empty.code).toBe(2);
    expect(empty.stderr).toMatch(/^netdiag message: body is empty/);
    const missing = await netdiag(['message', join(dir, 'nope.eml')]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain(`netdiag message: cannot read ${join(dir, 'nope.eml')}`);
    expect(missing.stderr).toContain(
      'usage: netdiag message [FILE] [--ip address] [--helo name] [--mail-from address]',
    );
    const help = await netdiag(['help', 'message']);
    expect(help.stdout).toContain('netdiag message: Message analysis (POST /api/message)');
    expect(help.stdout).toContain('Example: netdiag message < mail.eml');
  }, 90_000);
});
