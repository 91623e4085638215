/**
 * The `tag=value; tag=value` syntax of DKIM key records (RFC 6376 §3.2),
 * which DMARC (RFC 9989), BIMI and, with small differences, MTA-STS and
 * TLS-RPT records share. Pure parsing; each check applies its own tag rules.
 */

export interface Tag {
  /** Lower-cased: tag names compare case-insensitively in every record type that uses them. */
  name: string;
  value: string;
}

export interface TagList {
  tags: Tag[];
  /** Names seen more than once (RFC 6376 §3.2: the whole tag-list is then invalid). */
  duplicates: string[];
  /** Pieces that are not `name=value`. */
  malformed: string[];
}

// RFC 6376 §3.2: tag-name = ALPHA *ALNUMPUNC, ALNUMPUNC = ALPHA / DIGIT / "_".
const TAG_NAME = /^[A-Za-z][A-Za-z0-9_]*$/;

/** Splits a record into tags. Whitespace around names, `=` and values is folding whitespace and dropped. */
export function parseTagList(text: string): TagList {
  const tags: Tag[] = [];
  const seen = new Set<string>();
  const duplicates: string[] = [];
  const malformed: string[] = [];
  for (const piece of text.split(';')) {
    const spec = piece.trim();
    // A trailing ";" is allowed; empty pieces elsewhere are tolerated the way receivers do.
    if (spec === '') continue;
    const eq = spec.indexOf('=');
    const name = eq < 0 ? '' : spec.slice(0, eq).trim();
    if (eq < 0 || !TAG_NAME.test(name)) {
      malformed.push(spec);
      continue;
    }
    const lower = name.toLowerCase();
    if (seen.has(lower) && !duplicates.includes(lower)) duplicates.push(lower);
    seen.add(lower);
    tags.push({ name: lower, value: spec.slice(eq + 1).trim() });
  }
  return { tags, duplicates, malformed };
}

/** The first value of a tag, or undefined. */
export function tagValue(list: TagList, name: string): string | undefined {
  return list.tags.find((t) => t.name === name)?.value;
}
