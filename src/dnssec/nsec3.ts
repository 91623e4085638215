/**
 * Authenticated denial with NSEC3 (RFC 5155): the hash (§5), which hashes a
 * record covers or matches, the closest-encloser proof (§8.3) and the proofs of
 * NXDOMAIN (§8.4), NODATA (§8.5, §8.6 for DS), wildcard NODATA (§8.7), a
 * wildcard answer (§8.8) and an insecure delegation under opt-out (§8.9), with
 * RFC 9276's iteration policy.
 *
 * Where RFC 5155 leaves a verdict open, this follows unbound (validator/
 * val_nsec3.c), the peer the validator is compared with: opt-out covering the
 * next closer name makes an NXDOMAIN, a wildcard answer or a non-DS NODATA
 * insecure; a closest encloser that is an unsigned delegation makes an NXDOMAIN
 * insecure; more than 150 iterations make any NSEC3 answer insecure.
 *
 * The records must already be validated; unusable ones are skipped as RFC 5155
 * §8.1–8.2 asks (unknown hash algorithm, flags other than 0 and 1, an owner
 * that is not a hash), and a proof uses one zone's records with one parameter
 * set (chainFor).
 */
import { createHash } from 'node:crypto';
import { base32hexDecode, base32hexEncode } from './base32hex.js';
import {
  canonicalName,
  isAtOrBelow,
  labelsOf,
  lastLabels,
  normalizeName,
  parentName,
  wildcardOf,
} from './names.js';
import { bitmapHas } from './nsec.js';
import type {
  DenialFailureCode,
  DenialInsecureCode,
  DenialKind,
  DenialResult,
  Nsec3Record,
} from './types.js';
import { nameWire } from './wire.js';

export const NSEC3_HASH_SHA1 = 1;
export const NSEC3_FLAG_OPT_OUT = 0x01;
/** RFC 9276 §3.2: above this many additional iterations an answer is treated as insecure, as unbound does. */
export const NSEC3_MAX_ITERATIONS = 150;

/** IH(salt, x, k) of RFC 5155 §5: SHA-1 of the lower-cased wire name and salt, rehashed `iterations` times. */
export function nsec3HashBytes(name: string, salt: Buffer | string, iterations: number): Buffer {
  const saltBytes = typeof salt === 'string' ? saltFromText(salt) : salt;
  let digest = createHash('sha1')
    .update(nameWire(canonicalName(name)))
    .update(saltBytes)
    .digest();
  for (let i = 0; i < iterations; i++) digest = createHash('sha1').update(digest).update(saltBytes).digest();
  return digest;
}

/** The hash as NSEC3 owner names spell it: base32hex, lower case (RFC 5155 §3.3). */
export function nsec3Hash(name: string, salt: Buffer | string, iterations: number): string {
  return base32hexEncode(nsec3HashBytes(name, salt, iterations));
}

/** A salt in presentation form: hex, or '-' (or '') for none. */
function saltFromText(text: string): Buffer {
  return text === '-' ? Buffer.alloc(0) : Buffer.from(text, 'hex');
}

export interface Nsec3Finding {
  code: 'nsec3_iterations' | 'nsec3_iterations_insecure' | 'nsec3_salt' | 'nsec3_opt_out';
  detail: string;
}

/**
 * RFC 9276's guidance on a zone's NSEC3 parameters: any additional iteration is a
 * finding (§3.1: "MUST be 0"), above 150 the zone is treated as insecure (§3.2),
 * a salt is a finding (§3.1: SHOULD NOT), and so is opt-out (§3.1: only for large
 * delegation-centric zones).
 */
