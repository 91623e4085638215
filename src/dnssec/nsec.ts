/**
 * Authenticated denial with NSEC (RFC 4034 §4, RFC 4035 §3.1.3 and §5.4,
 * RFC 6840 §4): which names an NSEC covers or matches, and the proofs of
 * NXDOMAIN, NODATA (plain, empty non-terminal, wildcard), a wildcard answer and
 * a delegation without DS.
 *
 * The records handed in must already be validated (their RRSIGs verified) and
 * come from the zone that holds the name; these functions read only what the
 * records say. Each proof returns the records it rests on, or why it fails.
 */
import {
  canonicalName,
  commonAncestor,
  compareNames,
  isBelow,
  labelsOf,
  normalizeName,
  sameName,
  wildcardOf,
} from './names.js';
import type { DenialFailureCode, DenialResult, NsecRecord } from './types.js';

/** Whether a type bitmap (dns-packet's list of type names) holds `type`. */
export function bitmapHas(rrtypes: readonly string[], type: string): boolean {
  const wanted = type.toUpperCase();
  return rrtypes.some((t) => t.toUpperCase() === wanted);
}

/** Whether the NSEC is owned by `name`. */
export function nsecMatches(nsec: NsecRecord, name: string): boolean {
  return sameName(nsec.name, name);
}

/**
 * Whether `name` falls strictly between the NSEC's owner and next name in
 * canonical order (RFC 4034 §6.1). The last NSEC of a zone points back to the
 * apex (next ≤ owner): it covers every name after its owner that is below the apex.
 */
export function nsecCovers(nsec: NsecRecord, name: string): boolean {
  const owner = nsec.name;
  const next = nsec.data.nextDomain;
  const order = compareNames(owner, next);
  if (order < 0) return compareNames(owner, name) < 0 && compareNames(name, next) < 0;
  return compareNames(owner, name) < 0 && isBelow(name, next);
}

/**
 * Whether the NSEC proves that `name` does not exist: it covers the name, is not
 * the parent side of a delegation or a DNAME above it (RFC 6840 §4.1, RFC 6672
 * §5.3.4.1: names below those are not this zone's to deny), and its next name
 * is not below the name (which would make the name an empty non-terminal).
 */
function provesAbsent(nsec: NsecRecord, name: string): boolean {
  if (!nsecCovers(nsec, name)) return false;
  if (isBelow(name, nsec.name) && (isDelegation(nsec) || bitmapHas(nsec.data.rrtypes, 'DNAME'))) return false;
  return !isBelow(nsec.data.nextDomain, name);
}

/** NS without SOA: the NSEC is the parent side of a zone cut. */
function isDelegation(nsec: NsecRecord): boolean {
  return bitmapHas(nsec.data.rrtypes, 'NS') && !bitmapHas(nsec.data.rrtypes, 'SOA');
}

/**
 * The closest encloser an NSEC that covers `name` implies: the longer of the
 * names it shares with the NSEC's owner and with its next name.
 */
export function nsecClosestEncloser(name: string, nsec: NsecRecord): string {
  const a = commonAncestor(name, nsec.name);
  const b = commonAncestor(name, nsec.data.nextDomain);
  return labelsOf(a).length >= labelsOf(b).length ? a : b;
}

function failed(
  code: DenialFailureCode,
  detail: string,
  records: NsecRecord[] = [],
): DenialResult<NsecRecord> {
  return { status: 'failed', code, detail, records };
}

function unique(records: NsecRecord[]): NsecRecord[] {
  return records.filter((r, i) => records.findIndex((s) => sameName(s.name, r.name)) === i);
}

/** Why no NSEC proves `name` absent, for the failure's detail and code. */
function whyNotAbsent(name: string, nsecs: readonly NsecRecord[]): DenialResult<NsecRecord> {
  const match = nsecs.find((n) => nsecMatches(n, name));
  if (match) return failed('qname_exists', `the NSEC at ${normalizeName(name)} says it exists`, [match]);
  const ent = nsecs.find((n) => nsecCovers(n, name) && isBelow(n.data.nextDomain, name));
  if (ent) {
    return failed('qname_exists', `${normalizeName(name)} is an empty non-terminal (names exist below it)`, [
      ent,
    ]);
  }
  const above = nsecs.find((n) => nsecCovers(n, name));
  if (above) {
    const misuse = bitmapHas(above.data.rrtypes, 'DNAME') ? 'dname_misused' : 'delegation_misused';
    return failed(
      misuse,
      `the NSEC at ${normalizeName(above.name)} is above ${normalizeName(name)} at a zone cut or DNAME`,
      [above],
    );
  }
  return failed('not_covered', `no NSEC covers ${normalizeName(name)}`);
}

/**
 * NXDOMAIN (RFC 4035 §5.4): an NSEC proving the name absent, and one proving
 * absent the wildcard at the closest encloser that NSEC implies.
 */
export function proveNsecNxdomain(qname: string, nsecs: readonly NsecRecord[]): DenialResult<NsecRecord> {
  if (nsecs.length === 0) return failed('no_denial_records', 'no NSEC records');
  const cover = nsecs.find((n) => provesAbsent(n, qname));
  if (!cover) return whyNotAbsent(qname, nsecs);
  const closestEncloser = nsecClosestEncloser(qname, cover);
  const wildcard = wildcardOf(closestEncloser);
  const wildcardMatch = nsecs.find((n) => nsecMatches(n, wildcard));
  if (wildcardMatch) {
    return failed(
      'wildcard_exists',
      `${wildcard} exists: it would have answered for ${normalizeName(qname)}`,
      [cover, wildcardMatch],
    );
  }
  const wildcardCover = nsecs.find((n) => provesAbsent(n, wildcard));
  if (!wildcardCover) return failed('wildcard_not_denied', `no NSEC proves ${wildcard} absent`, [cover]);
  return { status: 'proven', kind: 'nxdomain', records: unique([cover, wildcardCover]), closestEncloser };
}

