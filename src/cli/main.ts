/**
 * Process entry of `netdiag` (bin/netdiag.mjs imports it once dist/ is built): runs the command,
 * waits until stdout has taken everything written (a pipe drains asynchronously; exiting
 * earlier can cut the answer short), then exits with its status. Ctrl-C keeps Node's default (the
 * process ends at once), except under `serve`, whose server closes gracefully.
 */
import { main } from './cli.js';

const abort = new AbortController();

async function flushed(stream: NodeJS.WriteStream): Promise<void> {
  await new Promise<void>((resolve) => stream.write('', () => resolve()));
}

try {
  const outcome = await main(
    process.argv.slice(2),
    { stdout: process.stdout, stderr: process.stderr, env: process.env, stdin: process.stdin },
    abort.signal,
  );
  if ('exit' in outcome) {
    await Promise.all([flushed(process.stdout), flushed(process.stderr)]);
    process.exit(outcome.exit);
  }
} catch (err) {
  process.stderr.write(`netdiag: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
}
