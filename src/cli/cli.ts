/**
 * The `netdiag` command: parse, run, print, and the exit status (answer.ts). Lookups run in
 * this process (local.ts) unless --api / NETDIAG_API names an instance (remote.ts); what is
 * printed is the tool's summary (features/tools/summaries.ts, the verdict in the words the site
 * uses) above its renderer's tables, or with --json the API's JSON body alone.
 */
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { errorText, type RawBody } from '../features/tools/call-route.js';
import { type ToolSpec, toolForCommand } from '../features/tools/catalog.js';
import { type Answer, EXIT, exitStatus } from './answer.js';
import { type GlobalFlags, type Invocation, parseCommandLine, UsageError } from './args.js';
import { commandHelp, commandSpec, helpText, usageLine } from './commands.js';
import { PROGRESS_AFTER_MS, type ProgressTarget, startProgress } from './progress.js';
import { attribution } from './render/common.js';
import { RENDERERS } from './render/index.js';
import { createStyle, type Style, wantsColour } from './style.js';

export interface Io {
  stdout: ProgressTarget;
  stderr: ProgressTarget;
  env: Readonly<Record<string, string | undefined>>;
  /** What `netdiag message` reads without a FILE. */
  stdin?: AsyncIterable<Uint8Array | string> & { isTTY?: boolean };
}

/** What main() leaves running: nothing (exit with the status), or a server that exits by itself. */
export type Outcome = { exit: number } | { running: true };

export function packageVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
    version: string;
  };
  return pkg.version;
}

function userAgent(version: string): string {
  return `netdiag-cli/${version} (node ${process.versions.node})`;
}

function jsonText(body: unknown): string {
  return `${JSON.stringify(body, null, 2)}\n`;
}

interface Attempt {
  name: string;
  status: string;
  error?: string;
}

/** The providers a failed answer names (a 502's, a 503's), each with its error. */
function providersTried(body: unknown): Attempt[] {
  const tried = (body as { providers_tried?: unknown } | null)?.providers_tried;
  return Array.isArray(tried) ? (tried as Attempt[]).filter((a) => typeof a?.name === 'string') : [];
}

/** The error on stderr: the route's `{error}`, what to do about a 429, and which providers failed. */
function failureText(answer: Answer, tool: ToolSpec, flags: GlobalFlags, style: Style): string {
  const body = answer.body as { error?: unknown } | null;
  const lines =
    answer.status === 0
      ? [`netdiag: ${typeof body?.error === 'string' ? body.error : `no answer from ${flags.api}`}`]
      : [`netdiag ${tool.command}: ${errorText({ ...answer, cache: null })}`];
  for (const attempt of providersTried(answer.body)) {
    const mark =
      attempt.status === 'ok'
        ? style.tone('ok', '✓')
        : attempt.status === 'failed'
          ? style.tone('bad', '✕')
          : '–';
    lines.push(`  ${mark} ${attempt.name}${attempt.error ? `: ${attempt.error}` : ''}`);
  }
  if (answer.status === 400) lines.push(`usage: netdiag help ${tool.command}`);
  return `${lines.join('\n')}\n`;
}

function humanText(tool: ToolSpec, answer: unknown, style: Style): string {
  const render = RENDERERS[tool.command];
  const lines = [
    style.bold(tool.summarize(answer)),
    '',
    ...(render ? render(answer, style) : []),
    ...attribution(style, answer),
  ];
  return `${lines.join('\n')}\n`;
}

interface FileBody {
  /** The arguments left for the query. */
  args: Record<string, unknown>;
  raw: RawBody;
  /** What the progress line names: the file, or standard input. */
  label: string;
}

/** A command whose parameter is a file (`netdiag message`): its bytes, or standard input's. */
async function readFileBody(
  command: string,
  spec: ReturnType<typeof commandSpec>,
  args: Record<string, unknown>,
  io: Io,
): Promise<FileBody | undefined> {
  if (!spec.file) return undefined;
  const { [spec.file.param]: path, ...rest } = args;
  if (Array.isArray(path)) throw new UsageError(`${spec.file.param} given twice`, command);
  let bytes: Buffer;
  if (typeof path === 'string' && path !== '-') {
    try {
      bytes = await readFile(path);
    } catch (err) {
      throw new UsageError(`cannot read ${path}: ${(err as Error).message}`, command);
    }
  } else {
    if (!io.stdin || io.stdin.isTTY)
      throw new UsageError(
        'give a FILE, or the message on standard input (netdiag message < mail.eml)',
        command,
      );
    const chunks: Buffer[] = [];
    for await (const chunk of io.stdin) chunks.push(Buffer.from(chunk));
    bytes = Buffer.concat(chunks);
  }
  const label = typeof path === 'string' && path !== '-' ? path : 'standard input';
  return { args: rest, raw: { bytes, contentType: spec.file.contentType }, label };
}

