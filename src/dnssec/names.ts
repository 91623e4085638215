/**
 * Domain names as DNSSEC reads them: the canonical (lower-case) spelling, label
 * counts, ancestry and the canonical order of RFC 4034 §6.1.
 *
 * Names arrive as dns-packet writes them: no trailing dot, any case, the root as
 * '' or '.'. Every function here accepts that, and a trailing dot, and returns
 * names without one (the root as '.').
 *
 * Lower-casing is ASCII only (RFC 4034 §6.2, RFC 4343 §3): a label's other octets
 * are data, and String.toLowerCase would change the bytes a signature covers.
 */

/** The root or a name without its trailing dot. */
export function normalizeName(name: string): string {
  if (name === '' || name === '.') return '.';
  return name.endsWith('.') ? name.slice(0, -1) : name;
}

/** A–Z to a–z, nothing else. */
export function asciiLower(text: string): string {
  return text.replace(/[A-Z]+/g, (upper) => upper.toLowerCase());
}

/** The canonical spelling (RFC 4034 §6.2): ASCII lower case, no trailing dot, the root '.'. */
export function canonicalName(name: string): string {
  return asciiLower(normalizeName(name));
}

/** The labels, leftmost first; the root has none. */
export function labelsOf(name: string): string[] {
  const normalized = normalizeName(name);
  return normalized === '.' ? [] : normalized.split('.');
}

/**
 * The RRSIG Labels value for an owner name (RFC 4034 §3.1.3): its labels, not
 * counting the root nor a leading wildcard label.
 */
export function rrsigLabelCount(name: string): number {
  const labels = labelsOf(name);
  return labels[0] === '*' ? labels.length - 1 : labels.length;
}

/** The name made of the rightmost `count` labels of `name` ('.' for 0). */
export function lastLabels(name: string, count: number): string {
  const labels = labelsOf(name);
  if (count <= 0) return '.';
  return labels.slice(Math.max(0, labels.length - count)).join('.');
}

/** The name with its leftmost label removed; the root's parent is undefined. */
export function parentName(name: string): string | undefined {
  const labels = labelsOf(name);
  if (labels.length === 0) return undefined;
  return labels.length === 1 ? '.' : labels.slice(1).join('.');
}

/** Whether the two names are the same name (case-insensitively, RFC 4343). */
export function sameName(a: string, b: string): boolean {
  return canonicalName(a) === canonicalName(b);
}

/** Whether `name` is `ancestor` or below it. */
export function isAtOrBelow(name: string, ancestor: string): boolean {
  const n = labelsOf(canonicalName(name));
  const a = labelsOf(canonicalName(ancestor));
  if (a.length > n.length) return false;
  const offset = n.length - a.length;
  return a.every((label, i) => label === n[offset + i]);
}

/** Whether `name` is strictly below `ancestor`. */
export function isBelow(name: string, ancestor: string): boolean {
  return labelsOf(name).length > labelsOf(ancestor).length && isAtOrBelow(name, ancestor);
}

/** The longest name both are at or below (the root at least). */
export function commonAncestor(a: string, b: string): string {
  const x = labelsOf(canonicalName(a)).reverse();
  const y = labelsOf(canonicalName(b)).reverse();
  let shared = 0;
  while (shared < x.length && shared < y.length && x[shared] === y[shared]) shared++;
  return shared === 0 ? '.' : x.slice(0, shared).reverse().join('.');
}

/** '*.' + name (the root's wildcard is '*'). */
export function wildcardOf(name: string): string {
  const normalized = normalizeName(name);
  return normalized === '.' ? '*' : `*.${normalized}`;
}

/**
 * The canonical order of RFC 4034 §6.1: names compared label by label from the
 * rightmost, each label as its lower-cased octets, a missing label first.
 * Negative when a sorts before b, 0 when they are the same name.
 */
export function compareNames(a: string, b: string): number {
  const x = labelsOf(canonicalName(a)).reverse();
  const y = labelsOf(canonicalName(b)).reverse();
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const order = Buffer.compare(Buffer.from(x[i]!, 'utf8'), Buffer.from(y[i]!, 'utf8'));
    if (order !== 0) return order;
  }
  return x.length - y.length;
}