export function nsec3ParameterFindings(params: { iterations: number; salt: Buffer; flags?: number }): {
  verdict: 'ok' | 'discouraged' | 'insecure';
  findings: Nsec3Finding[];
} {
  const findings: Nsec3Finding[] = [];
  if (params.iterations > NSEC3_MAX_ITERATIONS) {
    findings.push({
      code: 'nsec3_iterations_insecure',
      detail: `${params.iterations} NSEC3 iterations: above ${NSEC3_MAX_ITERATIONS}, validators treat the zone as insecure (RFC 9276 §3.2)`,
    });
  } else if (params.iterations > 0) {
    findings.push({
      code: 'nsec3_iterations',
      detail: `${params.iterations} NSEC3 iterations: RFC 9276 §3.1 says 0`,
    });
  }
  if (params.salt.length > 0) {
    findings.push({ code: 'nsec3_salt', detail: 'an NSEC3 salt: RFC 9276 §3.1 says none' });
  }
  if (params.flags !== undefined && (params.flags & NSEC3_FLAG_OPT_OUT) !== 0) {
    findings.push({
      code: 'nsec3_opt_out',
      detail: 'NSEC3 opt-out: RFC 9276 §3.1 keeps it for very large zones',
    });
  }
  const insecure = params.iterations > NSEC3_MAX_ITERATIONS;
  return { verdict: insecure ? 'insecure' : findings.length > 0 ? 'discouraged' : 'ok', findings };
}

/** An NSEC3 record read once: its owner hash, zone, parameters. */
interface Usable {
  record: Nsec3Record;
  ownerHash: Buffer;
  zone: string;
}

function usable(record: Nsec3Record): Usable | undefined {
  const d = record.data;
  if (d.algorithm !== NSEC3_HASH_SHA1 || (d.flags & ~NSEC3_FLAG_OPT_OUT) !== 0) return undefined;
  const [first] = labelsOf(record.name);
  const ownerHash = first === undefined ? undefined : base32hexDecode(first);
  if (!ownerHash || ownerHash.length !== d.nextDomain.length || ownerHash.length === 0) return undefined;
  return { record, ownerHash, zone: canonicalName(parentName(record.name) ?? '.') };
}

/** Whether the NSEC3 is owned by the hash of `name` (with the record's parameters). */
export function nsec3Matches(record: Nsec3Record, name: string): boolean {
  const u = usable(record);
  return u !== undefined && hashFor(u, name).equals(u.ownerHash);
}

/** Whether the hash of `name` falls strictly between the NSEC3's owner and next hash (RFC 5155 §8.3; the last record wraps). */
export function nsec3Covers(record: Nsec3Record, name: string): boolean {
  const u = usable(record);
  return u !== undefined && covers(u, hashFor(u, name));
}

function hashFor(u: Usable, name: string): Buffer {
  return nsec3HashBytes(name, u.record.data.salt, u.record.data.iterations);
}

function covers(u: Usable, hash: Buffer): boolean {
  const next = u.record.data.nextDomain;
  if (Buffer.compare(u.ownerHash, next) < 0) {
    return Buffer.compare(u.ownerHash, hash) < 0 && Buffer.compare(hash, next) < 0;
  }
  // The last NSEC3 of the chain (or the only one): after the owner or before the next.
  return Buffer.compare(hash, u.ownerHash) > 0 || Buffer.compare(hash, next) < 0;
}

/** The records of one zone's chain, with the hashes a proof asks for computed once each. */
class Chain {
  private readonly cache = new Map<string, Buffer>();
  constructor(
    readonly zone: string,
    readonly records: Usable[],
  ) {}

  private hash(u: Usable, name: string): Buffer {
    const d = u.record.data;
    const key = `${canonicalName(name)}|${d.salt.toString('hex')}|${d.iterations}`;
    let hash = this.cache.get(key);
    if (!hash) {
      hash = hashFor(u, name);
      this.cache.set(key, hash);
    }
    return hash;
  }

  matching(name: string): Usable | undefined {
    return this.records.find((u) => this.hash(u, name).equals(u.ownerHash));
  }

  covering(name: string): Usable | undefined {
    return this.records.find((u) => covers(u, this.hash(u, name)));
  }
}

