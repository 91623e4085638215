/**
 * The cases of the signed hierarchy (test/fakes/bind-hierarchy.ts, zones in bind-zones.ts):
 * each a question and the verdict a validator must reach. delv and a validating unbound
 * are held to them (test/interop/dnssec-peers.test.ts), so they are what real validators
 * say, not our opinion; netdiag's own validator is then held to the same.
 */

export type Verdict = 'secure' | 'insecure' | 'bogus';

/**
 * Why a case is not secure. Bogus (the first broken link, top down): `no_dnskey_matches_ds`
 * (the parent's DS names a key the child does not publish), `ds_digest_mismatch` (a DS names
 * the child's key by tag and algorithm but its digest differs), `signature_expired`,
 * `signature_not_yet_valid`, `rrsig_missing` (a signed zone's answer without its RRSIG),
 * `signature_invalid` (an RRSIG that does not verify: here an NSEC edited after signing),
 * `denial_missing` (an NXDOMAIN from a signed zone with no NSEC/NSEC3 proving it).
 * Insecure (where the chain of trust ends): `no_ds` (the delegation is proven to have no DS),
 * `nsec3_opt_out` (the delegation is covered by an opt-out NSEC3), `ds_algorithm_unsupported`
 * and `ds_digest_unsupported` (the DS RRset names only algorithms or digest types a validator
 * does not implement: RFC 4035 §5.2, RFC 6840 §5.2), `nsec3_iterations` (an NSEC3 denial
 * with more than 150 iterations: RFC 9276 §3.2, as current resolvers do).
 */
export type ReasonCode =
  | 'no_dnskey_matches_ds'
  | 'ds_digest_mismatch'
  | 'signature_expired'
  | 'signature_not_yet_valid'
  | 'rrsig_missing'
  | 'signature_invalid'
  | 'denial_missing'
  | 'no_ds'
  | 'nsec3_opt_out'
  | 'ds_algorithm_unsupported'
  | 'ds_digest_unsupported'
  | 'nsec3_iterations';

export interface ExpectedVerdict {
  status: Verdict;
  /** What the zone itself answers (a validator answers SERVFAIL instead for bogus). */
  rcode: 'NOERROR' | 'NXDOMAIN';
  /** null when secure; for bogus the zone of the first broken link, for insecure the first zone without a chain of trust. */
  zone: string | null;
  code: ReasonCode | null;
}

export interface DnssecCase {
  /** Absolute, no trailing dot. */
  name: string;
  type: string;
  expected: ExpectedVerdict;
  /** What the case exercises. */
  about: string;
  /** RFC 8624 / RFC 9276 observations a validator should report besides its verdict (descriptive ids). */
  notes?: string[];
}

const secure = (rcode: 'NOERROR' | 'NXDOMAIN' = 'NOERROR'): ExpectedVerdict => ({
  status: 'secure',
  rcode,
  zone: null,
  code: null,
});
const insecure = (
  zone: string,
  code: ReasonCode,
  rcode: 'NOERROR' | 'NXDOMAIN' = 'NOERROR',
): ExpectedVerdict => ({
  status: 'insecure',
  rcode,
  zone,
  code,
});
const bogus = (
  zone: string,
  code: ReasonCode,
  rcode: 'NOERROR' | 'NXDOMAIN' = 'NOERROR',
): ExpectedVerdict => ({
  status: 'bogus',
  rcode,
  zone,
  code,
});

