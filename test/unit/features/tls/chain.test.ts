import { beforeAll, describe, expect, it } from 'vitest';
import { type ParsedCertificate, parseCertificate } from '../../../../src/features/tls/certificate.js';
import { analyzeChain } from '../../../../src/features/tls/chain.js';
import { makeCert, makeChain } from './make-cert.js';

const DAY = 86_400_000;
const now = new Date();
let root: ParsedCertificate;
let intermediate: ParsedCertificate;
let leaf: ParsedCertificate;
let stranger: ParsedCertificate;
let expiredIntermediate: ParsedCertificate;
let leafOfExpired: ParsedCertificate;
let selfSignedLeaf: ParsedCertificate;

beforeAll(async () => {
  const chain = await makeChain();
  [root, intermediate, leaf] = [chain.root, chain.intermediate, chain.leaf].map((c) =>
    parseCertificate(c.der),
  ) as [ParsedCertificate, ParsedCertificate, ParsedCertificate];
  stranger = parseCertificate((await makeCert({ subject: 'CN=Someone Else CA', ca: true })).der);
  const old = await makeCert({
    subject: 'CN=Old Intermediate',
    ca: true,
    issuer: chain.root,
    notBefore: new Date(Date.now() - 400 * DAY),
    notAfter: new Date(Date.now() - DAY),
  });
  expiredIntermediate = parseCertificate(old.der);
  leafOfExpired = parseCertificate((await makeCert({ subject: 'CN=x.test', issuer: old })).der);
  selfSignedLeaf = parseCertificate(
    (await makeCert({ subject: 'CN=self.test', dnsNames: ['self.test'] })).der,
  );
});

const run = (sent: ParsedCertificate[], storeIssuers: ParsedCertificate[] = [], protocol = 'TLSv1.3') =>
  analyzeChain({ sent, storeIssuers, protocol, now });
const codes = (a: ReturnType<typeof run>) => a.findings.map((f) => `${f.severity}:${f.code}`);
const roles = (a: ReturnType<typeof run>) => a.certificates.map((c) => [c.role, c.issued_by]);

describe('analyzeChain', () => {
  it('leaf + intermediate, root in the trust store: nothing to report', () => {
    const a = run([leaf, intermediate], [root]);
    expect(roles(a)).toEqual([
      ['leaf', 1],
      ['intermediate', null],
    ]);
    expect(a.root).toEqual({
      subject: root.subject,
      fingerprint_sha256: root.fingerprintSha256,
      source: 'trust store',
    });
    expect(a.findings).toEqual([]);
  });

  it('root sent at the end: in order, but a root was sent (low)', () => {
    const a = run([leaf, intermediate, root]);
    expect(roles(a)).toEqual([
      ['leaf', 1],
      ['intermediate', 2],
      ['root', null],
    ]);
    expect(a.root?.source).toBe('sent');
    expect(codes(a)).toEqual(['low:chain_contains_root']);
  });

  it('leaf, root, intermediate: wrong order is low on TLS 1.3 and medium on TLS 1.2 (RFC 5246 §7.4.2)', () => {
    expect(codes(run([leaf, root, intermediate]))).toEqual([
      'low:chain_wrong_order',
      'low:chain_contains_root',
    ]);
    const tls12 = run([leaf, root, intermediate], [], 'TLSv1.2');
    expect(codes(tls12)).toEqual(['medium:chain_wrong_order', 'low:chain_contains_root']);
    expect(tls12.findings[0]!.message).toContain('#0 → #2 → #1');
  });

  it('leaf only, issuer not in the store: incomplete (high)', () => {
    const a = run([leaf], []);
    expect(a.root).toBeNull();
    expect(codes(a)).toEqual(['high:incomplete_chain']);
    expect(a.findings[0]!.message).toContain(intermediate.subject);
  });

  it('leaf only, but the store has its issuer (leaf issued straight by a root): complete', () => {
    const a = run([intermediate], [root]);
    expect(a.findings).toEqual([]);
    expect(a.root?.source).toBe('trust store');
  });

  it('a store certificate that did not issue the last one does not complete the chain', () => {
    expect(codes(run([leaf], [stranger]))).toEqual(['high:incomplete_chain']);
  });

  it('a certificate off the path is unrelated (low)', () => {
    const a = run([leaf, intermediate, stranger], [root]);
    expect(roles(a)[2]).toEqual(['unrelated', null]);
    // The stranger is a self-signed CA: sent, it is also a root the server should not send.
    expect(codes(a)).toEqual(['low:chain_contains_root', 'low:chain_unrelated_certificates']);
  });

  it('an expired intermediate on the path is critical; off the path high', () => {
    const on = run([leafOfExpired, expiredIntermediate], [root]);
    expect(codes(on)).toEqual(['critical:expired_intermediate']);
    expect(on.findings[0]!.message).toContain('on the path');
    const off = run([leaf, intermediate, expiredIntermediate], [root]);
    expect(codes(off)).toEqual(['low:chain_unrelated_certificates', 'high:expired_intermediate']);
  });

  it('a self-signed leaf is its own root: no chain findings (trust is judged elsewhere)', () => {
    const a = run([selfSignedLeaf]);
    expect(roles(a)).toEqual([['leaf', null]]);
    expect(a.root).toMatchObject({ subject: 'CN=self.test', source: 'sent' });
    expect(a.findings).toEqual([]);
  });

  it('needs the leaf', () => {
    expect(() => run([])).toThrow(RangeError);
  });
});
