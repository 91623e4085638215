import { beforeAll, describe, expect, it } from 'vitest';
import { type ParsedCertificate, parseCertificate } from '../../../../src/features/tls/certificate.js';
import {
  connectionFindings,
  cryptoFindings,
  daysRemaining,
  type Finding,
  nameFindings,
  sortFindings,
  trustFindings,
  validityFindings,
} from '../../../../src/features/tls/findings.js';
import { makeCert } from './make-cert.js';

let leaf: ParsedCertificate;
let rsa1024: ParsedCertificate;
let sha1Signed: ParsedCertificate;
let sha1SelfSigned: ParsedCertificate;

beforeAll(async () => {
  const root = await makeCert({ subject: 'CN=Root', ca: true });
  leaf = parseCertificate(
    (
      await makeCert({
        subject: 'CN=a.test',
        dnsNames: ['a.test'],
        issuer: root,
        notBefore: new Date('2030-01-01T00:00:00Z'),
        notAfter: new Date('2030-03-01T00:00:00Z'),
      })
    ).der,
  );
  rsa1024 = parseCertificate((await makeCert({ subject: 'CN=rsa.test', key: 'rsa-1024', issuer: root })).der);
  sha1Signed = parseCertificate(
    (await makeCert({ subject: 'CN=sha1.test', issuer: root, hash: 'SHA-1' })).der,
  );
  sha1SelfSigned = parseCertificate(
    (await makeCert({ subject: 'CN=Old Root', ca: true, hash: 'SHA-1' })).der,
  );
});

const at = (iso: string) => new Date(iso);
const codes = (findings: Finding[]) => findings.map((f) => `${f.severity}:${f.code}`);

describe('validityFindings (RFC 5280 §4.1.2.5: valid through notAfter inclusive)', () => {
  it.each([
    ['2029-12-31T23:59:59.999Z', ['critical:not_yet_valid']],
    ['2030-01-01T00:00:00Z', []],
    ['2030-01-29T23:59:59.999Z', []], // 30 days and 1 ms left
    ['2030-01-30T00:00:00Z', ['medium:expires_within_30_days']], // exactly 30 days left
    ['2030-02-14T23:59:59.999Z', ['medium:expires_within_30_days']], // 14 days and 1 ms left
    ['2030-02-15T00:00:00Z', ['high:expires_within_14_days']], // exactly 14 days left
    ['2030-03-01T00:00:00Z', ['high:expires_within_14_days']], // the last valid instant
    ['2030-03-01T00:00:00.001Z', ['critical:expired']],
  ])('at %s → %j', (now, expected) => {
    expect(codes(validityFindings(leaf, at(now)))).toEqual(expected);
  });

  it('reports the whole days left in the message', () => {
    expect(daysRemaining(leaf, at('2030-01-30T00:00:00Z'))).toBe(30);
    expect(validityFindings(leaf, at('2030-01-30T00:00:00Z'))[0]!.message).toContain('expires in 30 days');
  });

  it('daysRemaining rounds down and goes negative once expired', () => {
    expect(daysRemaining(leaf, at('2030-02-27T12:00:00Z'))).toBe(1);
    expect(daysRemaining(leaf, at('2030-03-01T00:00:01Z'))).toBe(-1);
  });
});

describe('nameFindings', () => {
  it('names what the certificate covers', () => {
    expect(nameFindings('a.test', true, leaf)).toEqual([]);
    const [f] = nameFindings('b.test', false, leaf);
    expect(f).toMatchObject({ code: 'name_mismatch', severity: 'critical' });
    expect(f!.message).toContain('b.test');
    expect(f!.message).toContain('a.test');
  });
});

describe('connectionFindings', () => {
  it.each([
    ['TLSv1.3', true, []],
    ['TLSv1.2', true, []],
    ['TLSv1.2', false, ['medium:no_forward_secrecy']],
    ['TLSv1.1', true, ['high:protocol_below_tls_1_2']],
    ['TLSv1', false, ['high:protocol_below_tls_1_2', 'medium:no_forward_secrecy']],
  ] as const)('%s, forward secrecy %s → %j', (protocol, fs, expected) => {
    expect(codes(connectionFindings(protocol, fs))).toEqual(expected);
  });
});

