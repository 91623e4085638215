/**
 * The names a CT history reveals at or below a domain, with when they were
 * certified, most recently valid first. Pure.
 */
import type { CtIssuance } from '../../providers/ct/types.js';
import { isWithinDomain, wildcardBase } from './scope.js';

export interface DiscoveredName {
  /** Lower-case A-label, `*.` removed. */
  name: string;
  /** Some certificate covered it as `*.name`. */
  wildcard: boolean;
  /** Earliest `not_before` of a certificate naming it (ISO 8601 UTC). */
  first_seen: string;
  /** Latest `not_before` of a certificate naming it. */
  last_seen: string;
  /** Latest `not_after` of a certificate naming it. */
  last_not_after: string;
  /** Issuances naming it (as itself or as `*.name`). */
  certificate_count: number;
}

/**
 * Every distinct name equal to or below `domain` in `issuances` (names are
 * already lower-case LDH A-labels: the adapters dropped emails and junk),
 * ordered by the `not_after` of its most recent certificate, then its latest
 * `not_before`, then name.
 */
export function selectSubdomainNames(domain: string, issuances: readonly CtIssuance[]): DiscoveredName[] {
  const byName = new Map<string, DiscoveredName>();
  for (const issuance of issuances) {
    // A certificate for both `x` and `*.x` counts once for `x`.
    const counted = new Set<string>();
    for (const raw of issuance.dns_names) {
      if (!isWithinDomain(raw, domain)) continue;
      const { name, wildcard } = wildcardBase(raw);
      const seen = byName.get(name);
      if (!seen) {
        byName.set(name, {
          name,
          wildcard,
          first_seen: issuance.not_before,
          last_seen: issuance.not_before,
          last_not_after: issuance.not_after,
          certificate_count: 1,
        });
        counted.add(name);
        continue;
      }
      seen.wildcard ||= wildcard;
      if (counted.has(name)) continue;
      counted.add(name);
      seen.certificate_count += 1;
      if (Date.parse(issuance.not_before) < Date.parse(seen.first_seen))
        seen.first_seen = issuance.not_before;
      if (Date.parse(issuance.not_before) > Date.parse(seen.last_seen)) seen.last_seen = issuance.not_before;
      if (Date.parse(issuance.not_after) > Date.parse(seen.last_not_after))
        seen.last_not_after = issuance.not_after;
    }
  }
  return [...byName.values()].sort(
    (a, b) =>
      Date.parse(b.last_not_after) - Date.parse(a.last_not_after) ||
      Date.parse(b.last_seen) - Date.parse(a.last_seen) ||
      (a.name < b.name ? -1 : a.name > b.name ? 1 : 0),
  );
}
