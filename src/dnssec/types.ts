/**
 * The shapes src/dnssec/ reads and returns: records as dns-packet decodes them,
 * and the catalogue of reason codes every check here answers with (documented
 * one by one in src/dnssec/index.ts).
 */
import type * as packet from 'dns-packet';

/** A record as dns-packet decodes it (`import * as packet from 'dns-packet'`); `data` depends on `type`. */
export interface DnsRecord {
  name: string;
  type: string;
  class?: string;
  ttl?: number;
  data?: unknown;
}

export type RrsigData = packet.RrsigData;
export type DnskeyData = packet.DnskeyData;
export type DsData = packet.DsData;
export type NsecData = packet.NsecData;
export type Nsec3Data = packet.Nsec3Data;

export interface RrsigRecord extends DnsRecord {
  type: 'RRSIG';
  data: RrsigData;
}
export interface DnskeyRecord extends DnsRecord {
  type: 'DNSKEY';
  data: DnskeyData;
}
export interface DsRecord extends DnsRecord {
  type: 'DS';
  data: DsData;
}
export interface NsecRecord extends DnsRecord {
  type: 'NSEC';
  data: NsecData;
}
export interface Nsec3Record extends DnsRecord {
  type: 'NSEC3';
  data: Nsec3Data;
}

/** Why an RRSIG does not validate an RRset (verifyRrsig). */
export type RrsigFailureCode =
  | 'rrset_malformed'
  | 'type_mismatch'
  | 'owner_mismatch'
  | 'class_mismatch'
  | 'labels_mismatch'
  | 'signer_mismatch'
  | 'key_mismatch'
  | 'key_not_zone_key'
  | 'key_revoked'
  | 'key_malformed'
  | 'algorithm_unsupported'
  | 'signature_not_yet_valid'
  | 'signature_expired'
  | 'signature_invalid';

/** Why no RRSIG validates an RRset with a DNSKEY set (verifyRRset): one RRSIG's reason, or these. */
export type RrsetFailureCode = RrsigFailureCode | 'rrsig_missing' | 'dnskey_missing' | 'verification_limit';

/** Why a DS does not vouch for a DNSKEY (dsMatchesKey). */
export type DsFailureCode =
  | 'ds_key_tag_mismatch'
  | 'ds_algorithm_mismatch'
  | 'ds_owner_mismatch'
  | 'ds_key_not_zone_key'
  | 'ds_digest_unsupported'
  | 'ds_digest_mismatch';

/** Why a set of NSEC or NSEC3 records does not prove a denial (the prove* functions). */
export type DenialFailureCode =
  | 'no_denial_records'
  | 'qname_exists'
  | 'type_exists'
  | 'cname_exists'
  | 'not_covered'
  | 'wildcard_not_denied'
  | 'wildcard_exists'
  | 'wildcard_mismatch'
  | 'closest_encloser_not_proven'
  | 'delegation_misused'
  | 'dname_misused'
  | 'child_side_record'
  | 'ds_exists'
  | 'not_opt_out';

/** Why a denial stands but proves nothing secure (its answer is insecure, not bogus). */
export type DenialInsecureCode = 'nsec3_iterations' | 'opt_out' | 'insecure_delegation';

/** Every reason code src/dnssec/ answers with, for the features' catalogue. */
export type DnssecReasonCode = RrsetFailureCode | DsFailureCode | DenialFailureCode | DenialInsecureCode;

/** What a denial proves. */
export type DenialKind =
  /** The name does not exist, nor a wildcard that could have made it (RFC 4035 §5.4, RFC 5155 §8.4). */
  | 'nxdomain'
  /** The name exists without the type (RFC 4035 §5.4, RFC 5155 §8.5, §8.6). */
  | 'nodata'
  /** The name does not exist; the wildcard that would answer for it exists without the type (RFC 5155 §8.7). */
  | 'wildcard_nodata'
  /** The answer was made from a wildcard and the name itself does not exist (RFC 4035 §5.3.4, RFC 5155 §8.8). */
  | 'wildcard_answer'
  /** A delegation with no DS: the child zone is unsigned (RFC 4035 §5.2, RFC 5155 §8.9). */
  | 'insecure_delegation'
  /** No DS and no delegation at the name: it is not a zone cut. */
  | 'no_ds';

/**
 * The verdict of a denial proof: proven (with the records that prove it),
 * insecure (the proof holds as far as it goes, but the answer cannot be
 * called secure: RFC 9276 iterations, RFC 5155 §9.2 opt-out), or failed.
 */
export type DenialResult<R extends DnsRecord = DnsRecord> =
  | {
      status: 'proven';
      kind: DenialKind;
      /** The records the proof rests on, each once, in the order the proof used them. */
      records: R[];
      /** The closest encloser (RFC 5155 §1.3), when the proof established one. */
      closestEncloser?: string;
    }
  | { status: 'insecure'; code: DenialInsecureCode; detail: string; kind?: DenialKind; records: R[] }
  | { status: 'failed'; code: DenialFailureCode; detail: string; records: R[] };
