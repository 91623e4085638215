/**
 * Runs once before any test file: the suites that start the real entry point
 * (`node dist/server.js`, `npm start`) and serve the site need dist/ current.
 * Only what changed is rebuilt (scripts/build.ts), so this is cheap when nothing did.
 */
import { build } from '../scripts/build.js';

export default async function setup(): Promise<void> {
  await build({ ifStale: true, log: (line) => process.stdout.write(`${line}\n`) });
}
