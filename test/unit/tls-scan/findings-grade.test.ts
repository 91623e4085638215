import { describe, expect, it } from 'vitest';
import type { ScanProtocol } from '../../../src/features/tls-scan/tls-scan.schema.js';
import type { ScanFacts } from '../../../src/tls-scan/facts.js';
import { explainGrade, scanGrade } from '../../../src/tls-scan/grade.js';
import { FINDING_CATALOGUE, scanFindings } from '../../../src/tls-scan/scan-findings.js';
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

const codes = (f: ScanFacts) => scanFindings(f).map((x) => x.code);
const grade = (f: ScanFacts) => scanGrade(f, scanFindings(f));

/** A TLS 1.2-only server with the given suites and otherwise good manners. */
function tls12(
  names: string[],
  extra: Partial<ScanFacts> = {},
  offered: ScanProtocol[] = ['TLSv1.2'],
): ScanFacts {
  return facts({
    offered,
    cipher_suites: offered.flatMap((p) => suites(p, names)),
    server_preference: Object.fromEntries(offered.map((p) => [p, true])),
    groups: [group('x25519', 'TLSv1.2')],
    certificates: [certificate('RSA', 2048)],
    features: GOOD_LEGACY_FEATURES,
    ...extra,
  });
}

describe('scanFindings', () => {
  it('finds nothing wrong with a modern server, and the deprecated and weak in an old one, most severe first', () => {
    expect(scanFindings(modernServer())).toEqual([]);
    expect(scanFindings(intermediateServer())).toEqual([]);
    const found = scanFindings(oldServer());
    expect(found.map((f) => f.code)).toEqual([
      'tls10_offered',
      'tls11_offered',
      '3des_suites',
      'no_forward_secrecy_suites',
      'cbc_in_tls12',
    ]);
    expect(found[0]?.references).toContain('RFC 8996');
    expect(found.find((f) => f.code === '3des_suites')?.references).toContain('CVE-2016-2183');
    expect(found.find((f) => f.code === '3des_suites')?.message).toContain('TLS_RSA_WITH_3DES_EDE_CBC_SHA');
  });

  it('reports the broken: SSLv2, SSLv3, export, NULL, anonymous and RC4 suites', () => {
    const f = tls12(['EXP-RC4-MD5', 'NULL-SHA', 'ADH-AES128-SHA', 'RC4-SHA', 'DES-CBC-SHA'], {}, [
      'SSLv3',
      'TLSv1',
    ]);
    f.protocols = f.protocols.map((p) => (p.name === 'SSLv2' ? { ...p, offered: true } : p));
    const found = scanFindings(f);
    expect(found.slice(0, 4).map((x) => x.code)).toEqual([
      'sslv2_offered',
      'export_suites',
      'null_suites',
      'anonymous_suites',
    ]);
    expect(found.every((x, i) => i === 0 || rank(found[i - 1]?.severity) <= rank(x.severity))).toBe(true);
    expect(codes(f)).toEqual(
      expect.arrayContaining([
        'sslv3_offered',
        'rc4_suites',
        'weak_encryption_suites',
        'tls10_offered',
        'no_tls13',
      ]),
    );
    expect(found.find((x) => x.code === 'sslv3_offered')?.references).toContain('RFC 7568');
    expect(found.find((x) => x.code === 'rc4_suites')?.references).toContain('RFC 7465');
  });

  it('rates DHE under 1024 bits high (Logjam) and under 2048 medium', () => {
    const f = tls12(['ECDHE-RSA-AES128-GCM-SHA256', 'DHE-RSA-AES128-GCM-SHA256'], { dhe: dhe(1024) });
    expect(scanFindings(f).find((x) => x.code === 'dhe_weak')?.severity).toBe('medium');
    f.dhe = dhe(768);
    expect(scanFindings(f).find((x) => x.code === 'dhe_weak')).toMatchObject({ severity: 'high' });
    f.dhe = dhe(2048);
    expect(codes(f)).not.toContain('dhe_weak');
  });

  it('reports no server preference only where the client can pick a weaker class, never for ChaCha20 priority', () => {
    const mixed = ['ECDHE-RSA-AES128-GCM-SHA256', 'ECDHE-RSA-CHACHA20-POLY1305', 'ECDHE-RSA-AES128-SHA256'];
    const f = tls12(mixed);
    f.chacha20_preference = { 'TLSv1.2': true };
    expect(codes(f)).not.toContain('no_server_preference');
    f.server_preference = { 'TLSv1.2': null };
    expect(codes(f)).not.toContain('no_server_preference');
    f.server_preference = { 'TLSv1.2': false };
    expect(scanFindings(f).find((x) => x.code === 'no_server_preference')?.message).toContain('TLS 1.2');
    // Among good and sufficient suites only, the client's order costs nothing.
    expect(codes(tls12(mixed.slice(0, 2), { server_preference: { 'TLSv1.2': false } }))).not.toContain(
      'no_server_preference',
    );
  });

  it('reports the TLS ≤ 1.2 features and the staple', () => {
    const f = tls12(['ECDHE-RSA-AES128-GCM-SHA256'], {
      features: {
        ...GOOD_LEGACY_FEATURES,
        compression: true,
        secure_renegotiation: false,
        fallback_scsv: false,
        extended_master_secret: false,
        heartbeat: true,
      },
    });
    expect(codes(f)).toEqual([
      'compression',
      'no_secure_renegotiation',
      'no_fallback_scsv',
      'no_extended_master_secret',
      'no_tls13',
      'heartbeat',
    ]);
    f.features = GOOD_LEGACY_FEATURES;
    f.ocsp_stapling = { ...f.ocsp_stapling, stapled: true, status: 'revoked', reason: 'keyCompromise' };
    expect(scanFindings(f)[0]).toMatchObject({ code: 'ocsp_revoked', severity: 'critical' });
    f.ocsp_stapling = { ...f.ocsp_stapling, status: 'invalid', reason: 'signature does not verify' };
    expect(scanFindings(f)[0]).toMatchObject({ code: 'ocsp_invalid', severity: 'high' });
  });

  it('reports rejected certificates, expired apart from untrusted', () => {
    const f = modernServer();
    f.certificates = [
      certificate('ECDSA', 256, 'rejected', { expired: true }),
      certificate('RSA', 2048, 'rejected'),
    ];
    expect(codes(f)).toEqual(['certificate_expired', 'certificate_untrusted']);
    f.certificates = [certificate('ECDSA', 256, 'trusted_with_warnings')];
    expect(codes(f)).toEqual([]);
  });

  it('uses only catalogued codes', () => {
    expect(Object.keys(FINDING_CATALOGUE)).toContain('no_server_preference');
    for (const f of [oldServer(), modernServer(), intermediateServer()]) {
      for (const code of codes(f)) expect(Object.keys(FINDING_CATALOGUE)).toContain(code);
    }
  });
});