/**
 * The chain that can speak for `qname`: the usable records of the deepest zone
 * at or above it (as unbound's filter does), with the parameters of the first of
 * them (a zone's chain has one salt and iteration count, RFC 5155 §7.1). One
 * parameter set bounds a proof's work to a hash per ancestor of the name,
 * however many records with other salts a zone sends (the CPU exhaustion of
 * CVE-2023-50868).
 */
function chainFor(qname: string, records: readonly Nsec3Record[]): Chain | undefined {
  const all = records.map(usable).filter((u): u is Usable => u !== undefined);
  const zones = [...new Set(all.map((u) => u.zone))].filter((zone) => isAtOrBelow(qname, zone));
  const zone = zones.sort((a, b) => labelsOf(b).length - labelsOf(a).length)[0];
  const inZone = all.filter((u) => u.zone === zone);
  const first = inZone[0]?.record.data;
  if (zone === undefined || !first) return undefined;
  const sameParams = inZone.filter(
    (u) => u.record.data.iterations === first.iterations && u.record.data.salt.equals(first.salt),
  );
  return new Chain(zone, sameParams);
}

type Result = DenialResult<Nsec3Record>;

function failed(code: DenialFailureCode, detail: string, used: (Usable | undefined)[] = []): Result {
  return { status: 'failed', code, detail, records: records(used) };
}

function insecure(
  code: DenialInsecureCode,
  detail: string,
  used: (Usable | undefined)[],
  kind?: DenialKind,
): Result {
  return { status: 'insecure', code, detail, records: records(used), ...(kind ? { kind } : {}) };
}

function proven(kind: DenialKind, used: (Usable | undefined)[], closestEncloser: string): Result {
  return { status: 'proven', kind, records: records(used), closestEncloser };
}

function records(used: (Usable | undefined)[]): Nsec3Record[] {
  const out: Nsec3Record[] = [];
  for (const u of used) if (u && !out.includes(u.record)) out.push(u.record);
  return out;
}

/** The chain for `qname`, or why a proof cannot start (no records; RFC 9276 iterations). */
function start(qname: string, nsec3s: readonly Nsec3Record[]): Chain | Result {
  const chain = chainFor(qname, nsec3s);
  if (!chain || chain.records.length === 0) {
    return failed('no_denial_records', `no usable NSEC3 records of a zone above ${normalizeName(qname)}`);
  }
  const high = chain.records.find((u) => u.record.data.iterations > NSEC3_MAX_ITERATIONS);
  if (high) {
    return insecure(
      'nsec3_iterations',
      `${chain.zone} uses ${high.record.data.iterations} NSEC3 iterations, above ${NSEC3_MAX_ITERATIONS} (RFC 9276 §3.2)`,
      [high],
    );
  }
  return chain;
}

function isDelegation(u: Usable): boolean {
  return bitmapHas(u.record.data.rrtypes, 'NS') && !bitmapHas(u.record.data.rrtypes, 'SOA');
}

interface Encloser {
  closestEncloser: string;
  ce: Usable;
  nextCloser: string;
  nc: Usable;
}

/**
 * The closest-encloser proof (RFC 5155 §8.3): the deepest ancestor of `qname`
 * with a matching NSEC3, which must not be a delegation or DNAME, and an NSEC3
 * covering the next closer name. `qname` itself must not match.
 */
