/**
 * The Verified Mark Certificate a BIMI record names at `a=` (BIMI Group VMC
 * Requirements, RFC 9399 logotypes), parsed with node:crypto.
 */
import { X509Certificate } from 'node:crypto';
import { BIMI_SPEC } from './bimi-record.js';
import { type Finding, finding } from './types.js';

const VMC = 'BIMI Group VMC Requirements';

/** A VMC chain is a few certificates; anything near this is not one. */
export const VMC_MAX_BYTES = 64 * 1024;
/** id-kp-BrandIndicatorforMessageIdentification, IANA "SMI Security for PKIX Extended Key Purpose" registry. */
export const BIMI_EKU = '1.3.6.1.5.5.7.3.31';
/** DER of OID 1.3.6.1.5.5.7.1.12, id-pe-logotype (RFC 9399), which carries the mark in a VMC. */
const LOGOTYPE_OID_DER = Buffer.from('06082b0601050507010c', 'hex');

export interface VmcReport {
  url: string;
  http_status: number | null;
  valid: boolean;
  subject: string | null;
  issuer: string | null;
  not_before: string | null;
  not_after: string | null;
  domains: string[];
  bimi_eku: boolean;
  logotype: boolean;
}

/** What the certificate itself says; the evaluation adds where it was fetched from. */
export type VmcFacts = Omit<VmcReport, 'url' | 'http_status'>;

/** The facts before any certificate has been read: nothing known, nothing valid. */
export function unreadVmc(): VmcFacts {
  return {
    valid: false,
    subject: null,
    issuer: null,
    not_before: null,
    not_after: null,
    domains: [],
    bimi_eku: false,
    logotype: false,
  };
}

/**
 * Checks a VMC (PEM chain, leaf first): dates, the BIMI extended key usage,
 * the domain among its subjectAltNames, the chain's own signatures, and the
 * logotype extension. The trust anchor (a Mark Verifying Authority root) is
 * not checked: this service ships no MVA root list, and says so.
 */
export function checkVmc(
  pem: string,
  domain: string,
  now: number,
): { valid: boolean; report: VmcFacts; findings: Finding[] } {
  const findings: Finding[] = [];
  const report = unreadVmc();
  const blocks = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  const certs: X509Certificate[] = [];
  for (const block of blocks) {
    try {
      certs.push(new X509Certificate(block));
    } catch {
      findings.push(finding('error', 'A certificate in the VMC file does not parse.', VMC));
    }
  }
  const leaf = certs[0];
  if (!leaf) {
    findings.push(finding('error', 'The a= URL does not serve a PEM certificate.', BIMI_SPEC));
    return { valid: false, report, findings };
  }
  const notBefore = Date.parse(leaf.validFrom);
  const notAfter = Date.parse(leaf.validTo);
  report.subject = leaf.subject.replace(/\n/g, ', ');
  report.issuer = leaf.issuer.replace(/\n/g, ', ');
  report.not_before = Number.isNaN(notBefore) ? null : new Date(notBefore).toISOString();
  report.not_after = Number.isNaN(notAfter) ? null : new Date(notAfter).toISOString();
  report.domains = (leaf.subjectAltName ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.startsWith('DNS:'))
    .map((s) => s.slice(4).toLowerCase());
  report.bimi_eku = Array.isArray(leaf.keyUsage) && leaf.keyUsage.includes(BIMI_EKU);
  report.logotype = leaf.raw.includes(LOGOTYPE_OID_DER);
  if (now < notBefore)
    findings.push(finding('error', `The VMC is not valid before ${report.not_before}.`, VMC));
  if (now > notAfter) findings.push(finding('error', `The VMC expired on ${report.not_after}.`, VMC));
  if (!report.bimi_eku) {
    findings.push(
      finding(
        'error',
        `The certificate lacks the BIMI extended key usage (${BIMI_EKU}): it is not a VMC.`,
        VMC,
      ),
    );
  }
  if (!report.domains.includes(domain)) {
    findings.push(
      finding(
        'error',
        `The VMC does not name ${domain} (it names ${report.domains.join(', ') || 'no domain'}).`,
        VMC,
      ),
    );
  }
  for (let i = 0; i + 1 < certs.length; i++) {
    const child = certs[i]!;
    const parent = certs[i + 1]!;
    if (!child.checkIssued(parent) || !child.verify(parent.publicKey)) {
      findings.push(
        finding('error', `Certificate ${i + 1} of the chain is not signed by certificate ${i + 2}.`, VMC),
      );
    }
  }
  if (!report.logotype)
    findings.push(finding('warning', 'The VMC has no logotype extension holding the mark.', 'RFC 9399'));
  findings.push(
    finding(
      'info',
      'The chain was checked for consistency; its root was not checked against the Mark Verifying Authorities.',
      VMC,
    ),
  );
  report.valid = !findings.some((f) => f.severity === 'error');
  return { valid: report.valid, report, findings };
}
