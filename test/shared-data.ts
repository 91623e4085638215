/**
 * Third-party test data: real captures from other projects (`fixtures/`) and public test
 * suites (`suites/`: openspf's RFC 7208 suite, the ARC suite) stay outside the repository,
 * in `../shared` beside its root, which every developer and CI have (test/fixtures/README.md).
 * A clone without it still passes `npm test`: the tests that read that data are skipped,
 * `describe.skipIf(!hasShared)` or `it.skipIf(!hasShared)`, and this module says why, once
 * per test file, as the Redis and Chromium suites do for what they lack.
 *
 * A skipped suite's body still runs when vitest collects it, so a constant read at module or
 * describe level is `hasShared ? read : stand-in`; the readers throw when the data is absent.
 * No vitest import here: fakes, the fixture app and benchmarks read through it too.
 *
 * NETDIAG_SHARED_DIR (tests only) points somewhere else, relative to the repository's root;
 * a directory that does not exist is how to see the suites skip.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** The shared directory as a reader would write it: `../shared`, or what NETDIAG_SHARED_DIR says. */
const LABEL = process.env.NETDIAG_SHARED_DIR || '../shared';
export const SHARED_DIR = resolve(ROOT, LABEL);

/** Whether the directory is there at all; one that lacks a file the tests read fails them, loudly. */
export const hasShared = existsSync(SHARED_DIR);

export const SHARED_ABSENT = `${LABEL} is absent: skipping tests that read third-party captures and suites (test/fixtures/README.md)`;

if (!hasShared) console.info(SHARED_ABSENT);

function sharedPath(part: 'fixtures' | 'suites', rel: string): string {
  if (!hasShared) throw new Error(`${SHARED_ABSENT}; ${part}/${rel} was read without checking hasShared`);
  return join(SHARED_DIR, part, rel.replace(/^\/+/, ''));
}

/** Path of a capture under ../shared/fixtures/, e.g. 'relay/tor-torbulkexitlist.txt' (for a config that takes a file). */
export function sharedFixturePath(rel: string): string {
  return sharedPath('fixtures', rel);
}

/** JSON.parse of ../shared/fixtures/<rel>. */
export function sharedFixture(rel: string): unknown {
  return JSON.parse(sharedFixtureText(rel));
}

/** UTF-8 text of ../shared/fixtures/<rel>. */
export function sharedFixtureText(rel: string): string {
  return readFileSync(sharedPath('fixtures', rel), 'utf8');
}

/** Raw bytes of ../shared/fixtures/<rel> (DNS wire captures). */
export function sharedFixtureBytes(rel: string): Buffer {
  return readFileSync(sharedPath('fixtures', rel));
}

/** UTF-8 text of ../shared/suites/<name>, e.g. 'rfc7208-tests.yml'. */
export function sharedSuite(name: string): string {
  return readFileSync(sharedPath('suites', name), 'utf8');
}
