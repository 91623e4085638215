/**
 * VMC validation (bimi-vmc.ts, bimi-logotype.ts) on certificates made by the
 * test Mark Verifying Authority (test/fakes/test-vmc.ts), each judged by
 * netdiag and by mailauth's own validateVMC, the reference peer: they must
 * agree, valid or not. Issue 19: netdiag used to award the VMC point to
 * certificates with no Mark Verifying Authority behind them and no mark
 * inside, which both peers (mailauth and checkdmarc) refuse.
 */
import 'reflect-metadata';
import * as x509 from '@peculiar/x509';
import { beforeAll, describe, expect, it } from 'vitest';
import { bundledMarkRoots, parseMarkRoots } from '../../../../src/features/email/bimi-roots.js';
import { checkVmc, type VmcInput } from '../../../../src/features/email/bimi-vmc.js';
import { getTestPki } from '../../../fakes/test-ca.js';
import {
  issueVmc,
  MARK_SVG,
  type TestMarkAuthority,
  testMarkAuthority,
  type VmcOptions,
} from '../../../fakes/test-vmc.js';
import { fixtureText } from '../../../fixtures/email/zones.js';
import { mailauthVerdict } from './mailauth-vmc-peer.js';

const DAY = 86_400_000;
const OTHER_SVG = MARK_SVG.replace('Strong Example', 'Someone Else');

let mva: TestMarkAuthority;
beforeAll(async () => {
  mva = await testMarkAuthority();
});

function netdiag(pem: string, over: Partial<VmcInput> = {}) {
  return checkVmc({
    pem,
    domains: ['brand.test'],
    selector: 'default',
    location: Buffer.from(MARK_SVG),
    roots: mva.roots(),
    now: Date.now(),
    ...over,
  });
}

const errors = (result: ReturnType<typeof checkVmc>) =>
  result.findings
    .filter((f) => f.severity === 'error')
    .map((f) => f.message.replace(/\d{4}-\d\d-\d\d \d\d:\d\d UTC/g, '<date>'));

