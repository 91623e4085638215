/**
 * Runs once before any test file: the suites that start the real entry point
 * (`node dist/server.js`, `npm start`) and serve the site need dist/ current.
 * Only what changed is rebuilt (scripts/build.ts), so this is cheap when nothing did.
 * Its teardown removes what test apps left in testConfig's list cache directory.
 */
import { rmSync } from 'node:fs';
import { build } from '../scripts/build.js';
import { TEST_LIST_CACHE_DIR } from '../src/config/index.js';

export default async function setup(): Promise<() => void> {
  await build({ ifStale: true, log: (line) => process.stdout.write(`${line}\n`) });
  // The lists and indexes test apps persisted (testConfig's LIST_CACHE_DIR) go with the run.
  return () => rmSync(TEST_LIST_CACHE_DIR, { recursive: true, force: true });
}
