/**
 * DNSSEC primitives (RFC 4033–4035, 5155, 6840, 8624, 9276): pure functions, no
 * I/O, on records as dns-packet decodes them (`{ name, type, class, ttl, data }`).
 * The chain of trust and its verdicts (secure, insecure, bogus, indeterminate)
 * are built on top of these in src/features/dnssec/.
 *
 * Names are taken as dns-packet writes them (no trailing dot, any case, the root
 * as '' or '.'); names returned are lower case without a trailing dot, the root '.'.
 *
 * API
 *   canonical form   canonicalName(name), compareNames(a, b) (RFC 4034 §6.1 order),
 *                    canonicalRdata(rr), canonicalOrder(rrset),
 *                    canonicalRRsetWire(rrset, originalTtl, owner?) (§6.2, §6.3),
 *                    signedData(rrsigData, rrset) (§3.1.8.1),
 *                    wildcardExpansion(owner, labels) → exact | expanded {wildcard,
 *                    closestEncloser, nextCloser} | invalid (RFC 4035 §5.3.4)
 *   keys             keyTag(dnskeyData) (RFC 4034 App. B), dnskeyInfo(dnskeyData) →
 *                    { algorithm, algorithmName, keyTag, flags, zoneKey, sep, revoked,
 *                    bits?, supported, problem?, detail?, key?: KeyObject }
 *   signatures       verifyRrsig({ rrset, rrsig, dnskey, now?, skewSeconds? }) →
 *                    { ok: true, keyTag, algorithm, expiresIn, wildcard } |
 *                    { ok: false, code, detail }; validityWindow(), rrsigTime();
 *                    verifyRRset({ rrset, rrsigs, dnskeys, now?, skewSeconds?,
 *                    maxVerifications? }) → { ok: true, rrsig, dnskey, result, attempts } |
 *                    { ok: false, code, detail, attempts } (at most 8 signature checks)
 *   DS               dsDigest(owner, dnskeyData, digestType) (1, 2, 4; else undefined),
 *                    dsMatchesKey(dsData, dsOwner, dnskeyData, keyOwner?) → { ok } |
 *                    { ok: false, code, detail }, dsSupported(dsData), usableDs(dsRecords)
 *   NSEC             nsecCovers, nsecMatches, nsecClosestEncloser, bitmapHas,
 *                    proveNsecNxdomain(qname, nsecs), proveNsecNodata(qname, qtype, nsecs),
 *                    proveNsecWildcardAnswer(qname, closestEncloser, nsecs)
 *   NSEC3            nsec3Hash(name, salt, iterations) (base32hex), nsec3HashBytes,
 *                    nsec3Covers, nsec3Matches, nsec3ClosestEncloser(qname, nsec3s),
 *                    proveNsec3Nxdomain, proveNsec3Nodata, proveNsec3WildcardAnswer
 *                    (same arguments as the NSEC ones), nsec3ParameterFindings
 *   RFC 8624         ALGORITHMS, DIGESTS, algorithmInfo/Name, digestInfo/Name,
 *                    isAlgorithmSupported, isDigestSupported, algorithmFindings(alg, bits?),
 *                    digestFindings(digestType)
 *
 * A proof answers DenialResult: { status: 'proven', kind, records, closestEncloser? } |
 * { status: 'insecure', code, detail, kind?, records } | { status: 'failed', code,
 * detail, records }. For qtype DS, the proven kind is insecure_delegation (a zone cut
 * without DS, or an opt-out span: the child is unsigned) or no_ds (not a zone cut).
 * The records a proof is handed must already be validated. An NSEC3 proof uses the
 * records of the deepest zone above the name that share the first one's salt and
 * iterations, so its work is one hash per ancestor of the name.
 *
 * Reason codes (the catalogue; each answer adds a sentence saying what was found)
 *   verifyRrsig
 *     rrset_malformed          the RRset is empty or mixes owners, types or classes
 *     type_mismatch            Type Covered is not the RRset's type
 *     owner_mismatch           the RRSIG and the RRset have different owners
 *     class_mismatch           ... different classes
 *     labels_mismatch          Labels is more than the owner name has (RFC 4035 §5.3.1)
 *     signer_mismatch          the signer is not the owner nor an ancestor of it, or
 *                              signs a DS at its own name (DS belongs to the parent)
 *     key_mismatch             the DNSKEY's owner, algorithm or key tag is not the RRSIG's
 *     key_not_zone_key         the DNSKEY lacks the Zone Key flag (RFC 4034 §2.1.1)
 *     key_revoked              a revoked key signs something else than its DNSKEY RRset
 *     key_malformed            the key data is not a key of its algorithm
 *     algorithm_unsupported    an algorithm this validator does not verify (not bogus by
 *                              itself: RFC 4035 §5.2 makes such a zone insecure)
 *     signature_not_yet_valid  now + skew is before Inception (serial arithmetic)
 *     signature_expired        now − skew is after Expiration
 *     signature_invalid        the signature does not verify (or has the wrong length)
 *   verifyRRset (the most telling of its RRSIGs' codes above, or)
 *     rrsig_missing            no RRSIG over the RRset's owner and type
 *     dnskey_missing           no DNSKEY of the signer has the RRSIG's algorithm and key tag
 *     verification_limit       the signature checks allowed were spent (KeyTrap, CVE-2023-50387)
 *   dsMatchesKey
 *     ds_owner_mismatch, ds_key_tag_mismatch, ds_algorithm_mismatch,
 *     ds_key_not_zone_key      the DS names a key without the Zone Key flag (RFC 4034 §5.2)
 *     ds_digest_unsupported    digest type not computed here (0, 3 or unassigned)
 *     ds_digest_mismatch       the key's digest is not the DS's
 *   denial proofs, failed
 *     no_denial_records        no (usable) NSEC/NSEC3 records for the name's zone
 *     qname_exists             a record matches the name, or it is an empty non-terminal
 *     type_exists, cname_exists  the matching record's bitmap lists the type, or CNAME
 *     not_covered              no record matches or covers a name the proof needs
 *     wildcard_not_denied      nothing covers the wildcard at the closest encloser
 *     wildcard_exists          the wildcard exists, so the name should have been answered
 *     wildcard_mismatch        the wildcard the answer was made from is not the one the
 *                              denial implies
 *     closest_encloser_not_proven  no NSEC3 closest encloser, or the next closer name is
 *                              not covered (RFC 5155 §8.3)
 *     delegation_misused       a parent-side record at a zone cut used to deny anything
 *                              but DS, or names below the cut (RFC 6840 §4.1, §4.4)
 *     dname_misused            a record at a DNAME used to deny names below it
 *     child_side_record        the child apex's record used to deny DS (the parent's)
 *     not_opt_out              DS NODATA without a match, and the covering NSEC3 is not
 *                              opt-out (RFC 5155 §8.6)
 *   denial proofs, insecure
 *     nsec3_iterations         more than 150 NSEC3 iterations (RFC 9276 §3.2)
 *     opt_out                  the span covering the next closer name is opt-out
 *                              (RFC 5155 §9.2): the name may be an unsigned delegation
 *     insecure_delegation      the closest encloser is a delegation without DS
 *
 * Limits of reading dns-packet's decoded records (src/dnssec/wire.ts): a label with
 * a '.' or non-UTF-8 octets, and SSHFP with a hash type other than 1 and 2, cannot
 * be re-encoded byte for byte, so a signature over them fails as signature_invalid.
 */
export * from './algorithms.js';
export * from './base32hex.js';
export * from './canonical.js';
export * from './ds.js';
export * from './keys.js';
export * from './names.js';
export * from './nsec.js';
export * from './nsec3.js';
export * from './rrset.js';
export * from './types.js';
export * from './verify.js';