const SEVERITIES = ['critical', 'high', 'medium', 'low', 'info'];
const rank = (s: string | undefined) => SEVERITIES.indexOf(s ?? '');

describe('scanGrade', () => {
  it('gives A+ to a TLS 1.3 server with AEAD and forward secrecy only and nothing found', () => {
    expect(grade(modernServer())).toBe('A+');
    expect(grade(intermediateServer())).toBe('A+');
  });

  it('gives A when something small remains (no TLS 1.3; CBC in TLS 1.2; a certificate with warnings)', () => {
    expect(
      explainGrade(
        tls12(['ECDHE-RSA-AES128-GCM-SHA256']),
        scanFindings(tls12(['ECDHE-RSA-AES128-GCM-SHA256'])),
      ),
    ).toEqual({
      grade: 'A',
      reasons: ['A (not A+): TLS 1.3 not offered', 'A (not A+): findings above info'],
    });
    const warned = modernServer();
    warned.certificates = [certificate('ECDSA', 256, 'trusted_with_warnings')];
    expect(grade(warned)).toBe('A');
  });

  it('caps at B for 3DES, DHE under 2048 bits, suites without forward secrecy, no AEAD suite, or an invalid staple', () => {
    expect(grade(tls12(['ECDHE-RSA-AES128-GCM-SHA256', 'ECDHE-RSA-DES-CBC3-SHA']))).toBe('B');
    expect(
      grade(tls12(['ECDHE-RSA-AES128-GCM-SHA256', 'DHE-RSA-AES128-GCM-SHA256'], { dhe: dhe(1024) })),
    ).toBe('B');
    expect(grade(tls12(['ECDHE-RSA-AES128-GCM-SHA256', 'AES128-GCM-SHA256']))).toBe('B');
    expect(
      explainGrade(tls12(['ECDHE-RSA-AES128-SHA256']), scanFindings(tls12(['ECDHE-RSA-AES128-SHA256']))),
    ).toMatchObject({
      grade: 'B',
      reasons: ['B: no AEAD suite'],
    });
    const invalid = modernServer();
    invalid.ocsp_stapling = { ...invalid.ocsp_stapling, stapled: true, status: 'invalid' };
    expect(grade(invalid)).toBe('B');
  });

  it('caps at C for TLS 1.0 or 1.1, RC4, compression, no secure renegotiation, or no forward secrecy at all', () => {
    expect(grade(oldServer())).toBe('C');
    expect(grade(tls12(['ECDHE-RSA-AES128-GCM-SHA256'], {}, ['TLSv1.1', 'TLSv1.2']))).toBe('C');
    expect(grade(tls12(['ECDHE-RSA-AES128-GCM-SHA256', 'ECDHE-RSA-RC4-SHA']))).toBe('C');
    expect(
      grade(
        tls12(['ECDHE-RSA-AES128-GCM-SHA256'], { features: { ...GOOD_LEGACY_FEATURES, compression: true } }),
      ),
    ).toBe('C');
    expect(
      grade(
        tls12(['ECDHE-RSA-AES128-GCM-SHA256'], {
          features: { ...GOOD_LEGACY_FEATURES, secure_renegotiation: false },
        }),
      ),
    ).toBe('C');
    const noFs = tls12(['AES128-GCM-SHA256', 'AES256-GCM-SHA384']);
    expect(explainGrade(noFs, scanFindings(noFs)).reasons).toEqual([
      'C: no suite with forward secrecy',
      'B: no_forward_secrecy_suites',
    ]);
  });

  it('gives D when neither TLS 1.2 nor 1.3 is offered, E for encryption under 112 bits', () => {
    expect(grade(tls12(['ECDHE-RSA-AES128-SHA'], {}, ['TLSv1', 'TLSv1.1']))).toBe('D');
    expect(grade(tls12(['ECDHE-RSA-AES128-GCM-SHA256', 'DES-CBC-SHA']))).toBe('E');
  });

  it('gives F for SSLv2, SSLv3, export, NULL, anonymous, a revoked staple or DHE under 1024 bits', () => {
    const base = ['ECDHE-RSA-AES128-GCM-SHA256'];
    expect(grade(tls12(base, {}, ['SSLv3', 'TLSv1.2']))).toBe('F');
    const v2 = tls12(base);
    v2.protocols = v2.protocols.map((p) => (p.name === 'SSLv2' ? { ...p, offered: true } : p));
    expect(grade(v2)).toBe('F');
    expect(grade(tls12([...base, 'EXP-RC4-MD5'], {}, ['TLSv1', 'TLSv1.2']))).toBe('F');
    expect(grade(tls12([...base, 'NULL-SHA256']))).toBe('F');
    expect(grade(tls12([...base, 'ADH-AES128-GCM-SHA256']))).toBe('F');
    expect(grade(tls12([...base, 'DHE-RSA-AES128-GCM-SHA256'], { dhe: dhe(512) }))).toBe('F');
    const revoked = modernServer();
    revoked.ocsp_stapling = { ...revoked.ocsp_stapling, stapled: true, status: 'revoked' };
    expect(grade(revoked)).toBe('F');
  });

  it('gives T when no certificate is trusted, unless the configuration is F anyway', () => {
    const f = modernServer();
    f.certificates = [certificate('ECDSA', 256, 'rejected')];
    expect(explainGrade(f, scanFindings(f))).toMatchObject({
      grade: 'T',
      reasons: ['T: no certificate served is trusted', 'B: certificate_untrusted'],
    });
    f.certificates = [];
    expect(grade(f)).toBe('T');
    // One trusted, one not: clients that pick the rejected key type fail.
    f.certificates = [certificate('ECDSA', 256, 'rejected'), certificate('RSA', 2048)];
    expect(explainGrade(f, scanFindings(f))).toEqual({ grade: 'B', reasons: ['B: certificate_untrusted'] });
    const broken = tls12(
      ['ECDHE-RSA-AES128-GCM-SHA256'],
      { certificates: [certificate('RSA', 2048, 'rejected')] },
      ['SSLv3', 'TLSv1.2'],
    );
    expect(grade(broken)).toBe('F');
  });
});
