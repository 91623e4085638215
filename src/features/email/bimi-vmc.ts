/**
 * The Verified Mark Certificate a BIMI record names at `a=`, validated as
 * receivers validate it (draft-fetch-validation-vmc-wchuang, "Validation of
 * Verified Mark Certificate") and as both peers netdiag is compared with do
 * (mailauth through @postalsys/vmc; checkdmarc): the chain verifies to a Mark
 * Verifying Authority root (bimi-roots.ts), never to the system store; the
 * leaf is in its dates, has the BIMI extended key usage, names the domain and
 * carries the mark in a logotype extension (bimi-logotype.ts) whose SVG
 * matches its hash, passes the SVG Tiny PS checks and is the one at `l=`.
 * Pure: the PEM text, the roots and the clock in, facts and findings out.
 *
 * Not checked, and the findings say so: revocation (CRL) and the
 * Certificate Transparency proofs the draft also asks receivers to verify.
 */
import { formatDateTime } from '../../client/words.js';
import { issuedBy, type ParsedCertificate, parseCertificate } from '../tls/certificate.js';
import { digestMatches, readLogotype } from './bimi-logotype.js';
import { BIMI_SPEC } from './bimi-record.js';
import { type MarkRoot, pemBlocks } from './bimi-roots.js';
import { checkSvg } from './bimi-svg.js';
import { type Finding, finding } from './types.js';

const VMC = 'BIMI Group VMC Requirements';
const VALIDATION = 'draft-fetch-validation-vmc-wchuang';
const PATHS = 'RFC 5280 §6.1';

/** A VMC chain is a few certificates; anything near this is not one. */
export const VMC_MAX_BYTES = 64 * 1024;
/** id-kp-BrandIndicatorforMessageIdentification, IANA "SMI Security for PKIX Extended Key Purpose" registry. */
export const BIMI_EKU = '1.3.6.1.5.5.7.3.31';

export interface VmcLogo {
  media_type: string;
  /** The first hash the extension states that netdiag computes ('sha256', 'sha1'), else its OID. */
  hash_algorithm: string | null;
  hash: string | null;
  /** The embedded SVG hashes to the logotype hash. */
  matches_hash: boolean;
  /** The SVG at l= hashes to it too; null when no SVG was fetched from l=. */
  matches_location: boolean | null;
}

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
  /** The Mark Verifying Authority root the chain verifies to (its subject), null when none. */
  mva_root: string | null;
  logo: VmcLogo | null;
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
    mva_root: null,
    logo: null,
  };
}

export interface VmcInput {
  /** The file a= serves: PEM certificates, the VMC first, then its issuers. */
  pem: string;
  /** The names the VMC may be for: the author domain and its organizational domain. */
  domains: readonly string[];
  /** The selector of the record, for SANs of the form `<selector>._bimi.<domain>`. */
  selector: string;
  /** The SVG fetched from l=, when there is one, to compare with the mark. */
  location?: Buffer;
  roots: readonly MarkRoot[];
  now: number;
}

