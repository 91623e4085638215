import { defineConfig } from 'vitest/config';
import { canBindLowPorts } from './scripts/low-ports.mjs';

/**
 * Fake targets stand on 127.0.0.x at the real ports 80 and 443, and fake name servers at 53,
 * because outbound safety only lets the service connect there. Binding them needs root (CI
 * runs as root) or a lowered net.ipv4.ip_unprivileged_port_start; without either, `npm test`
 * (scripts/test.mjs) runs vitest in a user and network namespace of its own, where it
 * is root. Where none of that is possible those suites are skipped, saying why, so
 * `npm test` still passes.
 */
const NEEDS_LOW_PORTS = [
  'test/faults/providers.test.ts',
  'test/integration/dns-engine.test.ts',
  'test/integration/dnssec-mail.test.ts',
  'test/integration/email-fetch.test.ts',
  'test/integration/email-scenarios.test.ts',
  'test/integration/inspect-api.test.ts',
  'test/integration/mail-tls-api.test.ts',
  'test/integration/net-safety.test.ts',
  'test/integration/rdap-api.test.ts',
  'test/integration/tls-api.test.ts',
  'test/integration/tls-openssl-interop.test.ts',
  'test/integration/tls-scan-api.test.ts',
  'test/unit/net/safe-http.test.ts',
  'test/unit/net/safe-tls.test.ts',
];

const lowPorts = canBindLowPorts();
if (!lowPorts) {
  process.stdout.write(
    `Skipping ${NEEDS_LOW_PORTS.length} suites whose fakes bind ports 53/80/443: run as root, set ` +
      'net.ipv4.ip_unprivileged_port_start=53, or run `npm test` where unprivileged user namespaces ' +
      'are allowed (`unshare -rn`) (CI runs them).\n',
  );
}

/**
 * Suites that need a shared resource of the machine to themselves run on their own, one file
 * at a time, after everything else: those whose fake targets bind 127.0.0.x at ports 80 and
 * 443 (two at once could take each other's address), and those whose assertions are about
 * elapsed time (every provider under every fault must end within its deadline), so no other
 * test file competes with their timers. Their bounds are generous besides (a busy CI
 * machine is not an idle one); see the files.
 */
const EXCLUSIVE = ['test/faults/**/*.test.ts', ...NEEDS_LOW_PORTS];

const excluded = ['**/node_modules/**', ...(lowPorts ? [] : NEEDS_LOW_PORTS)];

export default defineConfig({
  test: {
    // Builds dist/ (server and site) when stale, once, before any worker starts.
    globalSetup: ['test/global-setup.ts'],
    // No test reaches past loopback, or an upstream it did not configure (test/setup/network-guard.ts).
    setupFiles: ['test/setup/network-guard.ts'],
    testTimeout: 20_000,
    hookTimeout: 30_000,
    // Fakes listen on loopback ports; files run in parallel workers, each with its own ports.
    pool: 'forks',
    // Both cores: vitest's default (CPUs - 1) leaves one of two idle.
    maxWorkers: 2,
    minWorkers: 1,
    reporters: ['default'],
    projects: [
      {
        extends: true,
        test: {
          name: 'suite',
          include: ['test/**/*.test.ts'],
          exclude: [...excluded, ...EXCLUSIVE],
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: {
          name: 'exclusive',
          include: EXCLUSIVE,
          exclude: excluded,
          // One file at a time, in one worker.
          poolOptions: { forks: { singleFork: true } },
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