describe('netdiag and mailauth agree on each VMC', () => {
  // [case, how the VMC is made, the l= logo, valid, netdiag's errors]
  const cases: [string, VmcOptions, string, boolean, string[]][] = [
    [
      'valid: MVA chain, BIMI EKU, logotype with the SVG and its sha256, the same SVG at l=',
      { domains: ['brand.test'] },
      MARK_SVG,
      true,
      [],
    ],
    [
      'valid: the hash in SHA-1, as most VMCs in use state it',
      { domains: ['brand.test'], hash: 'sha1' },
      MARK_SVG,
      true,
      [],
    ],
    ['valid: the root sent too', { domains: ['brand.test'], withRoot: true }, MARK_SVG, true, []],
    [
      'no logotype extension',
      { domains: ['brand.test'], svg: null },
      MARK_SVG,
      false,
      [
        'The certificate has no logotype extension (1.3.6.1.5.5.7.1.12): it carries no mark, so it is not a VMC.',
      ],
    ],
    [
      'the logotype hash is of another SVG',
      { domains: ['brand.test'], hashOf: OTHER_SVG },
      MARK_SVG,
      false,
      [
        expect.stringMatching(
          /^The embedded SVG does not match the logotype hash \(sha256 [0-9a-f]{64}\)\.$/,
        ),
      ],
    ],
    [
      'the SVG at l= is not the mark in the VMC',
      { domains: ['brand.test'] },
      OTHER_SVG,
      false,
      [
        'The SVG at l= is not the one in the VMC (its sha256 differs from the logotype hash): receivers that compare them show no logo.',
      ],
    ],
    [
      'chains only to the TLS test CA, not a Mark Verifying Authority',
      { domains: ['brand.test'], issuer: 'tls-ca' },
      MARK_SVG,
      false,
      [
        'The chain ends at CN=netdiag test TLS intermediate, O=netdiag tests, issued by CN=netdiag test CA, O=netdiag tests, which is not a Mark Verifying Authority root: receivers do not trust this VMC.',
      ],
    ],
    [
      'expired',
      {
        domains: ['brand.test'],
        notBefore: new Date(Date.now() - 400 * DAY),
        notAfter: new Date(Date.now() - DAY),
      },
      MARK_SVG,
      false,
      ['The VMC expired on <date>.'],
    ],
    [
      'the SVG in the data: URI is not gzip-compressed',
      { domains: ['brand.test'], gzip: false },
      MARK_SVG,
      false,
      ['The embedded SVG is not gzip-compressed, as an SVG in a data: URI must be.'],
    ],
    [
      'no BIMI extended key usage',
      { domains: ['brand.test'], bimiEku: false },
      MARK_SVG,
      false,
      ['The certificate lacks the BIMI extended key usage (1.3.6.1.5.5.7.3.31): it is not a VMC.'],
    ],
    [
      'for another domain',
      { domains: ['other.test'] },
      MARK_SVG,
      false,
      ['The VMC does not name brand.test (it names other.test).'],
    ],
  ];

  it.each(cases)('%s', async (_, opts, location, valid, expected) => {
    const pem = await issueVmc(opts);
    const ours = netdiag(pem, { location: Buffer.from(location) });
    expect(errors(ours)).toEqual(expected);
    expect(ours.valid).toBe(valid);
    const theirs = await mailauthVerdict({
      pem,
      svg: location,
      domain: 'brand.test',
      extraRoots: [mva.rootPem],
    });
    expect(theirs.valid, `mailauth: ${theirs.reason}`).toBe(valid);
  });

  it('an ordinary TLS server certificate of the test CA: neither calls it a VMC', async () => {
    const pki = await getTestPki();
    const pem = `${pki.server.certPem}\n${pki.caPem}`;
    const ours = netdiag(pem, { domains: ['localhost'] });
    expect(ours.valid).toBe(false);
    expect(errors(ours)).toEqual([
      'The certificate lacks the BIMI extended key usage (1.3.6.1.5.5.7.3.31): it is not a VMC.',
      'The chain ends at the self-signed CN=netdiag test CA, O=netdiag tests, which is not a Mark Verifying Authority root: receivers do not trust this VMC.',
      'The certificate has no logotype extension (1.3.6.1.5.5.7.1.12): it carries no mark, so it is not a VMC.',
    ]);
    expect(
      (await mailauthVerdict({ pem, svg: MARK_SVG, domain: 'localhost', extraRoots: [mva.rootPem] })).valid,
    ).toBe(false);
  });

  it('without the test MVA among the roots, the same valid VMC is refused by both', async () => {
    const pem = await issueVmc({ domains: ['brand.test'] });
    const ours = netdiag(pem, { roots: bundledMarkRoots() });
    expect(ours.valid).toBe(false);
    expect(ours.report.mva_root).toBeNull();
    expect((await mailauthVerdict({ pem, svg: MARK_SVG, domain: 'brand.test' })).valid).toBe(false);
  });
});