function closestEncloserProof(chain: Chain, qname: string): Encloser | Result {
  let candidate: string | undefined = canonicalName(qname);
  let ce: Usable | undefined;
  while (candidate !== undefined && isAtOrBelow(candidate, chain.zone)) {
    ce = chain.matching(candidate);
    if (ce) break;
    candidate = parentName(candidate);
  }
  if (!ce || candidate === undefined) {
    return failed(
      'closest_encloser_not_proven',
      `no NSEC3 matches ${normalizeName(qname)} or an ancestor of it`,
    );
  }
  if (candidate === canonicalName(qname))
    return failed('qname_exists', `the NSEC3 for ${candidate} says it exists`, [ce]);
  if (isDelegation(ce)) {
    if (!bitmapHas(ce.record.data.rrtypes, 'DS')) {
      return insecure(
        'insecure_delegation',
        `${candidate} is a delegation without DS: what is below it is unsigned`,
        [ce],
      );
    }
    return failed(
      'delegation_misused',
      `the closest encloser ${candidate} is a delegation: expected a referral`,
      [ce],
    );
  }
  if (bitmapHas(ce.record.data.rrtypes, 'DNAME')) {
    return failed(
      'dname_misused',
      `the closest encloser ${candidate} has a DNAME: expected its redirection`,
      [ce],
    );
  }
  const nextCloser = lastLabels(canonicalName(qname), labelsOf(candidate).length + 1);
  const nc = chain.covering(nextCloser);
  if (!nc)
    return failed('closest_encloser_not_proven', `no NSEC3 covers the next closer name ${nextCloser}`, [ce]);
  return { closestEncloser: candidate, ce, nextCloser, nc };
}

/**
 * The closest-encloser proof alone (RFC 5155 §8.3), for callers that show it:
 * the closest encloser, the next closer name and the two records, or why not.
 */
export function nsec3ClosestEncloser(
  qname: string,
  nsec3s: readonly Nsec3Record[],
): { closestEncloser: string; nextCloser: string; records: Nsec3Record[] } | Result {
  const chain = start(qname, nsec3s);
  if (!(chain instanceof Chain)) return chain;
  const proof = closestEncloserProof(chain, qname);
  if (!('ce' in proof)) return proof;
  return {
    closestEncloser: proof.closestEncloser,
    nextCloser: proof.nextCloser,
    records: records([proof.ce, proof.nc]),
  };
}

function optOut(u: Usable): boolean {
  return (u.record.data.flags & NSEC3_FLAG_OPT_OUT) !== 0;
}

/** NXDOMAIN (RFC 5155 §8.4): the closest-encloser proof and the wildcard at the closest encloser covered. */
export function proveNsec3Nxdomain(qname: string, nsec3s: readonly Nsec3Record[]): Result {
  const chain = start(qname, nsec3s);
  if (!(chain instanceof Chain)) return chain;
  const proof = closestEncloserProof(chain, qname);
  if (!('ce' in proof)) return proof;
  const wildcard = wildcardOf(proof.closestEncloser);
  const used = [proof.ce, proof.nc];
  const wildcardMatch = chain.matching(wildcard);
  if (wildcardMatch) {
    return failed(
      'wildcard_exists',
      `${wildcard} exists: it would have answered for ${normalizeName(qname)}`,
      [...used, wildcardMatch],
    );
  }
  const wildcardCover = chain.covering(wildcard);
  if (!wildcardCover) return failed('wildcard_not_denied', `no NSEC3 covers ${wildcard}`, used);
  if (optOut(proof.nc)) {
    // RFC 5155 §9.2: opt-out spans may hide unsigned delegations, so the name may exist.
    return insecure(
      'opt_out',
      `the NSEC3 covering ${proof.nextCloser} is opt-out`,
      [...used, wildcardCover],
      'nxdomain',
    );
  }
  return proven('nxdomain', [...used, wildcardCover], proof.closestEncloser);
}

