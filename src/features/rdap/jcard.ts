/**
 * jCard (RFC 7095), the JSON form of vCard 4.0 (RFC 6350) that RDAP uses for
 * contacts (RFC 9083 §5.1 `vcardArray`), read into plain fields. Pure.
 *
 *   ["vcard", [ [name, params, value-type, value, value...], ... ]]
 *
 * Registries vary: `tel` arrives as a `uri` ("tel:+1.555") or as `text`;
 * `type` params as a string or an array; `adr` components as strings or
 * arrays of strings; empty strings stand for absent values. Everything
 * unreadable is skipped, never thrown.
 */

export interface JCardPhone {
  number: string;
  /** RFC 6350 §6.4.1 TYPE values, lower case: voice, fax, work, cell, ... */
  types: string[];
}

export interface JCardAddress {
  /** The formatted address from the LABEL parameter (RFC 6350 §6.3.1), when given. */
  label: string | null;
  /** Post office box, extended address and street address components, non-empty ones in order. */
  lines: string[];
  locality: string | null;
  region: string | null;
  postal_code: string | null;
  country: string | null;
  /** ISO 3166-1 alpha-2 from the CC parameter (RFC 8605), upper case. */
  country_code: string | null;
}

export interface JCard {
  /** FN, the formatted name (RFC 6350 §6.2.1). */
  fn: string | null;
  /** KIND: individual, org, group, location (RFC 6350 §6.1.4). */
  kind: string | null;
  /** ORG, units joined with ", " (RFC 6350 §6.6.4). */
  org: string | null;
  /** Most preferred first (PREF, RFC 6350 §5.3). */
  emails: string[];
  phones: JCardPhone[];
  addresses: JCardAddress[];
  urls: string[];
}

interface Property {
  name: string;
  params: Record<string, unknown>;
  values: unknown[];
}

/** Parses `vcardArray`; undefined when it is not a jCard at all. */
export function parseJCard(vcardArray: unknown): JCard | undefined {
  if (!Array.isArray(vcardArray) || String(vcardArray[0]).toLowerCase() !== 'vcard') return undefined;
  const list = vcardArray[1];
  if (!Array.isArray(list)) return undefined;
  const props = list.map(readProperty).filter((p): p is Property => p !== undefined);
  const ordered = (name: string) => props.filter((p) => p.name === name).sort((a, b) => pref(a) - pref(b));

  return {
    fn: firstText(ordered('fn')),
    kind: firstText(ordered('kind'))?.toLowerCase() ?? null,
    org:
      ordered('org')
        .map((p) => joinComponents(p.values[0]))
        .find((v) => v !== '') ?? null,
    emails: unique(ordered('email').map((p) => text(p.values[0]).replace(/^mailto:/i, ''))),
    phones: ordered('tel')
      .map((p) => ({ number: text(p.values[0]).replace(/^tel:/i, ''), types: typesOf(p) }))
      .filter((p) => p.number !== ''),
    addresses: ordered('adr')
      .map(readAddress)
      .filter((a): a is JCardAddress => a !== undefined),
    urls: unique(ordered('url').map((p) => text(p.values[0]))),
  };
}

/** The first phone that is not only a fax (voice when marked), else the first. */
export function voicePhone(card: JCard): string | null {
  const voice =
    card.phones.find((p) => p.types.includes('voice')) ?? card.phones.find((p) => !p.types.includes('fax'));
  return voice?.number ?? null;
}

export function faxPhone(card: JCard): string | null {
  return card.phones.find((p) => p.types.includes('fax'))?.number ?? null;
}

function readProperty(entry: unknown): Property | undefined {
  if (!Array.isArray(entry) || entry.length < 4 || typeof entry[0] !== 'string') return undefined;
  const params =
    typeof entry[1] === 'object' && entry[1] !== null && !Array.isArray(entry[1]) ? entry[1] : {};
  // Property names are case-insensitive (RFC 6350 §3.3); jCard writes them lower case, not every registry does.
  return { name: entry[0].toLowerCase(), params: params as Record<string, unknown>, values: entry.slice(3) };
}

/** PREF 1..100, 1 most preferred; absent sorts after every explicit preference (RFC 6350 §5.3). */
function pref(p: Property): number {
  const n = Number(p.params.pref);
  return Number.isInteger(n) && n >= 1 && n <= 100 ? n : 101;
}

function typesOf(p: Property): string[] {
  const t = p.params.type;
  const list = Array.isArray(t) ? t : typeof t === 'string' ? t.split(',') : [];
  return list.filter((x): x is string => typeof x === 'string').map((x) => x.trim().toLowerCase());
}

function text(value: unknown): string {
  return typeof value === 'string' ? value.trim() : '';
}

function firstText(props: Property[]): string | null {
  for (const p of props) {
    const v = text(p.values[0]);
    if (v !== '') return v;
  }
  return null;
}

/** A structured value component: a string, or several values as an array of strings (RFC 7095 §3.3.1.3). */
function components(value: unknown): string[] {
  if (typeof value === 'string') return value.trim() === '' ? [] : [value.trim()];
  if (Array.isArray(value))
    return value.flatMap((v) => (typeof v === 'string' && v.trim() !== '' ? [v.trim()] : []));
  return [];
}

function joinComponents(value: unknown): string {
  return components(value).join(', ');
}

/**
 * ADR (RFC 6350 §6.3.1): seven components, post office box, extended
 * address, street, locality, region, postal code, country. Many registries
 * leave them empty and put the whole address in the LABEL parameter.
 */
function readAddress(p: Property): JCardAddress | undefined {
  const value = p.values[0];
  const parts: unknown[] = Array.isArray(value) ? value : [];
  const one = (i: number) => components(parts[i]).join(', ') || null;
  const label =
    typeof p.params.label === 'string' && p.params.label.trim() !== '' ? p.params.label.trim() : null;
  const cc =
    typeof p.params.cc === 'string' && /^[a-z]{2}$/i.test(p.params.cc) ? p.params.cc.toUpperCase() : null;
  const address: JCardAddress = {
    label,
    lines: [0, 1, 2].flatMap((i) => components(parts[i])),
    locality: one(3),
    region: one(4),
    postal_code: one(5),
    country: one(6),
    country_code: cc,
  };
  const empty =
    address.label === null &&
    address.lines.length === 0 &&
    [address.locality, address.region, address.postal_code, address.country, address.country_code].every(
      (v) => v === null,
    );
  return empty ? undefined : address;
}

function unique(values: string[]): string[] {
  return [...new Set(values.filter((v) => v !== ''))];
}