/** Why an NSEC owned by the name (or its wildcard) does not deny `qtype` there, if it does not. */
function bitmapObjection(
  nsec: NsecRecord,
  qname: string,
  qtype: string,
): DenialResult<NsecRecord> | undefined {
  const types = nsec.data.rrtypes;
  const at = normalizeName(nsec.name);
  if (bitmapHas(types, qtype)) return failed('type_exists', `the NSEC at ${at} lists ${qtype}`, [nsec]);
  if (bitmapHas(types, 'CNAME')) return failed('cname_exists', `the NSEC at ${at} lists CNAME`, [nsec]);
  const ds = qtype.toUpperCase() === 'DS';
  if (!ds && isDelegation(nsec)) {
    // RFC 6840 §4.4: the parent side of a zone cut denies DS only.
    return failed('delegation_misused', `the NSEC at ${at} is a delegation's: it denies DS only`, [nsec]);
  }
  if (ds && bitmapHas(types, 'SOA') && canonicalName(qname) !== '.') {
    // The DS lives in the parent: the child apex's NSEC cannot deny it.
    return failed(
      'child_side_record',
      `the NSEC at ${at} is the child zone's apex: DS is denied by the parent`,
      [nsec],
    );
  }
  return undefined;
}

/**
 * NODATA (RFC 4035 §5.4, RFC 6840 §4.4): an NSEC at the name without the type
 * (nor CNAME); an empty non-terminal (an NSEC covering the name whose next name
 * is below it); or the name absent and the wildcard at its closest encloser
 * present without the type (RFC 4035 §3.1.3.4). For DS the kind says whether
 * the name is a delegation (insecure_delegation: NS without DS, RFC 4035 §5.2)
 * or not a zone cut at all (no_ds).
 */
export function proveNsecNodata(
  qname: string,
  qtype: string,
  nsecs: readonly NsecRecord[],
): DenialResult<NsecRecord> {
  if (nsecs.length === 0) return failed('no_denial_records', 'no NSEC records');
  const ds = qtype.toUpperCase() === 'DS';
  const match = nsecs.find((n) => nsecMatches(n, qname));
  if (match) {
    const objection = bitmapObjection(match, qname, qtype);
    if (objection) return objection;
    const kind = !ds ? 'nodata' : isDelegation(match) ? 'insecure_delegation' : 'no_ds';
    return { status: 'proven', kind, records: [match], closestEncloser: canonicalName(qname) };
  }
  const ent = nsecs.find(
    (n) =>
      nsecCovers(n, qname) &&
      isBelow(n.data.nextDomain, qname) &&
      !(isBelow(qname, n.name) && isDelegation(n)),
  );
  if (ent) {
    return {
      status: 'proven',
      kind: ds ? 'no_ds' : 'nodata',
      records: [ent],
      closestEncloser: canonicalName(qname),
    };
  }

  const cover = nsecs.find((n) => provesAbsent(n, qname));
  if (!cover) return whyNotAbsent(qname, nsecs);
  const closestEncloser = nsecClosestEncloser(qname, cover);
  const wildcard = wildcardOf(closestEncloser);
  const wildcardMatch = nsecs.find((n) => nsecMatches(n, wildcard));
  if (!wildcardMatch) {
    return failed('not_covered', `${normalizeName(qname)} does not exist and no NSEC shows ${wildcard}`, [
      cover,
    ]);
  }
  const objection = bitmapObjection(wildcardMatch, qname, qtype);
  if (objection) return { ...objection, records: [cover, wildcardMatch] };
  return {
    status: 'proven',
    kind: 'wildcard_nodata',
    records: unique([cover, wildcardMatch]),
    closestEncloser,
  };
}

/**
 * A wildcard answer (RFC 4035 §5.3.4): the name itself does not exist, and the
 * closest encloser the NSEC implies is the wildcard's parent (`closestEncloser`,
 * from the answer's RRSIG Labels field: wildcardExpansion), so no closer name
 * exists that the wildcard would not apply to.
 */
export function proveNsecWildcardAnswer(
  qname: string,
  closestEncloser: string,
  nsecs: readonly NsecRecord[],
): DenialResult<NsecRecord> {
  if (nsecs.length === 0) return failed('no_denial_records', 'no NSEC records');
  if (!isBelow(qname, closestEncloser)) {
    return failed(
      'wildcard_mismatch',
      `${normalizeName(closestEncloser)} is not above ${normalizeName(qname)}`,
    );
  }
  const cover = nsecs.find((n) => provesAbsent(n, qname));
  if (!cover) return whyNotAbsent(qname, nsecs);
  const implied = nsecClosestEncloser(qname, cover);
  if (!sameName(implied, closestEncloser)) {
    return failed(
      'wildcard_mismatch',
      `the NSEC puts the closest encloser of ${normalizeName(qname)} at ${implied}, not at the wildcard's ${normalizeName(closestEncloser)}`,
      [cover],
    );
  }
  return {
    status: 'proven',
    kind: 'wildcard_answer',
    records: [cover],
    closestEncloser: canonicalName(closestEncloser),
  };
}
