/**
 * src/dnssec/ is pure (docs/architecture.md §2): it reads records and returns
 * verdicts, so it imports node:crypto, dns-packet and itself, and nothing that
 * could reach a socket, a file, the clock of a cache or the service's config.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const DIR = fileURLToPath(new URL('../../../src/dnssec/', import.meta.url));
const ALLOWED = /^(node:crypto|node:module|dns-packet|\.\/[a-z0-9-]+\.js)$/;

describe('src/dnssec/', () => {
  it('imports only node:crypto, dns-packet and its own modules', () => {
    const files = readdirSync(DIR).filter((f) => f.endsWith('.ts'));
    expect(files.length).toBeGreaterThan(5);
    const offenders = files.flatMap((file) => {
      const text = readFileSync(`${DIR}${file}`, 'utf8');
      const specs = [
        ...text.matchAll(/\bfrom\s+'([^']+)'|\bimport\(\s*'([^']+)'|\brequire\('([^']+)'\)/g),
      ].map((m) => m[1] ?? m[2] ?? m[3] ?? '');
      return specs.filter((spec) => !ALLOWED.test(spec)).map((s) => `${file}: ${s}`);
    });
    expect(offenders).toEqual([]);
  });
});
