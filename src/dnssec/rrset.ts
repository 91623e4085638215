/**
 * An RRset against the RRSIGs a response holds and a zone's DNSKEY set: the
 * RRSIGs over it, the DNSKEYs each names (signer, algorithm, key tag), and the
 * first pair that verifies (RFC 4035 §5.3.3: one is enough).
 *
 * The number of signature checks is capped: a zone can publish many keys with
 * one key tag and many signatures (KeyTrap, CVE-2023-50387), and each check is
 * a public-key operation. Resolvers stopped at a handful; so does this.
 */
import { normalizeName, sameName } from './names.js';
import type { DnskeyRecord, DnsRecord, RrsetFailureCode, RrsigFailureCode, RrsigRecord } from './types.js';
import { cachedInfo, type VerifyRrsigResult, verifyRrsig } from './verify.js';

/** Signature checks one RRset may cost by default. */
export const MAX_VERIFICATIONS = 8;

export interface VerifyRRsetInput {
  rrset: readonly DnsRecord[];
  /** RRSIGs as the response holds them; only those owned by the RRset's owner and covering its type count. */
  rrsigs: readonly RrsigRecord[];
  /** The signer zone's DNSKEY RRset. */
  dnskeys: readonly DnskeyRecord[];
  now?: Date;
  skewSeconds?: number;
  maxVerifications?: number;
}

/** One RRSIG tried with one DNSKEY (or with none: no DNSKEY named by it). */
export interface RrsigAttempt {
  keyTag: number;
  algorithm: number;
  signer: string;
  code?: RrsigFailureCode | 'dnskey_missing';
  detail?: string;
}

export type VerifyRRsetResult =
  | {
      ok: true;
      rrsig: RrsigRecord;
      dnskey: DnskeyRecord;
      result: Extract<VerifyRrsigResult, { ok: true }>;
      attempts: RrsigAttempt[];
    }
  | { ok: false; code: RrsetFailureCode; detail: string; attempts: RrsigAttempt[] };

// The later a check, the more it says about why an RRset is not validated: a
// signature that was checked and failed says more than a key that was not found.
const TELLING: readonly (RrsigFailureCode | 'dnskey_missing')[] = [
  'rrset_malformed',
  'type_mismatch',
  'owner_mismatch',
  'class_mismatch',
  'labels_mismatch',
  'signer_mismatch',
  'dnskey_missing',
  'key_mismatch',
  'key_not_zone_key',
  'key_revoked',
  'key_malformed',
  'algorithm_unsupported',
  'signature_not_yet_valid',
  'signature_expired',
  'signature_invalid',
];

/** Tries the RRSIGs over `rrset` with the DNSKEYs they name until one verifies. */
export function verifyRRset(input: VerifyRRsetInput): VerifyRRsetResult {
  const first = input.rrset[0];
  const attempts: RrsigAttempt[] = [];
  if (!first) return { ok: false, code: 'rrset_malformed', detail: 'the RRset is empty', attempts };
  const owner = normalizeName(first.name);
  const sigs = input.rrsigs.filter(
    (s) => sameName(s.name, owner) && s.data.typeCovered.toUpperCase() === first.type.toUpperCase(),
  );
  if (sigs.length === 0) {
    return { ok: false, code: 'rrsig_missing', detail: `no RRSIG covers ${owner}/${first.type}`, attempts };
  }
  const limit = input.maxVerifications ?? MAX_VERIFICATIONS;
  let checks = 0;
  for (const rrsig of sigs) {
    const sig = rrsig.data;
    const named = { keyTag: sig.keyTag, algorithm: sig.algorithm, signer: normalizeName(sig.signersName) };
    const keys = input.dnskeys.filter(
      (k) =>
        sameName(k.name, sig.signersName) &&
        k.data.algorithm === sig.algorithm &&
        cachedInfo(k.data).keyTag === sig.keyTag,
    );
    if (keys.length === 0) {
      attempts.push({
        ...named,
        code: 'dnskey_missing',
        detail: `no DNSKEY of ${named.signer} has algorithm ${sig.algorithm} and key tag ${sig.keyTag}`,
      });
      continue;
    }
    for (const dnskey of keys) {
      if (checks >= limit) {
        return {
          ok: false,
          code: 'verification_limit',
          detail: `${limit} signature checks spent on ${owner}/${first.type} without one verifying`,
          attempts,
        };
      }
      checks++;
      const result = verifyRrsig({ ...input, rrsig, dnskey });
      if (result.ok) return { ok: true, rrsig, dnskey, result, attempts: [...attempts, named] };
      attempts.push({ ...named, code: result.code, detail: result.detail });
    }
  }
  const telling = attempts.reduce((best, a) => (rank(a) > rank(best) ? a : best));
  return { ok: false, code: telling.code ?? 'signature_invalid', detail: telling.detail ?? '', attempts };
}

function rank(attempt: RrsigAttempt): number {
  return attempt.code === undefined ? -1 : TELLING.indexOf(attempt.code);
}
