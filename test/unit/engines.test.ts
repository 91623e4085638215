/**
 * Issue 16: package.json said Node >= 20 while dependencies demanded >= 22, so a
 * supported Node got EBADENGINE warnings and an unsupported one was promised to
 * work. Every package the lock file installs must accept the oldest Node our
 * `engines` admits and the current LTS line, so the two cannot drift apart again.
 */
import { readFileSync } from 'node:fs';
import semver from 'semver';
import { describe, expect, it } from 'vitest';

const root = new URL('../../', import.meta.url);
const pkg = JSON.parse(readFileSync(new URL('package.json', root), 'utf8')) as { engines: { node: string } };
const lock = JSON.parse(readFileSync(new URL('package-lock.json', root), 'utf8')) as {
  packages: Record<string, { engines?: { node?: string } | string[] }>;
};

describe('engines', () => {
  it('admits Node 22 and 24 LTS', () => {
    expect(semver.satisfies('22.19.0', pkg.engines.node)).toBe(true);
    expect(semver.satisfies('24.0.0', pkg.engines.node)).toBe(true);
  });

  it('asks no more of Node than every installed package accepts', () => {
    const oldest = semver.minVersion(pkg.engines.node)?.version ?? '';
    const refused: string[] = [];
    for (const [path, entry] of Object.entries(lock.packages)) {
      const range = Array.isArray(entry.engines) ? undefined : entry.engines?.node;
      if (path === '' || range === undefined) continue;
      for (const version of [oldest, '24.0.0']) {
        if (!semver.satisfies(version, range)) refused.push(`${path} (${range}) refuses Node ${version}`);
      }
    }
    expect(refused).toEqual([]);
  });
});
