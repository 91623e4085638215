/**
 * One RRSIG over one RRset with one DNSKEY: the checks of RFC 4035 §5.3.1, the
 * validity window in serial-number arithmetic (RFC 4034 §3.1.5, RFC 1982) with
 * a clock-skew allowance, and the signature itself through node:crypto.
 *
 * Never throws for anything a zone can publish: every failure is a code from
 * the catalogue (RrsigFailureCode, documented in src/dnssec/index.ts) and a
 * sentence saying what was found.
 */
import { verify as cryptoVerify, type KeyObject } from 'node:crypto';
import { algorithmName } from './algorithms.js';
import { signedData, type WildcardExpansion, wildcardExpansion } from './canonical.js';
import { type DnskeyInfo, dnskeyInfo } from './keys.js';
import { isAtOrBelow, normalizeName, sameName } from './names.js';
import type { DnskeyData, DnskeyRecord, DnsRecord, RrsigFailureCode, RrsigRecord } from './types.js';

/**
 * The default clock-skew allowance: 5 minutes either side of the window.
 * Resolvers differ (unbound allows 10% of the window, between 1 hour and 1 day);
 * callers that must agree with one pass their own.
 */
export const DEFAULT_SKEW_SECONDS = 300;

export interface VerifyRrsigInput {
  /** The RRset (same owner, type and class), as dns-packet decoded it. */
  rrset: readonly DnsRecord[];
  rrsig: RrsigRecord;
  /** The DNSKEY the RRSIG names (owner = signer name, algorithm, key tag). */
  dnskey: DnskeyRecord;
  /** The validator's clock; now when left out. */
  now?: Date;
  skewSeconds?: number;
}

export type VerifyRrsigResult =
  | {
      ok: true;
      keyTag: number;
      algorithm: number;
      /** Seconds from `now` to the signature's expiration (serial arithmetic). */
      expiresIn: number;
      /** Whether the RRset was synthesized from a wildcard (RFC 4035 §5.3.4): its denial must then be proven. */
      wildcard: Exclude<WildcardExpansion, { kind: 'invalid' }>;
    }
  | { ok: false; code: RrsigFailureCode; detail: string };

// One KeyObject per decoded DNSKEY, however many signatures it checks.
const infoCache = new WeakMap<DnskeyData, DnskeyInfo>();

/** dnskeyInfo, computed once per decoded DNSKEY. */
export function cachedInfo(data: DnskeyData): DnskeyInfo {
  let info = infoCache.get(data);
  if (!info) {
    info = dnskeyInfo(data);
    infoCache.set(data, info);
  }
  return info;
}

/** a − b for 32-bit serial numbers (RFC 1982 §3.1), as a signed 32-bit difference. */
export function serialDiff(a: number, b: number): number {
  return (a - b) | 0;
}

/** Unix time in seconds, reduced to 32 bits as RRSIG times are (RFC 4034 §3.1.5). */
export function serialNow(now: Date): number {
  return Math.floor(now.getTime() / 1000) >>> 0;
}

/** Where `now` stands against an inception..expiration window, with `skew` seconds allowed either side. */
export function validityWindow(
  inception: number,
  expiration: number,
  now: Date,
  skewSeconds = DEFAULT_SKEW_SECONDS,
): { state: 'valid' | 'not_yet_valid' | 'expired'; expiresIn: number; startsIn: number } {
  const t = serialNow(now);
  const startsIn = serialDiff(inception, t);
  const expiresIn = serialDiff(expiration, t);
  if (startsIn > skewSeconds) return { state: 'not_yet_valid', expiresIn, startsIn };
  if (expiresIn < -skewSeconds) return { state: 'expired', expiresIn, startsIn };
  return { state: 'valid', expiresIn, startsIn };
}

function fail(code: RrsigFailureCode, detail: string): VerifyRrsigResult {
  return { ok: false, code, detail };
}

