/**
 * A domain's CT history from one provider's records: keep the issuances
 * naming the domain or a name below it, merge the records of one issuance,
 * newest first, capped. Pure; the result is what the CT chain caches and both
 * /api/certificates and /api/subdomains read.
 */
import type { CtGap, CtGapReason, CtIssuance, CtRecords } from '../../providers/ct/types.js';
import { isWithinDomain } from './scope.js';

/** Issuances kept per domain; older ones are dropped, and an `issuance_cap` gap says so. */
export const MAX_ISSUANCES = 1000;

/** Why a history is not the domain's whole CT history: the provider's gaps, or this list's own cap. */
export interface HistoryGap {
  reason: CtGapReason | 'issuance_cap';
  detail: string;
}

export interface CtHistory {
  /** Newest `not_before` first, at most MAX_ISSUANCES. */
  issuances: CtIssuance[];
  /** Distinct in-scope issuances found, before the cap. */
  total: number;
  /** Empty when the list is the whole history the provider holds. */
  gaps: HistoryGap[];
}

export function buildHistory(domain: string, records: CtRecords, cap = MAX_ISSUANCES): CtHistory {
  const inScope = records.issuances.filter((i) => i.dns_names.some((n) => isWithinDomain(n, domain)));
  const merged = mergeIssuances(inScope).sort(newestFirst);
  const gaps: HistoryGap[] = records.gaps.map((g: CtGap) => ({ reason: g.reason, detail: g.detail }));
  if (merged.length > cap) {
    gaps.push({
      reason: 'issuance_cap',
      detail: `Only the ${cap} newest of ${merged.length} issuances are listed.`,
    });
  }
  return { issuances: merged.slice(0, cap), total: merged.length, gaps };
}

/**
 * One entry per issuance. A CA logs a precertificate and later (often) the
 * final certificate, and crt.sh lists each log entry, so one issuance shows
 * up as several records with the same issuer and serial (RFC 6962 §3.1: the
 * precertificate carries the certificate's serial). Without a serial (crt.sh's
 * legacy schema, Cert Spotter) records match on issuer, validity and names.
 * The merged entry keeps the lowest id (the first logged), the earliest entry
 * timestamp and every name.
 */
export function mergeIssuances(records: readonly CtIssuance[]): CtIssuance[] {
  const groups = new Map<string, CtIssuance>();
  for (const record of records) {
    const key = issuanceKey(record);
    const seen = groups.get(key);
    groups.set(key, seen ? combine(seen, record) : { ...record, dns_names: [...record.dns_names] });
  }
  return [...groups.values()];
}

function issuanceKey(i: CtIssuance): string {
  const issuer = `${i.issuer.organization ?? ''}\u0000${i.issuer.name}`;
  return i.serial !== null
    ? `serial\u0000${issuer}\u0000${i.serial}`
    : `validity\u0000${issuer}\u0000${i.not_before}\u0000${i.not_after}\u0000${i.dns_names.join(',')}`;
}

function combine(a: CtIssuance, b: CtIssuance): CtIssuance {
  const [first, second] = compareIds(a.id, b.id) <= 0 ? [a, b] : [b, a];
  const merged: CtIssuance = {
    ...first,
    common_name: first.common_name ?? second.common_name,
    dns_names: [...new Set([...first.dns_names, ...second.dns_names])].sort(),
  };
  const entries = [a.entry_timestamp, b.entry_timestamp].filter((t): t is string => t !== undefined);
  if (entries.length > 0)
    merged.entry_timestamp = entries.reduce((x, y) => (Date.parse(y) < Date.parse(x) ? y : x));
  if (a.revoked !== undefined || b.revoked !== undefined)
    merged.revoked = a.revoked === true || b.revoked === true;
  return merged;
}

/** Numeric ids (crt.sh, Cert Spotter) compare as numbers, whatever their length. */
function compareIds(a: string, b: string): number {
  if (/^\d+$/.test(a) && /^\d+$/.test(b)) return a.length - b.length || (a < b ? -1 : a > b ? 1 : 0);
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Newest `not_before` first; then the later `not_after`; then the id, so the order is stable. */
export function newestFirst(a: CtIssuance, b: CtIssuance): number {
  return (
    Date.parse(b.not_before) - Date.parse(a.not_before) ||
    Date.parse(b.not_after) - Date.parse(a.not_after) ||
    compareIds(a.id, b.id)
  );
}
