/** test/shared-data.ts: where third-party test data is read from, and what happens without it. */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  hasShared,
  sharedFixture,
  sharedFixtureBytes,
  sharedFixtureText,
  sharedSuite,
} from '../../shared-data.js';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));

/** The module as a fresh process would load it, with NETDIAG_SHARED_DIR as given. */
async function loadWith(dir: string | undefined) {
  vi.stubEnv('NETDIAG_SHARED_DIR', dir);
  vi.resetModules();
  return import('../../shared-data.js');
}

afterEach(() => {
  vi.unstubAllEnvs();
  vi.restoreAllMocks();
});

describe('third-party data in ../shared', () => {
  it('is looked for beside the repository root, wherever the clone is', async () => {
    const { SHARED_DIR } = await loadWith(undefined);
    expect(SHARED_DIR).toBe(join(dirname(ROOT.replace(/\/$/, '')), 'shared'));
  });

  it.skipIf(!hasShared)('reads captures as bytes, text and JSON, and suites as text', () => {
    // A raw DNS query: a 12-byte header, then the question.
    expect(sharedFixtureBytes('dns/wire-query-hello.world.com-A.bin')).toHaveLength(33);
    expect(sharedFixtureText('relay/tor-torbulkexitlist.txt').split('\n').filter(Boolean)).toHaveLength(1396);
    expect(sharedFixture('turnstile/siteverify-success-curl.json')).toMatchObject({ success: true });
    expect(sharedSuite('rfc7208-tests.yml')).toContain('zonedata:');
  });

  it('without it says so, once, and a read names the file instead of failing somewhere else', async () => {
    const info = vi.spyOn(console, 'info').mockImplementation(() => {});
    const absent = await loadWith('no-such-shared-dir');
    expect(absent.hasShared).toBe(false);
    expect(absent.SHARED_DIR).toBe(join(ROOT, 'no-such-shared-dir'));
    expect(info.mock.calls).toEqual([
      [
        'no-such-shared-dir is absent: skipping tests that read third-party captures and suites (test/fixtures/README.md)',
      ],
    ]);
    expect(() => absent.sharedFixture('relay/tor-torbulkexitlist.txt')).toThrow(
      /^no-such-shared-dir is absent: .*; fixtures\/relay\/tor-torbulkexitlist\.txt was read without checking hasShared$/,
    );
    expect(() => absent.sharedSuite('rfc7208-tests.yml')).toThrow(/suites\/rfc7208-tests\.yml/);
  });
});