async function lookup(
  tool: ToolSpec,
  given: Record<string, unknown>,
  flags: GlobalFlags,
  io: Io,
  signal: AbortSignal,
): Promise<Answer> {
  const spec = commandSpec(tool);
  const file = await readFileBody(tool.command, spec, given, io);
  const args = file?.args ?? given;
  const raw = file?.raw;
  // Never the message itself: its name, or the first argument of any other command.
  const what = file ? file.label : (Object.values(args)[0] ?? '');
  const progress = startProgress(io.stderr, `${tool.title}: ${what}…`, {
    delayMs: spec.slow ? 0 : PROGRESS_AFTER_MS,
  });
  const agent = userAgent(packageVersion());
  try {
    if (flags.api !== undefined) {
      const { apiBase, askRemote } = await import('./remote.js');
      return await askRemote(apiBase(flags.api), tool, args, agent, signal, raw);
    }
    // Loaded only here: --help, --version and --api never pay for the app.
    const { askLocal, localCaller, openLocalApp, relayListsSettled } = await import('./local.js');
    const local = await openLocalApp(io.env, { relayLists: 'on-demand', features: [spec.feature] });
    try {
      if (spec.relayLists) {
        // The copies in LIST_CACHE_DIR load here; only a first run has to wait for a download.
        await local.app.ipSources.relays.start();
        if (local.app.ipSources.relays.loading()) {
          progress.say('Loading the relay lists (the first run downloads them)…');
          await relayListsSettled(local.app, signal);
          progress.say(`${tool.title}…`);
        }
      }
      return await askLocal(local, tool, args, localCaller(agent), raw);
    } finally {
      // Cancels what the app started in the background (a relay-list download, timers).
      await local.close();
    }
  } finally {
    progress.stop();
  }
}

async function runTool(
  tool: ToolSpec,
  args: Record<string, unknown>,
  flags: GlobalFlags,
  io: Io,
  signal: AbortSignal,
): Promise<number> {
  const style = createStyle(wantsColour(io.stdout, io.env));
  const errStyle = createStyle(wantsColour(io.stderr, io.env));
  const answer = await lookup(tool, args, flags, io, signal);
  if (flags.json && answer.status !== 0) io.stdout.write(jsonText(answer.body));
  if (answer.status === 200) {
    if (!flags.json) io.stdout.write(humanText(tool, answer.body, style));
  } else {
    io.stderr.write(failureText(answer, tool, flags, errStyle));
  }
  return exitStatus(answer);
}

function help(topic: string | undefined, io: Io, version: string): number {
  if (topic === undefined) {
    io.stdout.write(`${helpText(version)}\n`);
    return EXIT.ok;
  }
  const tool = toolForCommand(topic);
  if (tool !== undefined) {
    io.stdout.write(`${commandHelp(tool)}\n`);
    return EXIT.ok;
  }
  if (topic === 'serve' || topic === 'mcp' || topic === 'help') {
    io.stdout.write(`${helpText(version)}\n`);
    return EXIT.ok;
  }
  throw new UsageError(`unknown command: ${topic}`);
}

async function dispatch(invocation: Invocation, io: Io, signal: AbortSignal): Promise<Outcome> {
  const version = packageVersion();
  switch (invocation.kind) {
    case 'version':
      io.stdout.write(`${version}\n`);
      return { exit: EXIT.ok };
    case 'help':
      return { exit: help(invocation.topic, io, version) };
    case 'serve':
      // The server exactly as `npm start` runs it: its own config, logs, signals and exit.
      await import('../server.js');
      return { running: true };
    case 'mcp': {
      const { openLocalApp } = await import('./local.js');
      const { serveMcpStdio } = await import('./mcp-stdio.js');
      const local = await openLocalApp(io.env, { relayLists: 'on-ready' });
      try {
        await serveMcpStdio(local, userAgent(version));
      } finally {
        await local.close();
      }
      return { exit: EXIT.ok };
    }
    case 'tool':
      return { exit: await runTool(invocation.tool, invocation.args, invocation.flags, io, signal) };
  }
}

export async function main(argv: readonly string[], io: Io, signal: AbortSignal): Promise<Outcome> {
  try {
    return await dispatch(parseCommandLine(argv, io.env), io, signal);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    // The command's own usage line when there is one, then where the rest of its help is.
    const tool = err.command === undefined ? undefined : toolForCommand(err.command);
    const usage = tool
      ? `${usageLine(tool)} [--json] [--api URL]\n       (netdiag help ${tool.command})`
      : `netdiag ${err.command === undefined ? '--help' : `help ${err.command}`}`;
    const who = tool ? `netdiag ${tool.command}` : 'netdiag';
    io.stderr.write(`${who}: ${err.message}\nusage: ${usage}\n`);
    return { exit: EXIT.usage };
  }
}
