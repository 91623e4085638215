/**
 * The bundled Mark Verifying Authority roots (src/features/email/data/) and
 * BIMI_VMC_ROOTS_FILE: the list reads as written, matches the peer it was
 * taken from, ships in dist/, and an operator's file adds to it.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../../../src/config/index.js';
import {
  BUNDLED_MARK_ROOTS_FILE,
  bundledMarkRoots,
  markRootsLoader,
  parseMarkRoots,
} from '../../../../src/features/email/bimi-roots.js';
import { testMarkAuthority } from '../../../fakes/test-vmc.js';
import { buildTestApp } from '../../../helper.js';

const text = readFileSync(BUNDLED_MARK_ROOTS_FILE, 'utf8');

describe('the bundled Mark Verifying Authority roots', () => {
  it('are the five roots of the list, with the Entrust cut-off', () => {
    expect(
      bundledMarkRoots().map((r) => [
        /CN=([^,]+(?:, [^=,]+)*)$/.exec(r.cert.subject)?.[1],
        r.cert.isCa && r.cert.selfSigned,
        r.distrustAfter?.toISOString() ?? null,
      ]),
    ).toEqual([
      ['DigiCert Verified Mark Root CA', true, null],
      ['Entrust Verified Mark Root Certification Authority - VMCR1', true, '2024-11-15T23:59:59.000Z'],
      ['GlobalSign Verified Mark Root R42', true, null],
      ['SSL.com VMC ECC Root CA 2024', true, null],
      ['SSL.com VMC RSA Root CA 2024', true, null],
    ]);
  });

  it('state the SHA-256 of each certificate, and a wrong one is refused', () => {
    expect(text.match(/^# SHA-256: /gm)).toHaveLength(5);
    const tampered = text.replace('# SHA-256: 50:43:86:C9', '# SHA-256: 50:43:86:C8');
    expect(() => parseMarkRoots(tampered, 'tampered.pem')).toThrow(
      /^tampered\.pem: certificate 1 \(.*DigiCert Verified Mark Root CA\) has SHA-256 50:43:86:C9/,
    );
    expect(() => parseMarkRoots('# nothing here\n', 'empty.pem')).toThrow('empty.pem: no certificate');
  });

  // The peer the certificates were taken from (data/README.md): a mailauth release that adds or
  // drops a root fails here until the list follows it, or says why it does not.
  it('are the roots mailauth trusts (@postalsys/vmc data/root-store.json), no more, no fewer', () => {
    const require = createRequire(import.meta.url);
    const peer = (require('@postalsys/vmc/data/root-store.json') as string[]).map(
      (pem) => parseMarkRoots(pem, 'peer')[0]!.cert.fingerprintSha256,
    );
    expect(
      bundledMarkRoots()
        .map((r) => r.cert.fingerprintSha256)
        .sort(),
    ).toEqual(peer.sort());
  });

  it('ship beside the built module (a production install has dist/ alone)', () => {
    const built = new URL(
      '../../../../dist/features/email/data/mark-verifying-authorities.pem',
      import.meta.url,
    );
    expect(readFileSync(built, 'utf8')).toBe(text);
  });
});

describe('BIMI_VMC_ROOTS_FILE', () => {
  it('adds its roots to the bundled ones, read on first use', async () => {
    const { rootFile } = await testMarkAuthority();
    const roots = markRootsLoader(rootFile)();
    expect(roots).toHaveLength(6);
    expect(roots.at(-1)!.cert.subject).toBe('CN=netdiag test Mark Verifying Authority, O=netdiag tests');
  });

  it('is checked at start-up: unreadable, or not PEM, it stops the service naming the file', async () => {
    expect(() => loadConfig({ BIMI_VMC_ROOTS_FILE: '/nonexistent/roots.pem' })).toThrow(ConfigError);
    expect(() => loadConfig({ BIMI_VMC_ROOTS_FILE: '/nonexistent/roots.pem' })).toThrow(
      'BIMI_VMC_ROOTS_FILE: cannot read "/nonexistent/roots.pem" (ENOENT)',
    );
    const { rootFile } = await testMarkAuthority();
    expect(loadConfig({ BIMI_VMC_ROOTS_FILE: rootFile }).bimiVmcRootsFile).toBe(rootFile);
    const notPem = join(rootFile, '..', 'not.pem');
    writeFileSync(notPem, 'hello');
    const loader = markRootsLoader(notPem);
    expect(() => loader()).toThrow(`${notPem}: no certificate`);
    // The app reads the operator's file as it starts, so such a file stops it.
    await expect(buildTestApp({ config: { bimiVmcRootsFile: notPem } })).rejects.toThrow(
      `${notPem}: no certificate`,
    );
  });
});