describe('VMC facts and findings', () => {
  it('reports the root, the mark and its hashes, and says what it did not check', async () => {
    const result = netdiag(await issueVmc({ domains: ['brand.test'] }));
    expect(result.report).toMatchObject({
      valid: true,
      subject: 'CN=brand.test, O=Test Brand',
      issuer: 'CN=netdiag test VMC issuing CA, O=netdiag tests',
      domains: ['brand.test'],
      bimi_eku: true,
      logotype: true,
      mva_root: 'CN=netdiag test Mark Verifying Authority, O=netdiag tests',
      logo: {
        media_type: 'image/svg+xml',
        hash_algorithm: 'sha256',
        matches_hash: true,
        matches_location: true,
      },
    });
    expect(result.findings).toEqual([
      {
        severity: 'info',
        message:
          'Not checked: whether the VMC is revoked (CRL) and its Certificate Transparency proofs (SCTs).',
        rfc: 'draft-fetch-validation-vmc-wchuang',
      },
    ]);
  });

  it('with no logo fetched from l=, the comparison is unknown, not failed', async () => {
    const result = netdiag(await issueVmc({ domains: ['brand.test'] }), { location: undefined });
    expect(result.valid).toBe(true);
    expect(result.report.logo?.matches_location).toBeNull();
  });

  it('the domain: the author domain, its organizational domain, or <selector>._bimi.<either> for that selector only', async () => {
    const org = await issueVmc({ domains: ['brand.test'] });
    expect(netdiag(org, { domains: ['mail.brand.test', 'brand.test'] }).valid).toBe(true);
    const sel = await issueVmc({ domains: ['news._bimi.brand.test'] });
    expect(netdiag(sel, { domains: ['mail.brand.test', 'brand.test'], selector: 'news' }).valid).toBe(true);
    expect(errors(netdiag(sel, { domains: ['mail.brand.test', 'brand.test'], selector: 'default' }))).toEqual(
      ['The VMC names neither mail.brand.test nor brand.test (it names news._bimi.brand.test).'],
    );
    const sibling = await issueVmc({ domains: ['shop.brand.test'] });
    expect(netdiag(sibling, { domains: ['mail.brand.test', 'brand.test'] }).valid).toBe(false);
  });

  it('an embedded SVG that breaks SVG Tiny PS makes the VMC invalid', async () => {
    const bad = fixtureText('logo-bad.svg');
    const result = netdiag(await issueVmc({ domains: ['brand.test'], svg: bad }), {
      location: Buffer.from(bad),
    });
    expect(errors(result)).toEqual([
      'The SVG in the VMC fails the SVG Tiny PS checks: The root <svg> must have version="1.2", not "1.1".',
    ]);
  });

  it('an issuing CA that has expired breaks the chain', async () => {
    const pki = await getTestPki();
    const issuer = await pki.issueIntermediate({ notAfter: new Date(Date.now() - DAY) });
    const leaf = await pki.issue({ dnsNames: ['brand.test'], issuer });
    const result = netdiag(`${leaf.certPem}\n${issuer.certPem}`, {
      roots: [...mva.roots(), ...rootsOf(pki.caPem)],
    });
    expect(errors(result)).toContain(
      'The issuing certificate CN=netdiag test intermediate, O=netdiag tests expired on <date>.',
    );
  });

  it('certificates out of issuing order are refused', async () => {
    const pem = await issueVmc({ domains: ['brand.test'], withRoot: true });
    const [leaf, issuer, root] = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g)!;
    expect(errors(netdiag(`${leaf}\n${root}\n${issuer}\n`))).toContain(
      'Certificate 1 of the chain is not issued by certificate 2 (the file must list the VMC, then each issuer in turn, each signing the one before).',
    );
  });

  it('not a certificate at all', () => {
    expect(netdiag('<html>').findings.map((f) => f.message)).toEqual([
      'The a= URL does not serve a PEM certificate.',
    ]);
  });

  it('a root with Distrust-After refuses marks issued later', async () => {
    const pem = await issueVmc({ domains: ['brand.test'] });
    const [root] = rootsOf(mva.rootPem);
    const cutOff = new Date(Date.now() - 30 * DAY);
    const result = netdiag(pem, { roots: [{ ...root!, distrustAfter: cutOff }] });
    expect(errors(result)).toEqual([
      'CN=netdiag test Mark Verifying Authority, O=netdiag tests is trusted only for marks issued up to <date>; this VMC was issued <date>.',
    ]);
  });

  // @postalsys/vmc (mailauth's VMC parser) matches issuer and root by name and key identifiers only and
  // never checks a signature; netdiag verifies every signature up to the root (RFC 5280 §6.1.3 (a)(1)).
  it('a root forged with the MVA root’s name: netdiag refuses it, mailauth (names only) does not', async () => {
    const keys = await crypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, true, [
      'sign',
      'verify',
    ]);
    const forged = await x509.X509CertificateGenerator.createSelfSigned({
      serialNumber: '0a0b',
      name: 'CN=netdiag test Mark Verifying Authority, O=netdiag tests',
      notBefore: new Date(Date.now() - DAY),
      notAfter: new Date(Date.now() + 30 * DAY),
      keys,
      signingAlgorithm: { name: 'ECDSA', hash: 'SHA-256' },
      extensions: [new x509.BasicConstraintsExtension(true, 1, true)],
    });
    const genuine = await issueVmc({ domains: ['brand.test'] });
    const [leaf, issuer] = genuine.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g)!;
    // The genuine VMC and issuing CA, then a self-signed root that only looks like the MVA's.
    const pem = `${leaf}\n${issuer}\n${forged.toString('pem')}\n`;
    const ours = netdiag(pem);
    expect(ours.valid).toBe(false);
    expect(errors(ours)).toEqual([
      'Certificate 2 of the chain is not issued by certificate 3 (the file must list the VMC, then each issuer in turn, each signing the one before).',
      'The chain ends at the self-signed CN=netdiag test Mark Verifying Authority, O=netdiag tests, which is not a Mark Verifying Authority root: receivers do not trust this VMC.',
    ]);
    expect(
      (await mailauthVerdict({ pem, svg: MARK_SVG, domain: 'brand.test', extraRoots: [mva.rootPem] })).valid,
    ).toBe(true);
  });
});

function rootsOf(pem: string) {
  return parseMarkRoots(pem, 'test');
}
