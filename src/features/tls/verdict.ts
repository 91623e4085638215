/**
 * The verdict a person reads first: does a client that checks certificates (a browser, a
 * mail sender under MTA-STS) accept this one, and if not, why, in one sentence. OpenSSL and
 * Node report a code (ERR_TLS_CERT_ALTNAME_INVALID, UNABLE_TO_GET_ISSUER_CERT_LOCALLY); the
 * code stays in the answer for programs, and this says what it means for this certificate,
 * naming the names, dates and issuers involved. Pure, like the findings.
 */
import { commonName, formatDateTime } from '../../client/words.js';
import type { Finding } from './findings.js';

/** What the verdict reads from the evidence (a subset of TlsEvidence, so tests can build it small). */
export interface VerdictFacts {
  host: string;
  authorized: boolean;
  authorizationError: string | null;
  leaf: {
    san: readonly string[];
    issuer: string;
    not_before: string;
    not_after: string;
    expired: boolean;
    days_remaining: number;
  };
  /** The sent certificates after the leaf, and the root the path ends at. */
  chain: {
    certificates: readonly {
      index: number;
      subject: string;
      issuer: string;
      issued_by: number | null;
      not_after: string;
      expired: boolean;
      self_signed: boolean;
    }[];
    root: { subject: string } | null;
  };
  /** Every finding, most severe first. */
  findings: readonly Finding[];
}

export type TlsVerdictStatus = 'trusted' | 'trusted_with_warnings' | 'rejected';

export interface TlsVerdict {
  status: TlsVerdictStatus;
  summary: string;
}

/** How many names of a certificate to list before "and N more". */
const NAMES_SHOWN = 3;

function names(san: readonly string[]): string {
  if (san.length <= NAMES_SHOWN) return san.join(', ');
  return `${san.slice(0, NAMES_SHOWN).join(', ')} and ${san.length - NAMES_SHOWN} more`;
}

/** Plain words for the verify errors that need no certificate detail (OpenSSL's x509_vfy error list). */
const VERIFY_ERROR_TEXT: Readonly<Record<string, string>> = {
  CERT_SIGNATURE_FAILURE: 'a signature in the chain does not verify',
  CERT_REVOKED: 'a certificate in the chain is revoked',
  INVALID_CA: 'a certificate used as an issuer is not a CA',
  INVALID_PURPOSE: 'a certificate in the chain is not issued for TLS servers',
  CERT_CHAIN_TOO_LONG: 'the chain is longer than its issuers allow',
  PATH_LENGTH_EXCEEDED: 'the chain is longer than its issuers allow',
  CERT_UNTRUSTED: 'the root it ends at is not trusted for TLS servers',
  CERT_REJECTED: 'the root it ends at is marked as rejected',
};

/**
 * Why a checking client refuses the certificate, in words, for a verify error code as Node
 * reports it (`authorizationError`). Never empty; an unknown code is named as it is.
 */
export function rejectionReason(
  facts: Pick<VerdictFacts, 'host' | 'authorizationError' | 'leaf' | 'chain'>,
): string {
  const { leaf, chain } = facts;
  const error = facts.authorizationError;
  switch (error) {
    case 'ERR_TLS_CERT_ALTNAME_INVALID':
    case 'HOSTNAME_MISMATCH':
    case 'IP_ADDRESS_MISMATCH':
      return leaf.san.length > 0
        ? `issued for ${names(leaf.san)}, not ${facts.host}`
        : `it names no host (no subjectAltName), so not ${facts.host}`;
    case 'CERT_HAS_EXPIRED': {
      if (leaf.expired) return `it expired on ${formatDateTime(leaf.not_after)}`;
      const issuer = chain.certificates.find((c) => c.index > 0 && c.expired);
      return issuer
        ? `the issuing certificate ${commonName(issuer.subject)} expired on ${formatDateTime(issuer.not_after)}`
        : 'a certificate in the chain has expired';
    }
    case 'CERT_NOT_YET_VALID':
      return `it is not valid before ${formatDateTime(leaf.not_before)}`;
    case 'DEPTH_ZERO_SELF_SIGNED_CERT':
      return 'it is self-signed: it vouches for itself, and no trust store includes it';
    case 'SELF_SIGNED_CERT_IN_CHAIN': {
      const root =
        chain.root?.subject ?? chain.certificates.find((c) => c.index > 0 && c.self_signed)?.subject;
      return root
        ? `the chain ends at ${commonName(root)}, a root no trust store includes`
        : 'the chain ends at a root no trust store includes';
    }
    case 'UNABLE_TO_GET_ISSUER_CERT':
    case 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY':
    case 'UNABLE_TO_VERIFY_LEAF_SIGNATURE': {
      const missing = commonName(endOfPath(chain.certificates)?.issuer ?? leaf.issuer);
      return `its issuer ${missing} is neither sent by the server nor in any trust store (a missing intermediate, or a private CA)`;
    }
    case null:
      return 'the chain does not verify';
    default:
      return VERIFY_ERROR_TEXT[error] ?? `the chain does not verify (OpenSSL: ${error})`;
  }
}

/** The last sent certificate on the path up from the leaf: the one whose issuer could not be found. */
function endOfPath(certificates: VerdictFacts['chain']['certificates']) {
  const byIndex = new Map(certificates.map((c) => [c.index, c]));
  let at = byIndex.get(0);
  for (
    let hops = 0;
    at && at.issued_by !== null && at.issued_by !== at.index && hops < certificates.length;
    hops++
  ) {
    const next = byIndex.get(at.issued_by);
    if (!next) break;
    at = next;
  }
  return at;
}

const AT_RISK = new Set(['critical', 'high']);

/** The one sentence, and whether the certificate is trusted, trusted with something to fix now, or rejected. */
export function tlsVerdict(facts: VerdictFacts): TlsVerdict {
  const { leaf } = facts;
  const until = `${formatDateTime(leaf.not_after)} (${leaf.days_remaining} day${leaf.days_remaining === 1 ? '' : 's'})`;
  if (!facts.authorized) {
    return { status: 'rejected', summary: `Browsers reject this certificate: ${rejectionReason(facts)}.` };
  }
  const soon = facts.findings.find(
    (f) => f.code === 'expires_within_14_days' || f.code === 'expires_within_30_days',
  );
  const serious = facts.findings.filter(
    (f) => AT_RISK.has(f.severity) && f.code !== 'expires_within_14_days',
  );
  if (soon?.code === 'expires_within_14_days') {
    return {
      status: 'trusted_with_warnings',
      summary: `Trusted by browsers, but it expires on ${until}: renew it now.`,
    };
  }
  if (serious.length > 0) {
    return {
      status: 'trusted_with_warnings',
      summary:
        `Trusted by browsers for ${facts.host} until ${until}, with ` +
        `${serious.length === 1 ? 'a serious problem' : `${serious.length} serious problems`} to fix (below).`,
    };
  }
  if (soon) {
    return {
      status: 'trusted',
      summary: `Trusted by browsers for ${facts.host}; it expires on ${until}: renew it soon.`,
    };
  }
  return { status: 'trusted', summary: `Trusted by browsers for ${facts.host} until ${until}.` };
}
