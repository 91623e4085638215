/**
 * Names as the engine compares them: one spelling (lower case, no trailing
 * dot, the root as "."), and the zone relations iteration decides by (is a
 * name at or below a zone, the zone cuts above a name). Comparison is
 * case-insensitive ASCII (RFC 4343); the records themselves keep the case the
 * server sent, since the validator needs it unchanged.
 */
import { canonicalName } from '../providers/dns/names.js';

export { canonicalName };

/** Whether `name` is `zone` or below it (RFC 1034 §3.1: "in" the zone's name space). */
export function isAtOrBelow(name: string, zone: string): boolean {
  const n = canonicalName(name);
  const z = canonicalName(zone);
  if (z === '.') return true;
  return n === z || n.endsWith(`.${z}`);
}

/** Whether `name` is strictly below `zone`. */
export function isBelow(name: string, zone: string): boolean {
  return isAtOrBelow(name, zone) && canonicalName(name) !== canonicalName(zone);
}

export function sameName(a: string, b: string): boolean {
  return canonicalName(a) === canonicalName(b);
}

/** The name one label up; the root's parent is the root. */
export function parentName(name: string): string {
  const n = canonicalName(name);
  if (n === '.') return '.';
  const dot = n.indexOf('.');
  return dot === -1 ? '.' : n.slice(dot + 1);
}

/** `name` and every name above it, nearest first, the root last: where a zone cut may be. */
export function selfAndAncestors(name: string): string[] {
  const out: string[] = [];
  for (let n = canonicalName(name); ; n = parentName(n)) {
    out.push(n);
    if (n === '.') return out;
  }
}
