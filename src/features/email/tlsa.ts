/**
 * One TLSA record (RFC 6698 §2.1) as SMTP sees it: its fields by their
 * RFC 7218 names and whether an SMTP client may use it (RFC 7672 §3.1). Pure.
 * Shared by the DNSSEC check of /api/email-security (DNS alone) and the DANE
 * evaluation of /api/mail-tls (the records against the certificates a server sent).
 */
import { type Finding, finding, type TlsaRecord } from './types.js';

export interface TlsaSummary {
  usage: number;
  selector: number;
  matching_type: number;
  /** Certificate association data, upper-case hex. */
  data: string;
  /** The fields by their RFC 7218 names, e.g. "DANE-EE(3) SPKI(1) SHA2-256(1)". */
  meaning: string;
  /** An SMTP client can use it (RFC 7672 §3.1): DANE-TA or DANE-EE, a known selector and matching type, a digest of the right length. */
  usable: boolean;
  /** Why it is not usable. */
  problem?: string;
}

/** RFC 7218 §2: the acronyms of the TLSA fields' values. */
const USAGES = ['PKIX-TA', 'PKIX-EE', 'DANE-TA', 'DANE-EE'];
const SELECTORS = ['Cert', 'SPKI'];
const MATCHING_TYPES = ['Full', 'SHA2-256', 'SHA2-512'];
/** Hex digits of a SHA2-256 and a SHA2-512 digest (RFC 6698 §2.1.3). */
const DIGEST_HEX: Record<number, number> = { 1: 64, 2: 128 };

/** Where SMTP looks for a host's TLSA records: port 25 over TCP (RFC 7672 §2.2.3, RFC 6698 §3). */
export function smtpTlsaName(host: string): string {
  return `_25._tcp.${host}`;
}

export function describeTlsa(record: TlsaRecord): TlsaSummary {
  const name = (names: string[], value: number) => `${names[value] ?? 'unassigned'}(${value})`;
  const meaning = [
    name(USAGES, record.usage),
    name(SELECTORS, record.selector),
    name(MATCHING_TYPES, record.matchingType),
  ].join(' ');
  const problem = tlsaProblem(record);
  return {
    usage: record.usage,
    selector: record.selector,
    matching_type: record.matchingType,
    data: record.data,
    meaning,
    usable: problem === undefined,
    ...(problem === undefined ? {} : { problem }),
  };
}

/** Why an SMTP client cannot use the record (RFC 7672 §3.1), undefined when it can. */
export function tlsaProblem(r: TlsaRecord): string | undefined {
  if (r.usage === 0 || r.usage === 1) return 'SMTP clients do not use the PKIX-TA(0) and PKIX-EE(1) usages';
  if (r.usage > 3) return `certificate usage ${r.usage} is unassigned`;
  if (r.selector > 1) return `selector ${r.selector} is unassigned`;
  if (r.matchingType > 2) return `matching type ${r.matchingType} is unassigned`;
  const digits = DIGEST_HEX[r.matchingType];
  if (digits !== undefined && r.data.length !== digits) {
    return `a ${MATCHING_TYPES[r.matchingType]} digest has ${digits} hex digits, this one ${r.data.length}`;
  }
  if (r.data.length === 0) return 'the association data is empty';
  return undefined;
}

/**
 * What the unusable records of a validated TLSA RRset mean for senders: with none usable they
 * require TLS but authenticate nothing (a warning); beside usable ones they are ignored (info).
 */
export function unusableTlsaFindings(tlsaName: string, records: readonly TlsaSummary[]): Finding[] {
  const unusable = records.filter((r) => !r.usable);
  if (unusable.length === 0) return [];
  const reasons = unusable.map((r) => `${r.usage} ${r.selector} ${r.matching_type}: ${r.problem}`).join('; ');
  if (unusable.length === records.length) {
    return [
      finding(
        'warning',
        `No TLSA record at ${tlsaName} is usable for SMTP (${reasons}): DANE-aware senders then require TLS but authenticate nothing. Publish DANE-EE(3) or DANE-TA(2) records.`,
        'RFC 7672 §3.1',
      ),
    ];
  }
  return [
    finding(
      'info',
      `${unusable.length} of ${records.length} TLSA records at ${tlsaName} are not usable for SMTP and are ignored (${reasons}).`,
      'RFC 7672 §3.1',
    ),
  ];
}
