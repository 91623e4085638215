import { describe, expect, it } from 'vitest';
import { CIPHER_SUITES, cipherSuite } from '../../../src/tls-scan/cipher-suites.js';
import {
  NCSC_VERSION,
  ncscDheClass,
  ncscGroupClass,
  ncscProtocolClass,
  ncscSuiteClass,
  rateNcsc,
} from '../../../src/tls-scan/ncsc.js';
import {
  dhe,
  facts,
  GOOD_LEGACY_FEATURES,
  group,
  intermediateServer,
  modernServer,
  oldServer,
  suites,
} from './scan-facts.js';

// internet.nl's classification of the 2025-05 guidelines, copied from
// github.com/internetstandards/Internet.nl checks/tasks/tls/tls_constants.py (2026-06):
// whatever these lists do not hold is insufficient.
const INL_GOOD = ['TLS_AES_256_GCM_SHA384', 'TLS_CHACHA20_POLY1305_SHA256'];
const INL_SUFFICIENT = [
  'TLS_AES_128_GCM_SHA256',
  'TLS_AES_128_CCM_SHA256',
  'TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256',
  'TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384',
  'TLS_ECDHE_ECDSA_WITH_AES_256_CCM',
  'TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256',
  'TLS_ECDHE_ECDSA_WITH_AES_128_CCM',
  'TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256',
  'TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384',
  'TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256',
];
const INL_PHASE_OUT = [
  ...['ECDSA', 'RSA'].flatMap((a) => [
    `TLS_ECDHE_${a}_WITH_CAMELLIA_256_GCM_SHA384`,
    `TLS_ECDHE_${a}_WITH_CAMELLIA_256_CBC_SHA384`,
    `TLS_ECDHE_${a}_WITH_CAMELLIA_128_GCM_SHA256`,
    `TLS_ECDHE_${a}_WITH_CAMELLIA_128_CBC_SHA256`,
    `TLS_ECDHE_${a}_WITH_ARIA_256_GCM_SHA384`,
    `TLS_ECDHE_${a}_WITH_ARIA_256_CBC_SHA384`,
    `TLS_ECDHE_${a}_WITH_ARIA_128_GCM_SHA256`,
    `TLS_ECDHE_${a}_WITH_ARIA_128_CBC_SHA256`,
    `TLS_ECDHE_${a}_WITH_AES_256_CBC_SHA384`,
    `TLS_ECDHE_${a}_WITH_AES_128_CBC_SHA256`,
  ]),
  'TLS_DHE_RSA_WITH_CHACHA20_POLY1305_SHA256',
  'TLS_DHE_RSA_WITH_CAMELLIA_256_GCM_SHA384',
  'TLS_DHE_RSA_WITH_CAMELLIA_256_CBC_SHA256',
  'TLS_DHE_RSA_WITH_CAMELLIA_128_GCM_SHA256',
  'TLS_DHE_RSA_WITH_CAMELLIA_128_CBC_SHA256',
  'TLS_DHE_RSA_WITH_ARIA_256_GCM_SHA384',
  'TLS_DHE_RSA_WITH_ARIA_256_CBC_SHA384',
  'TLS_DHE_RSA_WITH_ARIA_128_GCM_SHA256',
  'TLS_DHE_RSA_WITH_ARIA_128_CBC_SHA256',
  'TLS_DHE_RSA_WITH_AES_256_GCM_SHA384',
  'TLS_DHE_RSA_WITH_AES_256_CCM',
  'TLS_DHE_RSA_WITH_AES_256_CBC_SHA256',
  'TLS_DHE_RSA_WITH_AES_128_GCM_SHA256',
  'TLS_DHE_RSA_WITH_AES_128_CCM',
  'TLS_DHE_RSA_WITH_AES_128_CBC_SHA256',
];

const byOpenssl = (name: string) => {
  const row = CIPHER_SUITES.find((s) => s.opensslName === name);
  if (!row) throw new Error(name);
  return row;
};

