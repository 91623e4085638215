/**
 * The TLS verdict (issue 31): a certificate a browser refuses is said to be refused, first, with
 * the reason in words naming the certificate's own names, dates and issuers; OpenSSL's code stays
 * in `authorization_error` for programs.
 */
import { describe, expect, it } from 'vitest';
import type { Finding } from '../../../../src/features/tls/findings.js';
import { rejectionReason, tlsVerdict, type VerdictFacts } from '../../../../src/features/tls/verdict.js';

const leafCert = {
  index: 0,
  subject: 'CN=shop.quillsecure.org',
  issuer: "CN=R11, O=Let's Encrypt, C=US",
  issued_by: 1,
  not_after: '2027-12-29T09:10:45.000Z',
  expired: false,
  self_signed: false,
};
const intermediate = {
  index: 1,
  subject: "CN=R11, O=Let's Encrypt, C=US",
  issuer: 'CN=ISRG Root X1, O=Internet Security Research Group, C=US',
  issued_by: null,
  not_after: '2027-03-12T23:59:59.000Z',
  expired: false,
  self_signed: false,
};

function facts(overrides: Partial<VerdictFacts> = {}): VerdictFacts {
  return {
    host: 'shop.quillsecure.org',
    authorized: true,
    authorizationError: null,
    leaf: {
      san: ['shop.quillsecure.org'],
      issuer: intermediate.subject,
      not_before: '2026-09-30T09:10:46.000Z',
      not_after: '2027-12-29T09:10:45.000Z',
      expired: false,
      days_remaining: 396,
    },
    chain: { certificates: [leafCert, intermediate], root: { subject: intermediate.issuer } },
    findings: [],
    ...overrides,
  };
}

const finding = (code: Finding['code'], severity: Finding['severity']): Finding => ({
  code,
  severity,
  message: '',
});

describe('rejectionReason', () => {
  it('ERR_TLS_CERT_ALTNAME_INVALID: the names it was issued for, not the one asked', () => {
    expect(
      rejectionReason(
        facts({ host: 'wrongname.tarnwood.com', authorizationError: 'ERR_TLS_CERT_ALTNAME_INVALID' }),
      ),
    ).toBe('issued for shop.quillsecure.org, not wrongname.tarnwood.com');
    const many = facts({
      host: 'x.example',
      authorizationError: 'ERR_TLS_CERT_ALTNAME_INVALID',
      leaf: { ...facts().leaf, san: ['a.example', 'b.example', 'c.example', 'd.example', 'e.example'] },
    });
    expect(rejectionReason(many)).toBe(
      'issued for a.example, b.example, c.example and 2 more, not x.example',
    );
  });

  it('CERT_HAS_EXPIRED: the leaf’s date, or the expired issuer by name', () => {
    const leafExpired = facts({
      authorizationError: 'CERT_HAS_EXPIRED',
      leaf: { ...facts().leaf, expired: true, not_after: '2026-10-24T09:10:45.000Z', days_remaining: -35 },
    });
    expect(rejectionReason(leafExpired)).toBe('it expired on 2026-10-24 09:10 UTC');
    const issuerExpired = facts({
      authorizationError: 'CERT_HAS_EXPIRED',
      chain: {
        certificates: [leafCert, { ...intermediate, expired: true, not_after: '2026-01-01T00:00:00.000Z' }],
        root: null,
      },
    });
    expect(rejectionReason(issuerExpired)).toBe(
      'the issuing certificate R11 expired on 2026-01-01 00:00 UTC',
    );
  });

  it('self-signed, an untrusted root, a missing issuer: each names the certificate concerned', () => {
    expect(rejectionReason(facts({ authorizationError: 'DEPTH_ZERO_SELF_SIGNED_CERT' }))).toMatch(
      /^it is self-signed/,
    );
    expect(
      rejectionReason(
        facts({
          authorizationError: 'SELF_SIGNED_CERT_IN_CHAIN',
          chain: { ...facts().chain, root: { subject: 'CN=Corp Root CA, O=Corp' } },
        }),
      ),
    ).toBe('the chain ends at Corp Root CA, a root no trust store includes');
    // The leaf alone was sent: the missing certificate is its issuer.
    const leafOnly = facts({
      authorizationError: 'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
      chain: { certificates: [{ ...leafCert, issued_by: null }], root: null },
    });
    expect(rejectionReason(leafOnly)).toMatch(
      /^its issuer R11 is neither sent by the server nor in any trust store/,
    );
    // Leaf and intermediate sent, the root unknown: the intermediate's issuer is the one missing.
    const noRoot = facts({
      authorizationError: 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
      chain: { ...facts().chain, root: null },
    });
    expect(rejectionReason(noRoot)).toMatch(/^its issuer ISRG Root X1 is neither sent/);
  });

  it('an unknown code is named as it is, never dropped', () => {
    expect(rejectionReason(facts({ authorizationError: 'SOMETHING_NEW' }))).toBe(
      'the chain does not verify (OpenSSL: SOMETHING_NEW)',
    );
  });
});

describe('tlsVerdict', () => {
  it('trusted: for whom and until when, in the one date format', () => {
    expect(tlsVerdict(facts())).toEqual({
      status: 'trusted',
      summary: 'Trusted by browsers for shop.quillsecure.org until 2027-12-29 09:10 UTC (396 days).',
    });
  });

  it('rejected: the reason in words, whatever the days remaining', () => {
    const verdict = tlsVerdict(
      facts({
        host: 'wrongname.tarnwood.com',
        authorized: false,
        authorizationError: 'ERR_TLS_CERT_ALTNAME_INVALID',
      }),
    );
    expect(verdict).toEqual({
      status: 'rejected',
      summary:
        'Browsers reject this certificate: issued for shop.quillsecure.org, not wrongname.tarnwood.com.',
    });
  });

  it('trusted with something to fix now: expiry within 14 days, or another serious finding', () => {
    const soon = tlsVerdict(
      facts({
        leaf: { ...facts().leaf, days_remaining: 9, not_after: '2026-12-07T00:00:00.000Z' },
        findings: [finding('expires_within_14_days', 'high')],
      }),
    );
    expect(soon).toEqual({
      status: 'trusted_with_warnings',
      summary: 'Trusted by browsers, but it expires on 2026-12-07 00:00 UTC (9 days): renew it now.',
    });
    const weak = tlsVerdict(
      facts({ findings: [finding('weak_key', 'high'), finding('chain_contains_root', 'low')] }),
    );
    expect(weak.status).toBe('trusted_with_warnings');
    expect(weak.summary).toMatch(/with a serious problem to fix \(below\)\.$/);
    const month = tlsVerdict(facts({ findings: [finding('expires_within_30_days', 'medium')] }));
    expect(month.status).toBe('trusted');
    expect(month.summary).toMatch(/renew it soon\.$/);
  });
});
