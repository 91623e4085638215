/**
 * `npm test`: `vitest run`, so that a contributor without root runs the whole suite as CI
 * does, the suites whose fakes bind 127.0.0.x:53/80/443 included (vitest.config.ts,
 * NEEDS_LOW_PORTS). Arguments pass through: `npm test -- test/unit/net`.
 *
 * - This process may bind ports 53, 80 and 443 (root, as CI; or a lowered
 *   net.ipv4.ip_unprivileged_port_start): vitest runs as it is.
 * - Otherwise, where the kernel lets an unprivileged user create a user and a network
 *   namespace (`unshare -rn`): vitest runs inside one, with its loopback interface up. It is
 *   root there (mapped to the caller's own user outside, with no more rights than that),
 *   so it may bind 80 and 443, and its network is that loopback and nothing else, which is
 *   all a test may use anyway (test/setup/network-guard.ts).
 * - Otherwise vitest runs as it is, and vitest.config.ts skips those suites, saying why.
 *
 * Plain JavaScript, so it runs before any TypeScript loader.
 */
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { canBindLowPorts } from './low-ports.mjs';

/** vitest's command-line entry, run with this Node (CI runs the suite under a second Node version). */
function vitestCli() {
  const pkg = import.meta.resolve('vitest/package.json');
  const { bin } = JSON.parse(readFileSync(new URL(pkg), 'utf8'));
  return fileURLToPath(new URL(typeof bin === 'string' ? bin : bin.vitest, pkg));
}

/**
 * Brings loopback up in the new namespace, then becomes the command. `ip` lives in sbin,
 * which an ordinary user's PATH may lack.
 */
const IN_NAMESPACE = 'PATH="$PATH:/usr/sbin:/sbin" ip link set lo up && exec "$@"';

/** Whether `unshare -rn` works here and loopback can be brought up inside it. */
function namespaceWorks() {
  const probe = spawnSync('unshare', ['-rn', 'sh', '-c', IN_NAMESPACE, 'sh', 'true'], { stdio: 'ignore' });
  return probe.status === 0;
}

const vitest = [process.execPath, vitestCli(), 'run', ...process.argv.slice(2)];
let command = vitest;
if (!canBindLowPorts() && process.platform === 'linux' && namespaceWorks()) {
  process.stderr.write(
    'npm test: running vitest in a user and network namespace of its own (unshare -rn), ' +
      'where the suites whose fakes bind ports 53/80/443 can run without root\n',
  );
  command = ['unshare', '-rn', 'sh', '-c', IN_NAMESPACE, 'sh', ...vitest];
}

const [file, ...args] = command;
const child = spawn(file, args, { stdio: 'inherit' });
child.on('error', (err) => {
  process.stderr.write(`npm test: could not start ${file}: ${err.message}\n`);
  process.exit(1);
});
// Ctrl-C reaches vitest directly (same process group): this process only waits for it to end.
process.on('SIGINT', () => {});
for (const signal of ['SIGTERM', 'SIGHUP']) process.on(signal, () => child.kill(signal));
child.on('exit', (code, signal) => {
  if (signal) {
    // End the way vitest ended, so npm reports the same.
    process.removeAllListeners(signal);
    process.kill(process.pid, signal);
    return;
  }
  process.exit(code ?? 1);
});