describe('NCSC-NL classes (guidelines 2025-05)', () => {
  it('rates protocols: TLS 1.3 good, TLS 1.2 sufficient, everything older insufficient', () => {
    expect(ncscProtocolClass('TLSv1.3')).toBe('good');
    expect(ncscProtocolClass('TLSv1.2')).toBe('sufficient');
    for (const p of ['TLSv1.1', 'TLSv1', 'SSLv3', 'SSLv2'])
      expect(ncscProtocolClass(p), p).toBe('insufficient');
  });

  it('rates every suite of the table as internet.nl does', () => {
    const expected = (name: string) =>
      INL_GOOD.includes(name)
        ? 'good'
        : INL_SUFFICIENT.includes(name)
          ? 'sufficient'
          : INL_PHASE_OUT.includes(name)
            ? 'phase_out'
            : 'insufficient';
    const wrong = CIPHER_SUITES.filter((s) => s.protocols.length > 0)
      .map((s) => {
        const protocol = s.protocols[s.protocols.length - 1] ?? 'TLSv1.2';
        return { name: s.name, got: ncscSuiteClass(s, protocol), want: expected(s.name) };
      })
      .filter((r) => r.got !== r.want);
    expect(wrong).toEqual([]);
    // The lists themselves must all be in the table, or the comparison proves less than it says.
    const names = new Set(CIPHER_SUITES.map((s) => s.name));
    expect([...INL_GOOD, ...INL_SUFFICIENT, ...INL_PHASE_OUT].filter((n) => !names.has(n))).toEqual([]);
  });

  it('rates the well-known suites', () => {
    expect(ncscSuiteClass(byOpenssl('ECDHE-RSA-AES256-GCM-SHA384'), 'TLSv1.2')).toBe('sufficient');
    expect(ncscSuiteClass(byOpenssl('ECDHE-ECDSA-CHACHA20-POLY1305'), 'TLSv1.2')).toBe('sufficient');
    expect(ncscSuiteClass(byOpenssl('DHE-RSA-AES256-GCM-SHA384'), 'TLSv1.2')).toBe('phase_out');
    expect(ncscSuiteClass(byOpenssl('ECDHE-RSA-AES128-SHA256'), 'TLSv1.2')).toBe('phase_out');
    // 2.1 had static RSA as phase out and SHA-1 CBC with ECDHE as sufficient; 2025-05 lists neither.
    expect(ncscSuiteClass(byOpenssl('AES128-SHA'), 'TLSv1.2')).toBe('insufficient');
    expect(ncscSuiteClass(byOpenssl('ECDHE-RSA-AES128-SHA'), 'TLSv1')).toBe('insufficient');
    expect(ncscSuiteClass(byOpenssl('RC4-SHA'), 'TLSv1.2')).toBe('insufficient');
    expect(ncscSuiteClass(byOpenssl('DES-CBC3-SHA'), 'TLSv1.2')).toBe('insufficient');
    const aes256 = cipherSuite(0x1302);
    expect(aes256 && ncscSuiteClass(aes256, 'TLSv1.3')).toBe('good');
    const ccm8 = cipherSuite(0x1305);
    expect(ccm8 && ncscSuiteClass(ccm8, 'TLSv1.3')).toBe('insufficient');
    // SSLv2 cipher specs are insufficient whatever they encrypt with.
    expect(ncscSuiteClass(byOpenssl('ECDHE-RSA-AES256-GCM-SHA384'), 'SSLv2')).toBe('insufficient');
  });

  it('rates groups and DHE sizes: hybrids good, curves sufficient, ffdhe3072+ phase out, 2048 insufficient', () => {
    expect(ncscGroupClass('X25519MLKEM768')).toBe('good');
    expect(ncscGroupClass('SecP384r1MLKEM1024')).toBe('good');
    for (const g of ['x25519', 'x448', 'secp256r1', 'secp384r1', 'secp521r1'])
      expect(ncscGroupClass(g), g).toBe('sufficient');
    for (const g of ['ffdhe3072', 'ffdhe4096', 'ffdhe8192']) expect(ncscGroupClass(g), g).toBe('phase_out');
    expect(ncscGroupClass('ffdhe2048')).toBe('insufficient');
    expect(ncscGroupClass('sect163k1')).toBe('insufficient');
    expect(ncscDheClass(2048)).toBe('insufficient');
    expect(ncscDheClass(1024)).toBe('insufficient');
    expect(ncscDheClass(3072)).toBe('phase_out');
    expect(ncscDheClass(4096, false)).toBe('insufficient');
  });
});

