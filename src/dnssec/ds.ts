/**
 * DS records (RFC 4034 §5): the digest of a DNSKEY (SHA-1, RFC 4034 §5.1.4;
 * SHA-256, RFC 4509; SHA-384, RFC 6605 §2), whether a DS names a given DNSKEY,
 * and which DS records of a set a validator uses (RFC 4035 §5.2, RFC 4509 §3,
 * RFC 6840 §5.2).
 */
import { createHash } from 'node:crypto';
import {
  algorithmName,
  digestInfo,
  digestName,
  isAlgorithmSupported,
  isDigestSupported,
} from './algorithms.js';
import { dnskeyRdata, keyTag } from './keys.js';
import { canonicalName, normalizeName, sameName } from './names.js';
import type { DnskeyData, DsData, DsFailureCode } from './types.js';
import { nameWire } from './wire.js';

/**
 * digest = hash(canonical owner name | DNSKEY RDATA) (RFC 4034 §5.1.4), or
 * undefined for a digest type this validator does not compute.
 */
export function dsDigest(owner: string, key: DnskeyData, digestType: number): Buffer | undefined {
  const hash = digestInfo(digestType)?.hash;
  if (!hash) return undefined;
  return createHash(hash)
    .update(nameWire(canonicalName(owner)))
    .update(dnskeyRdata(key))
    .digest();
}

export type DsMatch = { ok: true } | { ok: false; code: DsFailureCode; detail: string };

/**
 * Whether `ds` (at `dsOwner`) names `key` (at `keyOwner`): the same owner, key
 * tag and algorithm, a zone key (RFC 4034 §5.2), and the digest.
 */
export function dsMatchesKey(ds: DsData, dsOwner: string, key: DnskeyData, keyOwner = dsOwner): DsMatch {
  if (!sameName(dsOwner, keyOwner)) {
    return {
      ok: false,
      code: 'ds_owner_mismatch',
      detail: `the DS is at ${normalizeName(dsOwner)}, the DNSKEY at ${normalizeName(keyOwner)}`,
    };
  }
  const tag = keyTag(key);
  if (ds.keyTag !== tag) {
    return {
      ok: false,
      code: 'ds_key_tag_mismatch',
      detail: `the DS names key tag ${ds.keyTag}, the key's is ${tag}`,
    };
  }
  if (ds.algorithm !== key.algorithm) {
    return {
      ok: false,
      code: 'ds_algorithm_mismatch',
      detail: `the DS names algorithm ${ds.algorithm} (${algorithmName(ds.algorithm)}), the key is ${key.algorithm}`,
    };
  }
  if ((key.flags & 0x0100) === 0) {
    return {
      ok: false,
      code: 'ds_key_not_zone_key',
      detail: `DNSKEY ${tag} has no Zone Key flag (RFC 4034 §5.2)`,
    };
  }
  const digest = dsDigest(dsOwner, key, ds.digestType);
  if (!digest) {
    return {
      ok: false,
      code: 'ds_digest_unsupported',
      detail: `digest type ${ds.digestType} (${digestName(ds.digestType)}) is not one this validator computes`,
    };
  }
  if (!digest.equals(ds.digest)) {
    return {
      ok: false,
      code: 'ds_digest_mismatch',
      detail: `the ${digestName(ds.digestType)} digest of DNSKEY ${tag} is not the DS's`,
    };
  }
  return { ok: true };
}

/** Whether this validator can use a DS at all: both its algorithm and its digest type are supported. */
export function dsSupported(ds: DsData): boolean {
  return isAlgorithmSupported(ds.algorithm) && isDigestSupported(ds.digestType);
}

/**
 * The DS records a validator uses: the supported ones (RFC 4035 §5.2: a DS set
 * with none is an insecure delegation, not a bogus one; RFC 6840 §5.2), without
 * the SHA-1 ones when a SHA-256 one is there (RFC 4509 §3: downgrade protection).
 */
export function usableDs<R extends { data: DsData }>(dsRecords: readonly R[]): R[] {
  const supported = dsRecords.filter((ds) => dsSupported(ds.data));
  const hasSha256 = supported.some((ds) => ds.data.digestType === 2);
  return hasSha256 ? supported.filter((ds) => ds.data.digestType !== 1) : supported;
}