export const CASES: DnssecCase[] = [
  { name: 'www.secure.test', type: 'A', expected: secure(), about: 'a signed answer (ECDSA P-256, NSEC)' },
  { name: 'nx.secure.test', type: 'A', expected: secure('NXDOMAIN'), about: 'NXDOMAIN proven by NSEC' },
  { name: 'www.secure.test', type: 'TXT', expected: secure(), about: 'NODATA proven by NSEC' },
  { name: 'host.wild.secure.test', type: 'A', expected: secure(), about: 'a wildcard expansion (NSEC)' },
  { name: 'alias.secure.test', type: 'A', expected: secure(), about: 'a CNAME to a name in the same zone' },
  { name: '_25._tcp.mail.secure.test', type: 'TLSA', expected: secure(), about: 'a TLSA record for DANE' },
  { name: 'secure.test', type: 'DNSKEY', expected: secure(), about: "the zone's DNSKEY RRset" },
  { name: 'secure.test', type: 'DS', expected: secure(), about: 'a DS, answered by the parent' },
  {
    name: 'www.sub.secure.test',
    type: 'A',
    expected: secure(),
    about: 'three signed levels, KSK and ZSK apart',
  },
  {
    name: 'to-unsigned.secure.test',
    type: 'A',
    expected: insecure('unsigned.test', 'no_ds'),
    about: 'a signed CNAME into an unsigned zone',
  },
  {
    name: 'www.nsec3.test',
    type: 'A',
    expected: secure(),
    about: 'a signed answer (NSEC3 zone)',
    notes: ['nsec3_iterations_nonzero'],
  },
  {
    name: 'nx.nsec3.test',
    type: 'A',
    expected: secure('NXDOMAIN'),
    about: 'NXDOMAIN proven by NSEC3 (closest encloser, salt, 5 iterations)',
    notes: ['nsec3_iterations_nonzero'],
  },
  {
    name: 'www.nsec3.test',
    type: 'TXT',
    expected: secure(),
    about: 'NODATA proven by NSEC3',
    notes: ['nsec3_iterations_nonzero'],
  },
  {
    name: 'host.wild.nsec3.test',
    type: 'A',
    expected: secure(),
    about: 'a wildcard expansion (NSEC3: the next closer name covered)',
    notes: ['nsec3_iterations_nonzero'],
  },
  {
    name: 'www.unsigned.nsec3.test',
    type: 'A',
    expected: insecure('unsigned.nsec3.test', 'no_ds'),
    about: 'an unsigned delegation proven by a matching NSEC3 without the DS bit',
  },
  {
    name: 'www.signed.example',
    type: 'A',
    expected: secure(),
    about: 'a signed zone under an opt-out NSEC3 TLD',
  },
  {
    name: 'www.unsigned.example',
    type: 'A',
    expected: insecure('unsigned.example', 'nsec3_opt_out'),
    about: 'an unsigned delegation covered by an opt-out NSEC3',
  },
  {
    name: 'nx.iterations-150.test',
    type: 'A',
    expected: secure('NXDOMAIN'),
    about: 'NXDOMAIN proven by NSEC3 of 150 iterations: the limit, still secure',
    notes: ['nsec3_iterations_nonzero'],
  },
  {
    name: 'nx.iterations-200.test',
    type: 'A',
    expected: insecure('iterations-200.test', 'nsec3_iterations', 'NXDOMAIN'),
    about: 'NXDOMAIN proven by NSEC3 of 200 iterations (RFC 9276: insecure above 150)',
  },
  {
    name: 'www.iterations-200.test',
    type: 'A',
    expected: secure(),
    about: 'a positive answer from that zone needs no NSEC3: still secure',
  },
  {
    name: 'www.unsigned.test',
    type: 'A',
    expected: insecure('unsigned.test', 'no_ds'),
    about: 'an unsigned delegation (NSEC)',
  },
  {
    name: 'unsigned.test',
    type: 'DS',
    expected: secure(),
    about: 'the absence of a DS, proven by the parent',
  },
  {
    name: 'www.ds-mismatch.test',
    type: 'A',
    expected: bogus('ds-mismatch.test', 'no_dnskey_matches_ds'),
    about: "the parent's DS names a key the zone does not have",
  },
  {
    name: 'www.ds-bad-digest.test',
    type: 'A',
    expected: bogus('ds-bad-digest.test', 'ds_digest_mismatch'),
    about: "the DS names the zone's key, with a wrong digest",
  },
  {
    name: 'www.expired.test',
    type: 'A',
    expected: bogus('expired.test', 'signature_expired'),
    about: 'every signature expired 30 days ago',
  },
  {
    name: 'www.expiring.test',
    type: 'A',
    expected: secure(),
    about: 'signatures that expire in 3 days: valid, worth a warning',
    notes: ['signature_expires_within_7_days'],
  },
  {
    name: 'www.not-yet-valid.test',
    type: 'A',
    expected: bogus('not-yet-valid.test', 'signature_not_yet_valid'),
    about: 'every signature valid from 30 days on',
  },
  {
    name: 'www.missing-rrsig.test',
    type: 'A',
    expected: bogus('missing-rrsig.test', 'rrsig_missing'),
    about: "the answer's RRSIG removed after signing",
  },
  {
    name: 'nx.no-denial.test',
    type: 'A',
    // named serves a zone without an NSEC chain as unsigned: no RRSIG in any answer, the DNSKEY
    // RRset's included, so the first broken link a validator meets is that RRset (unbound: EDE 10).
    expected: bogus('no-denial.test', 'rrsig_missing', 'NXDOMAIN'),
    about: 'an NXDOMAIN from a signed zone whose NSEC records were removed',
  },
  {
    name: 'b.forged-denial.test',
    type: 'A',
    expected: bogus('forged-denial.test', 'signature_invalid', 'NXDOMAIN'),
    about: 'an NSEC edited after signing (a → www, hiding c): its RRSIG fails',
  },
  {
    name: 'www.private-algorithm.test',
    type: 'A',
    expected: insecure('private-algorithm.test', 'ds_algorithm_unsupported'),
    about: 'the only DS names algorithm 253 (PRIVATEDNS)',
  },
  {
    name: 'www.unknown-digest.test',
    type: 'A',
    expected: insecure('unknown-digest.test', 'ds_digest_unsupported'),
    about: 'the only DS has digest type 3 (GOST), implemented by none of the validators',
  },
  {
    name: 'www.rsasha1.test',
    type: 'A',
    expected: secure(),
    about: 'RSASHA1 (5): valid, but RFC 8624 says NOT RECOMMENDED for signing',
    notes: ['algorithm_rsasha1'],
  },
  {
    name: 'www.rsasha1-nsec3.test',
    type: 'A',
    expected: secure(),
    about: 'RSASHA1-NSEC3-SHA1 (7): as above',
    notes: ['algorithm_rsasha1'],
  },
  {
    name: 'www.rsa1024.test',
    type: 'A',
    expected: secure(),
    about: 'RSASHA256 with a 1024-bit key: valid, shorter than recommended',
    notes: ['rsa_key_under_2048'],
  },
  { name: 'www.rsasha512.test', type: 'A', expected: secure(), about: 'RSASHA512 (10)' },
  { name: 'www.ecdsa384.test', type: 'A', expected: secure(), about: 'ECDSAP384SHA384 (14)' },
  { name: 'www.ed25519.test', type: 'A', expected: secure(), about: 'ED25519 (15)' },
  { name: 'www.ed448.test', type: 'A', expected: secure(), about: 'ED448 (16)' },
];