describe('rateNcsc', () => {
  it('rates a TLS 1.3-only server sufficient overall for its 128-bit suite and plain curves, good with neither', () => {
    const r = rateNcsc(modernServer());
    expect(r.version).toBe(NCSC_VERSION);
    expect(r.overall).toBe('sufficient');
    // The version's own class; what it carries makes the overall class.
    expect(r.protocols).toEqual([{ name: 'TLSv1.3', class: 'good' }]);
    expect(r.reasons.some((x) => x.includes('TLS_AES_128_GCM_SHA256') && x.includes('sufficient'))).toBe(
      true,
    );
    expect(r.reasons.some((x) => x.includes('group x25519'))).toBe(true);

    const best = modernServer();
    best.cipher_suites = suites('TLSv1.3', ['TLS_AES_256_GCM_SHA384', 'TLS_CHACHA20_POLY1305_SHA256']);
    best.groups = [group('X25519MLKEM768')];
    expect(rateNcsc(best)).toMatchObject({
      overall: 'good',
      protocols: [{ name: 'TLSv1.3', class: 'good' }],
      reasons: [],
    });
  });

  it('rates each protocol by its version, the whole by the worst of everything offered, newest first', () => {
    const r = rateNcsc(oldServer());
    expect(r.overall).toBe('insufficient');
    expect(r.protocols.map((p) => p.name)).toEqual(['TLSv1.3', 'TLSv1.2', 'TLSv1.1', 'TLSv1']);
    expect(r.protocols.map((p) => p.class)).toEqual(['good', 'sufficient', 'insufficient', 'insufficient']);
    expect(r.reasons.some((x) => x.startsWith('TLS 1.0 is insufficient'))).toBe(true);
    expect(r.reasons.some((x) => x.includes('TLS_RSA_WITH_3DES_EDE_CBC_SHA') && x.includes('3DES'))).toBe(
      true,
    );
    expect(
      r.reasons.some((x) => x.includes('TLS_RSA_WITH_AES_128_CBC_SHA') && x.includes('RSA key exchange')),
    ).toBe(true);
  });

  it("takes DHE, compression and insecure renegotiation into the overall class, not the version's", () => {
    const f = facts({
      offered: ['TLSv1.2', 'TLSv1.3'],
      cipher_suites: [
        ...suites('TLSv1.3', ['TLS_AES_256_GCM_SHA384']),
        ...suites('TLSv1.2', ['ECDHE-RSA-AES256-GCM-SHA384', 'DHE-RSA-AES256-GCM-SHA384']),
      ],
      groups: [group('X25519MLKEM768')],
      dhe: dhe(3072),
      features: GOOD_LEGACY_FEATURES,
    });
    const versions = [
      { name: 'TLSv1.3', class: 'good' },
      { name: 'TLSv1.2', class: 'sufficient' },
    ];
    expect(rateNcsc(f)).toMatchObject({ protocols: versions, overall: 'phase_out' });
    f.dhe = dhe(2048);
    expect(rateNcsc(f)).toMatchObject({ protocols: versions, overall: 'insufficient' });
    expect(rateNcsc(f).reasons.some((x) => x.includes('2048-bit group is insufficient'))).toBe(true);
    f.dhe = dhe(3072);
    f.features = { ...GOOD_LEGACY_FEATURES, compression: true };
    expect(rateNcsc(f)).toMatchObject({ protocols: versions, overall: 'insufficient' });
    f.features = { ...GOOD_LEGACY_FEATURES, secure_renegotiation: false };
    expect(rateNcsc(f).reasons.some((x) => x.includes('RFC 5746'))).toBe(true);
  });

  it('groups suites of one class and cause into one reason', () => {
    const r = rateNcsc(intermediateServer());
    const tls12 = r.reasons.filter((x) => x.startsWith('TLS 1.2:') && x.includes('ECDHE with AEAD'));
    expect(tls12).toHaveLength(1);
    expect(tls12[0]).toContain('are sufficient');
  });
});
