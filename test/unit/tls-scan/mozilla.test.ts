import { describe, expect, it } from 'vitest';
import { mozillaGaps, rateMozilla } from '../../../src/tls-scan/mozilla.js';
import { MOZILLA_CONFIGURATIONS, MOZILLA_VERSION } from '../../../src/tls-scan/mozilla-guidelines.js';
import {
  certificate,
  dhe,
  facts,
  GOOD_LEGACY_FEATURES,
  group,
  intermediateServer,
  modernServer,
  oldServer,
  suites,
} from './scan-facts.js';

describe('Mozilla guidelines data', () => {
  it('holds the three configurations as the JSON has them', () => {
    expect(MOZILLA_VERSION).toBe('6.0 (old: 5.8)');
    expect(MOZILLA_CONFIGURATIONS.modern.tls_versions).toEqual(['TLSv1.3']);
    expect(MOZILLA_CONFIGURATIONS.intermediate.ciphers_openssl).toHaveLength(6);
    expect(MOZILLA_CONFIGURATIONS.old.ciphers_openssl).toHaveLength(21);
    expect(MOZILLA_CONFIGURATIONS.old.ciphers_openssl).toContain('DES-CBC3-SHA');
    expect(MOZILLA_CONFIGURATIONS.old.source).toMatch(/5\.8\.json$/);
  });
});

describe('rateMozilla', () => {
  it('finds a TLS 1.3-only server with an ECDSA P-256 certificate modern', () => {
    expect(rateMozilla(modernServer())).toEqual({ version: MOZILLA_VERSION, meets: 'modern', gaps: [] });
  });

  it('finds a typical intermediate nginx intermediate, kept from modern by TLS 1.2, its suites and its RSA certificate', () => {
    const r = rateMozilla(intermediateServer());
    expect(r.meets).toBe('intermediate');
    expect(r.gaps.map((g) => g.level)).toEqual(['modern']);
    const reasons = r.gaps[0]?.reasons ?? [];
    expect(reasons.some((x) => x.includes('offers TLS 1.2') && x.includes('TLS 1.3 only'))).toBe(true);
    expect(reasons.some((x) => x.includes('ECDHE-RSA-AES128-GCM-SHA256'))).toBe(true);
    expect(reasons.some((x) => x.includes('serves RSA certificates only') && x.includes('ECDSA'))).toBe(true);
  });

  it('finds a server with TLS 1.0, static RSA and 3DES in server order old, naming what keeps it from the others', () => {
    const r = rateMozilla(oldServer());
    expect(r.meets).toBe('old');
    expect(r.gaps.map((g) => g.level)).toEqual(['modern', 'intermediate']);
    const intermediate = r.gaps[1]?.reasons ?? [];
    expect(intermediate.some((x) => x.includes('TLS 1.0') && x.includes('TLS 1.1'))).toBe(true);
    expect(intermediate.some((x) => x.includes('DES-CBC3-SHA') || x.includes('more'))).toBe(true);
  });

  it('keeps an old-style server out of old when it lets the client choose below TLS 1.3, but not for ChaCha20 priority', () => {
    const f = oldServer();
    f.chacha20_preference = { 'TLSv1.2': true };
    expect(rateMozilla(f).meets).toBe('old');
    f.server_preference = { ...f.server_preference, 'TLSv1.2': false };
    const r = rateMozilla(f);
    expect(r.meets).toBeNull();
    expect(r.gaps[2]?.reasons).toEqual([
      expect.stringContaining('lets the client choose the suite in TLS 1.2'),
    ]);
  });

  it('finds an SSLv3 server meets none, with a gap for every level', () => {
    const f = oldServer();
    f.protocols = f.protocols.map((p) => (p.name === 'SSLv3' ? { ...p, offered: true } : p));
    f.cipher_suites = [...f.cipher_suites, ...suites('SSLv3', ['AES128-SHA', 'DES-CBC3-SHA'])];
    f.server_preference = { ...f.server_preference, SSLv3: true };
    const r = rateMozilla(f);
    expect(r.meets).toBeNull();
    expect(r.gaps.map((g) => g.level)).toEqual(['modern', 'intermediate', 'old']);
    expect(r.gaps[2]?.reasons).toEqual([
      expect.stringMatching(/^offers SSLv3; old allows TLS 1.0, TLS 1.1, TLS 1.2, TLS 1.3 only$/),
    ]);
  });

  it('checks key-exchange sizes: DHE under 2048 bits, and finite-field groups for modern', () => {
    const f = facts({
      offered: ['TLSv1.2', 'TLSv1.3'],
      cipher_suites: [
        ...suites('TLSv1.3', ['TLS_AES_128_GCM_SHA256']),
        ...suites('TLSv1.2', ['ECDHE-RSA-AES128-GCM-SHA256', 'DHE-RSA-AES128-GCM-SHA256']),
      ],
      groups: [group('x25519'), group('ffdhe2048')],
      dhe: dhe(1024),
      certificates: [certificate('RSA', 2048)],
      features: GOOD_LEGACY_FEATURES,
    });
    expect(mozillaGaps(f, 'old')).toEqual([
      expect.stringContaining('DHE-RSA-AES128-GCM-SHA256'),
      "DHE suites get a 1024-bit group, under old's 2048-bit minimum",
    ]);
    expect(mozillaGaps(f, 'modern').some((x) => x.includes('finite-field groups (ffdhe2048)'))).toBe(true);
  });

  it('checks certificates: a listed type must be served, RSA keys large enough, ECDSA on the listed curves', () => {
    const f = modernServer();
    f.certificates = [certificate('ECDSA', 256), certificate('RSA', 2048)];
    expect(mozillaGaps(f, 'modern')).toEqual([]);
    expect(mozillaGaps(f, 'old')).toEqual([]);
    f.certificates = [certificate('ECDSA', 521)];
    expect(mozillaGaps(f, 'modern')).toEqual([expect.stringContaining('ECDSA certificate on secp521r1')]);
    expect(mozillaGaps(f, 'old')).toEqual([
      expect.stringContaining('serves ECDSA certificates only; old wants RSA'),
    ]);
    f.certificates = [certificate('RSA', 1024)];
    expect(mozillaGaps(f, 'intermediate')).toEqual([expect.stringContaining('1024-bit RSA certificate')]);
  });
});
