/**
 * Which certificate names belong to a queried domain. Pure.
 */

/** `*.a.example.com` → `{ name: 'a.example.com', wildcard: true }`. */
export function wildcardBase(name: string): { name: string; wildcard: boolean } {
  return name.startsWith('*.') ? { name: name.slice(2), wildcard: true } : { name, wildcard: false };
}

/**
 * True when `name` (wildcard prefix ignored) is `domain` or below it. A
 * suffix match on a label boundary only: `example.com.evil.net` and
 * `testexample.com` are not under `example.com`.
 */
export function isWithinDomain(name: string, domain: string): boolean {
  const base = wildcardBase(name).name;
  return base === domain || base.endsWith(`.${domain}`);
}