/** Checks one RRSIG over one RRset against one DNSKEY (RFC 4035 §5.3). */
export function verifyRrsig(input: VerifyRrsigInput): VerifyRrsigResult {
  const { rrset, rrsig, dnskey } = input;
  const sig = rrsig.data;
  const first = rrset[0];
  if (!first) return fail('rrset_malformed', 'the RRset is empty');
  const mixed = rrset.find(
    (rr) =>
      !sameName(rr.name, first.name) ||
      rr.type !== first.type ||
      (rr.class ?? 'IN') !== (first.class ?? 'IN'),
  );
  if (mixed) {
    return fail(
      'rrset_malformed',
      `${mixed.name}/${mixed.type} is not of the RRset ${first.name}/${first.type}`,
    );
  }
  const owner = normalizeName(first.name);
  const signer = normalizeName(sig.signersName);

  if (sig.typeCovered.toUpperCase() !== first.type.toUpperCase()) {
    return fail('type_mismatch', `the RRSIG covers ${sig.typeCovered}, the RRset is ${first.type}`);
  }
  if (!sameName(rrsig.name, owner)) {
    return fail(
      'owner_mismatch',
      `the RRSIG is owned by ${normalizeName(rrsig.name)}, the RRset by ${owner}`,
    );
  }
  if ((rrsig.class ?? 'IN') !== (first.class ?? 'IN')) {
    return fail('class_mismatch', `the RRSIG is class ${rrsig.class}, the RRset ${first.class}`);
  }
  const wildcard = wildcardExpansion(owner, sig.labels);
  if (wildcard.kind === 'invalid') {
    return fail('labels_mismatch', `the RRSIG's Labels field is ${sig.labels}, more than ${owner} has`);
  }
  // RFC 4035 §5.3.1: the signer is the zone holding the RRset, so the owner or an
  // ancestor of it; a DS RRset belongs to the parent zone, never to its owner.
  const dsAtOwner = first.type.toUpperCase() === 'DS' && sameName(signer, owner) && owner !== '.';
  if (!isAtOrBelow(owner, signer) || dsAtOwner) {
    return fail(
      'signer_mismatch',
      `${signer} cannot sign ${owner}/${first.type}: it is not the zone holding it`,
    );
  }

  const key = dnskey.data;
  const info = cachedInfo(key);
  if (!sameName(dnskey.name, signer)) {
    return fail('key_mismatch', `the DNSKEY is ${normalizeName(dnskey.name)}'s, the signer is ${signer}`);
  }
  if (key.algorithm !== sig.algorithm) {
    return fail(
      'key_mismatch',
      `the DNSKEY is algorithm ${key.algorithm}, the RRSIG ${sig.algorithm} (${algorithmName(sig.algorithm)})`,
    );
  }
  if (info.keyTag !== sig.keyTag) {
    return fail('key_mismatch', `the DNSKEY's key tag is ${info.keyTag}, the RRSIG names ${sig.keyTag}`);
  }
  if (!info.zoneKey) {
    return fail('key_not_zone_key', `DNSKEY ${info.keyTag} has no Zone Key flag (RFC 4034 §2.1.1)`);
  }
  if (info.revoked && first.type.toUpperCase() !== 'DNSKEY') {
    return fail(
      'key_revoked',
      `DNSKEY ${info.keyTag} is revoked (RFC 5011 §2.1): it signs its DNSKEY RRset only`,
    );
  }
  if (!info.key) {
    const code = info.problem === 'key_malformed' ? 'key_malformed' : 'algorithm_unsupported';
    return fail(code, info.detail ?? `DNSKEY ${info.keyTag} cannot be used`);
  }

  const now = input.now ?? new Date();
  const window = validityWindow(sig.inception, sig.expiration, now, input.skewSeconds);
  if (window.state === 'not_yet_valid') {
    return fail('signature_not_yet_valid', `the signature is valid from ${rrsigTime(sig.inception, now)}`);
  }
  if (window.state === 'expired') {
    return fail('signature_expired', `the signature expired at ${rrsigTime(sig.expiration, now)}`);
  }

  const problem = checkSignature(sig.algorithm, info.key, signedData(sig, rrset), sig.signature);
  if (problem) return fail('signature_invalid', problem);
  return { ok: true, keyTag: info.keyTag, algorithm: sig.algorithm, expiresIn: window.expiresIn, wildcard };
}

// RFC 6605 §4: r || s, each the curve's size.
const ECDSA_SIGNATURE_BYTES: Record<number, number> = { 13: 64, 14: 96 };
const DIGEST: Record<number, string | null> = {
  5: 'sha1',
  7: 'sha1',
  8: 'sha256',
  10: 'sha512',
  13: 'sha256',
  14: 'sha384',
  15: null,
  16: null,
};

/** Undefined when the signature verifies, else why not. */
function checkSignature(
  algorithm: number,
  key: KeyObject,
  data: Buffer,
  signature: Buffer,
): string | undefined {
  const digest = DIGEST[algorithm];
  if (digest === undefined) return `algorithm ${algorithm} has no verifier`;
  const ecdsaBytes = ECDSA_SIGNATURE_BYTES[algorithm];
  if (ecdsaBytes !== undefined && signature.length !== ecdsaBytes) {
    return `the ${algorithmName(algorithm)} signature is ${signature.length} octets, not ${ecdsaBytes} (RFC 6605 §4)`;
  }
  try {
    const verifier = ecdsaBytes !== undefined ? { key, dsaEncoding: 'ieee-p1363' as const } : key;
    if (cryptoVerify(digest, data, verifier, signature)) return undefined;
  } catch {
    // OpenSSL throws on some impossible signatures (wrong length for the key); they do not verify.
  }
  return `the ${algorithmName(algorithm)} signature does not verify with this key`;
}

/** An RRSIG time as RFC 3339 UTC, read in the 136-year window around now (RFC 4034 §3.1.5). */
export function rrsigTime(serial: number, now = new Date()): string {
  const seconds = Math.floor(now.getTime() / 1000) + serialDiff(serial, serialNow(now));
  return new Date(seconds * 1000).toISOString().replace('.000Z', 'Z');
}