describe('cryptoFindings (CA/B BRs §6.1.5, §7.1.3.2)', () => {
  it('P-256 with SHA-256 is fine', () => {
    expect(cryptoFindings([leaf])).toEqual([]);
  });

  it('RSA below 2048 bits is a weak key', () => {
    const found = cryptoFindings([rsa1024]);
    expect(codes(found)).toEqual(['high:weak_key']);
    expect(found[0]!.message).toContain('RSA 1024 bits');
  });

  it('an EC curve outside P-256/384/521 and DSA are weak keys', () => {
    const k1: ParsedCertificate = { ...leaf, key: { type: 'EC', curve: 'secp256k1' } };
    const dsa: ParsedCertificate = { ...leaf, key: { type: 'DSA', bits: 2048 } };
    expect(cryptoFindings([k1])[0]!.message).toContain('secp256k1');
    expect(codes(cryptoFindings([dsa]))).toEqual(['high:weak_key']);
  });

  it('a SHA-1 signature is weak, except on a self-signed root whose signature nobody checks', () => {
    expect(codes(cryptoFindings([sha1Signed]))).toEqual(['high:weak_signature']);
    expect(cryptoFindings([leaf, sha1SelfSigned])).toEqual([]);
  });

  it('one finding per kind, naming every certificate concerned', () => {
    const found = cryptoFindings([rsa1024, sha1Signed, rsa1024]);
    expect(codes(found)).toEqual(['high:weak_key', 'high:weak_signature']);
    expect(found[0]!.message).toContain('leaf');
    expect(found[0]!.message).toContain('(#2)');
  });
});

describe('trustFindings', () => {
  const f = (code: Finding['code']): Finding => ({ code, severity: 'critical', message: '' });

  it('authorized: nothing', () => {
    expect(trustFindings(true, null, '', [])).toEqual([]);
  });

  it.each([
    ['ERR_TLS_CERT_ALTNAME_INVALID', 'name_mismatch'],
    ['CERT_HAS_EXPIRED', 'expired'],
    ['CERT_HAS_EXPIRED', 'expired_intermediate'],
    ['CERT_NOT_YET_VALID', 'not_yet_valid'],
    ['UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'incomplete_chain'],
    ['UNABLE_TO_GET_ISSUER_CERT_LOCALLY', 'incomplete_chain'],
  ] as const)('%s is explained by %s: no untrusted finding', (error, code) => {
    expect(trustFindings(false, error, 'why', [f(code)])).toEqual([]);
  });

  it.each([
    ['DEPTH_ZERO_SELF_SIGNED_CERT', []],
    ['SELF_SIGNED_CERT_IN_CHAIN', []],
    ['CERT_HAS_EXPIRED', []], // e.g. an expired root from the trust store: nothing else says so
    ['UNABLE_TO_GET_ISSUER_CERT_LOCALLY', ['expired']],
    ['ERR_TLS_CERT_ALTNAME_INVALID', []],
  ] as const)('%s with %j → untrusted, with the reason in words and the code', (error, found) => {
    const out = trustFindings(
      false,
      error,
      'the reason in words',
      found.map((c) => f(c)),
    );
    expect(codes(out)).toEqual(['critical:untrusted']);
    expect(out[0]!.message).toContain(`the reason in words (${error})`);
  });
});

describe('sortFindings', () => {
  it('most severe first, detection order within a severity', () => {
    const list: Finding[] = [
      { code: 'chain_contains_root', severity: 'low', message: '1' },
      { code: 'weak_key', severity: 'high', message: '2' },
      { code: 'expired', severity: 'critical', message: '3' },
      { code: 'weak_signature', severity: 'high', message: '4' },
    ];
    expect(sortFindings(list).map((x) => x.message)).toEqual(['3', '2', '4', '1']);
  });
});