/** Why a matching NSEC3 (at the name or its wildcard) does not deny `qtype`, if it does not. */
function bitmapObjection(u: Usable, qname: string, qtype: string, used: Usable[]): Result | undefined {
  const types = u.record.data.rrtypes;
  const what = `the NSEC3 for ${normalizeName(qname)}`;
  if (bitmapHas(types, qtype)) return failed('type_exists', `${what} lists ${qtype}`, used);
  if (bitmapHas(types, 'CNAME')) return failed('cname_exists', `${what} lists CNAME`, used);
  const ds = qtype.toUpperCase() === 'DS';
  if (ds && bitmapHas(types, 'SOA') && canonicalName(qname) !== '.') {
    return failed('child_side_record', `${what} is the child zone apex's: DS is denied by the parent`, used);
  }
  if (!ds && isDelegation(u))
    return failed('delegation_misused', `${what} is a delegation's: it denies DS only`, used);
  return undefined;
}

/**
 * NODATA (RFC 5155 §8.5–8.7): an NSEC3 matching the name without the type; or
 * the closest-encloser proof and a matching wildcard without it; or, for DS
 * (§8.6, and a referral to an unsigned zone, §8.9), the next closer name covered
 * by an opt-out NSEC3. For DS the kind says insecure_delegation (a zone cut
 * without DS, or an opted-out span) or no_ds (not a zone cut).
 */
export function proveNsec3Nodata(qname: string, qtype: string, nsec3s: readonly Nsec3Record[]): Result {
  const chain = start(qname, nsec3s);
  if (!(chain instanceof Chain)) return chain;
  const ds = qtype.toUpperCase() === 'DS';
  const match = chain.matching(qname);
  if (match) {
    const objection = bitmapObjection(match, qname, qtype, [match]);
    if (objection) return objection;
    const kind = !ds ? 'nodata' : isDelegation(match) ? 'insecure_delegation' : 'no_ds';
    return proven(kind, [match], canonicalName(qname));
  }
  const proof = closestEncloserProof(chain, qname);
  if (!('ce' in proof)) return proof;
  const used = [proof.ce, proof.nc];
  const wildcard = chain.matching(wildcardOf(proof.closestEncloser));
  if (wildcard) {
    const objection = bitmapObjection(wildcard, wildcardOf(proof.closestEncloser), qtype, [
      ...used,
      wildcard,
    ]);
    if (objection) return objection;
    return proven('wildcard_nodata', [...used, wildcard], proof.closestEncloser);
  }
  if (!optOut(proof.nc)) {
    return failed(
      ds ? 'not_opt_out' : 'not_covered',
      ds
        ? `no NSEC3 matches ${normalizeName(qname)} and the one covering ${proof.nextCloser} is not opt-out`
        : `no NSEC3 matches ${normalizeName(qname)} nor its wildcard, and no opt-out span covers it`,
      used,
    );
  }
  if (ds) return proven('insecure_delegation', used, proof.closestEncloser);
  return insecure('opt_out', `${normalizeName(qname)} lies in an opt-out span`, used, 'nodata');
}

/**
 * A wildcard answer (RFC 5155 §8.8): the next closer name below the wildcard's
 * closest encloser (from the answer's RRSIG Labels field: wildcardExpansion)
 * is covered, so the name itself does not exist.
 */
export function proveNsec3WildcardAnswer(
  qname: string,
  closestEncloser: string,
  nsec3s: readonly Nsec3Record[],
): Result {
  const chain = start(qname, nsec3s);
  if (!(chain instanceof Chain)) return chain;
  const ce = canonicalName(closestEncloser);
  const qnameLabels = labelsOf(qname).length;
  if (!isAtOrBelow(qname, ce) || qnameLabels <= labelsOf(ce).length) {
    return failed('wildcard_mismatch', `${ce} is not above ${normalizeName(qname)}`);
  }
  const nextCloser = lastLabels(canonicalName(qname), labelsOf(ce).length + 1);
  const nc = chain.covering(nextCloser);
  if (!nc) return failed('not_covered', `no NSEC3 covers the next closer name ${nextCloser}`);
  if (optOut(nc)) {
    return insecure('opt_out', `the NSEC3 covering ${nextCloser} is opt-out`, [nc], 'wildcard_answer');
  }
  return proven('wildcard_answer', [nc], ce);
}
