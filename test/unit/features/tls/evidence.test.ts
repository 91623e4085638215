import { beforeAll, describe, expect, it } from 'vitest';
import {
  buildTlsEvidence,
  type HandshakeFacts,
  MAX_ANALYZED_CERTIFICATES,
} from '../../../../src/features/tls/evidence.js';
import { type MadeCert, makeChain } from './make-cert.js';

let root: MadeCert;
let intermediate: MadeCert;
let leaf: MadeCert;
const now = new Date();

beforeAll(async () => {
  ({ root, intermediate, leaf } = await makeChain());
});

function facts(overrides: Partial<HandshakeFacts> = {}): HandshakeFacts {
  return {
    host: 'leaf.test',
    port: 443,
    address: '192.0.2.10',
    sni: 'leaf.test',
    protocol: 'TLSv1.3',
    cipher: { standardName: 'TLS_AES_128_GCM_SHA256', name: 'TLS_AES_128_GCM_SHA256' },
    alpn: 'h2',
    ephemeralKey: { type: 'ECDH', name: 'X25519', size: 253 },
    ocspStapled: false,
    authorized: true,
    authorizationError: null,
    sent: [leaf.der, intermediate.der],
    peerChain: [leaf.der, intermediate.der, root.der],
    now,
    ...overrides,
  };
}

const codes = (findings: { code: string; severity: string }[]) =>
  findings.map((f) => `${f.severity}:${f.code}`);

describe('buildTlsEvidence', () => {
  it('shapes the connection, the leaf and the chain; the store-supplied root is named as such', () => {
    const tls = buildTlsEvidence(facts());
    expect(tls.connection).toEqual({
      address: '192.0.2.10',
      sni: 'leaf.test',
      protocol: 'TLSv1.3',
      cipher: 'TLS_AES_128_GCM_SHA256',
      cipher_openssl: 'TLS_AES_128_GCM_SHA256',
      alpn: 'h2',
      ephemeral_key: { type: 'ECDH', curve: 'X25519', bits: 253 },
      forward_secrecy: true,
      ocsp_stapled: false,
      authorized: true,
      authorization_error: null,
      authorization_reason: null,
      hostname_matches: true,
    });
    expect(tls.verdict.status).toBe('trusted');
    expect(tls.verdict.summary).toMatch(
      /^Trusted by browsers for leaf\.test until \d{4}-\d\d-\d\d \d\d:\d\d UTC \(\d+ days\)\.$/,
    );
    expect(tls.leaf).toMatchObject({ subject: 'CN=leaf.test', san: ['leaf.test'], expired: false });
    expect(tls.leaf.days_remaining).toBeGreaterThanOrEqual(89);
    expect(tls.chain).toMatchObject({ source: 'handshake', sent_count: 2 });
    expect(tls.chain.certificates.map((c) => [c.index, c.role, c.is_ca])).toEqual([
      [0, 'leaf', false],
      [1, 'intermediate', true],
    ]);
    expect(tls.chain.root).toMatchObject({ subject: 'CN=Unit Root, O=netdiag tests', source: 'trust store' });
    expect(tls.findings).toEqual([]);
    expect(tls.checked_at).toBe(now.toISOString());
  });

  it('the same certificates sent with the root, out of order: judged from the sent list', () => {
    const tls = buildTlsEvidence(facts({ sent: [leaf.der, root.der, intermediate.der] }));
    expect(codes(tls.findings)).toEqual(['low:chain_wrong_order', 'low:chain_contains_root']);
    expect(tls.chain.findings).toEqual(tls.findings);
  });

  it('a reconstruction (no readable Certificate message) does not invent order or root findings', () => {
    const tls = buildTlsEvidence(facts({ sent: undefined }));
    expect(tls.chain.source).toBe('reconstructed');
    expect(tls.chain.certificates).toHaveLength(3);
    expect(tls.findings).toEqual([]);
  });

  it('but a reconstruction that ends without a root still shows an incomplete chain', () => {
    const tls = buildTlsEvidence(
      facts({
        sent: undefined,
        peerChain: [leaf.der],
        authorized: false,
        authorizationError: 'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
      }),
    );
    expect(codes(tls.findings)).toEqual(['high:incomplete_chain']);
  });

  it('TLS 1.2 without an ephemeral key has no forward secrecy; TLS 1.3 always has', () => {
    const rsaKx = buildTlsEvidence(facts({ protocol: 'TLSv1.2', ephemeralKey: {} }));
    expect(rsaKx.connection).toMatchObject({ forward_secrecy: false, ephemeral_key: null });
    expect(codes(rsaKx.findings)).toEqual(['medium:no_forward_secrecy']);
    expect(buildTlsEvidence(facts({ ephemeralKey: null })).connection.forward_secrecy).toBe(true);
  });

  it('the trust verdict combines with the other findings, most severe first', () => {
    const tls = buildTlsEvidence(
      facts({ protocol: 'TLSv1', authorized: false, authorizationError: 'SELF_SIGNED_CERT_IN_CHAIN' }),
    );
    expect(codes(tls.findings)).toEqual(['critical:untrusted', 'high:protocol_below_tls_1_2']);
    expect(tls.connection.authorization_error).toBe('SELF_SIGNED_CERT_IN_CHAIN');
    expect(tls.connection.authorization_reason).toBe(
      'the chain ends at Unit Root, a root no trust store includes',
    );
    expect(tls.verdict).toEqual({
      status: 'rejected',
      summary:
        'Browsers reject this certificate: the chain ends at Unit Root, a root no trust store includes.',
    });
  });

  it('a name mismatch is said with the names the certificate has and the one asked for', () => {
    const tls = buildTlsEvidence(
      facts({
        host: 'wrongname.test',
        sni: 'wrongname.test',
        authorized: false,
        authorizationError: 'ERR_TLS_CERT_ALTNAME_INVALID',
      }),
    );
    expect(tls.connection.authorization_reason).toBe('issued for leaf.test, not wrongname.test');
    expect(tls.verdict.summary).toBe(
      'Browsers reject this certificate: issued for leaf.test, not wrongname.test.',
    );
    // The name_mismatch finding explains it already: no second `untrusted` finding.
    expect(codes(tls.findings)).toEqual(['critical:name_mismatch']);
  });

  it('an IP literal host is matched against IP SANs only', () => {
    const tls = buildTlsEvidence(facts({ host: '192.0.2.10', sni: null }));
    expect(tls.connection.hostname_matches).toBe(false);
    expect(codes(tls.findings)).toEqual(['critical:name_mismatch']);
  });

  it(`analyzes at most ${MAX_ANALYZED_CERTIFICATES} certificates of a longer list, and counts them all`, () => {
    const sent = [leaf.der, intermediate.der, ...Array.from({ length: 20 }, () => root.der)];
    const tls = buildTlsEvidence(facts({ sent }));
    expect(tls.chain.sent_count).toBe(22);
    expect(tls.chain.certificates).toHaveLength(MAX_ANALYZED_CERTIFICATES);
  });
});