export function checkVmc(input: VmcInput): { valid: boolean; report: VmcFacts; findings: Finding[] } {
  const findings: Finding[] = [];
  const error = (message: string, rfc: string) => findings.push(finding('error', message, rfc));
  const report = unreadVmc();
  const certs: ParsedCertificate[] = [];
  for (const [i, block] of pemBlocks(input.pem).entries()) {
    try {
      certs.push(parseCertificate(block.der));
    } catch {
      error(`Certificate ${i + 1} in the VMC file does not parse.`, VALIDATION);
    }
  }
  const leaf = certs[0];
  if (!leaf || findings.length > 0) {
    if (!leaf) error('The a= URL does not serve a PEM certificate.', BIMI_SPEC);
    return { valid: false, report, findings };
  }
  report.subject = leaf.subject;
  report.issuer = leaf.issuer;
  report.not_before = leaf.notBefore.toISOString();
  report.not_after = leaf.notAfter.toISOString();
  report.domains = leaf.dnsNames;
  report.bimi_eku = leaf.x509.keyUsage?.includes(BIMI_EKU) ?? false;

  findings.push(...datesOf(leaf, 'The VMC', input.now));
  if (!report.bimi_eku) {
    error(`The certificate lacks the BIMI extended key usage (${BIMI_EKU}): it is not a VMC.`, VMC);
  }
  if (!namesDomain(leaf.dnsNames, input.domains, input.selector)) {
    error(
      `The VMC ${input.domains.length > 1 ? `names neither ${input.domains.join(' nor ')}` : `does not name ${input.domains[0]}`} ` +
        `(it names ${leaf.dnsNames.join(', ') || 'no domain'}).`,
      VALIDATION,
    );
  }

  findings.push(...chainFindings(certs, input.now));
  const anchored = anchorOf(certs.at(-1)!, input.roots);
  if (anchored) {
    report.mva_root = anchored.cert.subject;
    if (!anchored.cert.isCa) error(`The root ${anchored.cert.subject} is not a CA certificate.`, PATHS);
    findings.push(
      ...datesOf(anchored.cert, `The Mark Verifying Authority root ${anchored.cert.subject}`, input.now),
    );
    if (anchored.distrustAfter && leaf.notBefore > anchored.distrustAfter) {
      error(
        `${anchored.cert.subject} is trusted only for marks issued up to ${formatDateTime(anchored.distrustAfter)}; ` +
          `this VMC was issued ${formatDateTime(report.not_before)}.`,
        VALIDATION,
      );
    }
  } else {
    const last = certs.at(-1)!;
    error(
      last.selfSigned
        ? `The chain ends at the self-signed ${last.subject}, which is not a Mark Verifying Authority root: receivers do not trust this VMC.`
        : `The chain ends at ${last.subject}, issued by ${last.issuer}, which is not a Mark Verifying Authority root: receivers do not trust this VMC.`,
      VALIDATION,
    );
  }

  const logotype = readLogotype(leaf);
  report.logotype = logotype.present;
  findings.push(...logotype.findings);
  const logo = logotype.logo;
  if (logo) {
    const shown = logo.hashes.find((h) => h.known) ?? logo.hashes[0];
    const computable = logo.hashes.filter((h) => h.known);
    const location = input.location;
    report.logo = {
      media_type: logo.mediaType,
      hash_algorithm: shown?.algorithm ?? null,
      hash: shown?.value.toString('hex') ?? null,
      matches_hash: logo.hashMatches,
      matches_location:
        location === undefined || computable.length === 0
          ? null
          : computable.every((h) => digestMatches(location, h)),
    };
    if (logo.svg) {
      const svg = checkSvg(logo.svg, false);
      const first = svg.findings.find((f) => f.severity === 'error');
      if (first) error(`The SVG in the VMC fails the SVG Tiny PS checks: ${first.message}`, first.rfc);
    }
    // Against a hash the mark itself fails, l= differing says nothing more.
    if (report.logo.matches_location === false && logo.hashMatches) {
      error(
        `The SVG at l= is not the one in the VMC (its ${computable[0]!.algorithm} differs from the logotype hash): ` +
          'receivers that compare them show no logo.',
        VALIDATION,
      );
    }
  }
  findings.push(
    finding(
      'info',
      'Not checked: whether the VMC is revoked (CRL) and its Certificate Transparency proofs (SCTs).',
      VALIDATION,
    ),
  );
  report.valid = !findings.some((f) => f.severity === 'error');
  return { valid: report.valid, report, findings };
}

/**
 * draft-fetch-validation-vmc-wchuang, "VMC Domain Verification": a SAN of the
 * form `<selector>._bimi.<domain>` matches that selector only; any other SAN
 * matches every selector. Either must name the author or organizational domain.
 */
function namesDomain(sans: readonly string[], domains: readonly string[], selector: string): boolean {
  return sans.some((san) =>
    san.includes('._bimi.') ? domains.some((d) => san === `${selector}._bimi.${d}`) : domains.includes(san),
  );
}

/** Each certificate is issued (named and signed) by the next, which is a CA in its dates. */
function chainFindings(certs: readonly ParsedCertificate[], now: number): Finding[] {
  const findings: Finding[] = [];
  for (let i = 0; i + 1 < certs.length; i++) {
    const parent = certs[i + 1]!;
    if (!issuedBy(certs[i]!, parent)) {
      findings.push(
        finding(
          'error',
          `Certificate ${i + 1} of the chain is not issued by certificate ${i + 2} (the file must list the VMC, then each issuer in turn, each signing the one before).`,
          VALIDATION,
        ),
      );
    }
    if (!parent.isCa)
      findings.push(
        finding('error', `Certificate ${i + 2} (${parent.subject}) is not a CA certificate.`, PATHS),
      );
    findings.push(...datesOf(parent, `The issuing certificate ${parent.subject}`, now));
  }
  return findings;
}

/** The root the top of the chain is, or is issued by. */
function anchorOf(top: ParsedCertificate, roots: readonly MarkRoot[]): MarkRoot | undefined {
  return (
    roots.find((r) => r.cert.fingerprintSha256 === top.fingerprintSha256) ??
    roots.find((r) => issuedBy(top, r.cert))
  );
}

function datesOf(cert: ParsedCertificate, what: string, now: number): Finding[] {
  if (now < cert.notBefore.getTime())
    return [finding('error', `${what} is not valid before ${formatDateTime(cert.notBefore)}.`, PATHS)];
  if (now > cert.notAfter.getTime())
    return [finding('error', `${what} expired on ${formatDateTime(cert.notAfter)}.`, PATHS)];
  return [];
}
