/**
 * The catalogue of DNS blocklists (docs/blocklists.md): the bundled data file, or the one
 * BLOCKLISTS_FILE names, read, checked entry by entry, and joined with the keys the
 * configuration holds.
 *
 * A list's key is configuration, never data: the file names the setting that holds it
 * (`"key": "SPAMHAUS_DQS_KEY"`) and puts `{key}` where it goes in the zone
 * (`{key}.zen.dq.spamhaus.net`); src/config reads those settings from the environment at
 * start-up (Config.blocklistKeys). The key itself is kept off every enumerable property of
 * a list, so spreading a list into an answer or serializing it cannot carry it; only
 * queryZone() writes it, into the name sent to the list's own servers.
 */

import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { type Static, Type } from 'typebox';
import { Value } from 'typebox/value';

/** The catalogue shipped with netdiag (its build copies data/*.json beside this module). */
export const BUNDLED_BLOCKLISTS_FILE = fileURLToPath(new URL('./data/blocklists.json', import.meta.url));

/** Where a keyed list's zone takes its key: the whole first label. */
export const KEY_PLACEHOLDER = '{key}';

export const BLOCKLIST_KINDS = ['ip4', 'ip6', 'domain'] as const;
export type BlocklistKind = (typeof BLOCKLIST_KINDS)[number];

const CodeTable = Type.Record(Type.String(), Type.String({ minLength: 1 }));

/** One entry as the file holds it (issue 35's format; other fields are allowed and kept out). */
const BlocklistEntry = Type.Object({
  zone: Type.String({ minLength: 1 }),
  name: Type.String({ minLength: 1 }),
  kind: Type.String(),
  codes: CodeTable,
  refusal_codes: CodeTable,
  delist_url: Type.String({ minLength: 1 }),
  key: Type.Union([Type.Null(), Type.String()]),
  terms: Type.String({ minLength: 1 }),
  enabled: Type.Boolean(),
  sources: Type.Optional(Type.Array(Type.String())),
  bitmask: Type.Optional(Type.Boolean()),
});
type BlocklistEntry = Static<typeof BlocklistEntry>;

/** A list as the service uses it. Its fields are safe to show; the key is not among them. */
export interface Blocklist {
  /** The zone as shown: the file's zone without its key label (`zen.dq.spamhaus.net`). */
  readonly zone: string;
  readonly name: string;
  readonly kind: BlocklistKind;
  /** Return code → the list's own meaning of it; an answer among these is a listing. */
  readonly codes: Readonly<Record<string, string>>;
  /** Return code → why the list declined to answer: never a listing. */
  readonly refusalCodes: Readonly<Record<string, string>>;
  readonly delistUrl: string;
  /** The setting holding the list's key (SPAMHAUS_DQS_KEY), or null for a list without one. */
  readonly keySetting: string | null;
  /** True when the list needs a key and its setting is not set: the service reports it `refused`. */
  readonly keyMissing: boolean;
  readonly terms: string;
  readonly enabled: boolean;
  /** The answer's last octet is a sum of list bits (SURBL, URIBL multi), read bit by bit. */
  readonly bitmask: boolean;
  readonly sources: readonly string[];
  /**
   * The key's value (non-enumerable: JSON.stringify, spreads and Object.keys skip it).
   * Read it only to build a query name, through queryZone().
   */
  readonly keyValue: string | null;
}

export interface Catalogue {
  /** The file read: BLOCKLISTS_FILE or the bundled one. */
  readonly file: string;
  readonly lists: readonly Blocklist[];
}

/** A catalogue file that cannot be used; the message names the file, the entry and the field. */
export class CatalogueError extends Error {
  override readonly name = 'CatalogueError';
}

/** The zone to query: the key in its place. Null when the key is missing (nothing may be sent). */
export function queryZone(list: Blocklist): string | null {
  if (list.keySetting === null) return list.zone;
  if (list.keyValue === null) return null;
  return `${list.keyValue}.${list.zone}`;
}

/** A key's setting: UPPER_SNAKE_CASE ending in _KEY, so a catalogue cannot name just any variable. */
const SETTING_NAME = /^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*_KEY$/;
const LDH_LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
/** An A record a list answers: 127.0.0.0/8, the range RFC 5782 §2.1 reserves for them. */
const LOOPBACK_CODE =
  /^127\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$/;
/** What a key may be: one DNS label, so it cannot move the query out of the list's zone. */
const KEY_VALUE = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/;

/** Why `zone` is not a zone name this catalogue accepts, or undefined. */
function zoneProblem(zone: string, keyed: boolean): string | undefined {
  const labels = zone.toLowerCase().split('.');
  if (keyed) {
    if (labels[0] !== KEY_PLACEHOLDER)
      return `must start with the label ${KEY_PLACEHOLDER} (where the key goes), as "${KEY_PLACEHOLDER}.zen.dq.spamhaus.net"`;
    labels.shift();
  } else if (zone.includes(KEY_PLACEHOLDER)) {
    return `holds ${KEY_PLACEHOLDER} but the list has no key setting`;
  }
  if (labels.length < 2) return `"${zone}" is not a zone under a domain (at least two labels)`;
  if (labels.join('.').length > 253 - 64)
    return 'is too long to prepend an address to (RFC 1035: 253 characters)';
  for (const label of labels) {
    if (!LDH_LABEL.test(label))
      return `"${zone}" has an invalid label "${label}" (letters, digits, inner hyphens)`;
  }
  if (/^\d+$/.test(labels[labels.length - 1] ?? '')) return `"${zone}" ends in a number: not a domain name`;
  return undefined;
}

function codeProblem(table: Record<string, string>, field: string): string | undefined {
  for (const code of Object.keys(table)) {
    if (!LOOPBACK_CODE.test(code)) return `${field}: "${code}" is not a 127.x.x.x address (RFC 5782 §2.1)`;
  }
  return undefined;
}

function urlProblem(value: string): string | undefined {
  try {
    const url = new URL(value);
    if (url.protocol !== 'https:' && url.protocol !== 'http:') return `"${value}" is not an http(s) URL`;
    if (url.username || url.password) return 'must not carry credentials';
  } catch {
    return `"${value}" is not an absolute URL`;
  }
  return undefined;
}

/** The first thing wrong with an entry, as "field: why". */
function entryProblem(entry: unknown): string | undefined {
  if (!Value.Check(BlocklistEntry, entry)) {
    const errors = Value.Errors(BlocklistEntry, entry);
    // The most specific error: the deepest path, whose message names the actual mismatch.
    const first = [...errors].sort((a, b) => b.instancePath.length - a.instancePath.length)[0];
    const field = first?.instancePath.replace(/^\//, '').replaceAll('/', '.') || 'entry';
    const missing = first?.keyword === 'required' ? ` (${JSON.stringify(first.params)})` : '';
    return `${field}: ${first?.message ?? 'does not match the catalogue format'}${missing}`;
  }
  const e = entry as BlocklistEntry;
  if (!(BLOCKLIST_KINDS as readonly string[]).includes(e.kind))
    return `kind: "${e.kind}" is not one of ${BLOCKLIST_KINDS.join(', ')}`;
  if (e.key !== null && !SETTING_NAME.test(e.key))
    return `key: "${e.key}" is not a key setting's name (UPPER_SNAKE_CASE ending in _KEY, such as SPAMHAUS_DQS_KEY)`;
  const zone = zoneProblem(e.zone, e.key !== null);
  if (zone !== undefined) return `zone: ${zone}`;
  if (Object.keys(e.codes).length === 0) return 'codes: lists no return code (what does a listing answer?)';
  const codes = codeProblem(e.codes, 'codes') ?? codeProblem(e.refusal_codes, 'refusal_codes');
  if (codes !== undefined) return codes;
  const both = Object.keys(e.codes).find((code) => code in e.refusal_codes);
  if (both !== undefined)
    return `refusal_codes: "${both}" is also in codes; an answer is a listing or a refusal, not both`;
  const delist = urlProblem(e.delist_url);
  if (delist !== undefined) return `delist_url: ${delist}`;
  return undefined;
}

function describe(index: number, entry: unknown): string {
  const zone = (entry as { zone?: unknown } | null)?.zone;
  return typeof zone === 'string' ? `lists[${index}] (${zone})` : `lists[${index}]`;
}

/**
 * A catalogue's text checked: every entry in the issue's format, zones that are DNS names,
 * codes that are 127.x addresses, key settings in UPPER_SNAKE_CASE, no list twice.
 * Throws a CatalogueError naming the file, the entry and the field.
 */
export function parseCatalogue(text: string, file: string): BlocklistEntry[] {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    throw new CatalogueError(`${file}: not JSON (${err instanceof Error ? err.message : String(err)})`);
  }
  const lists = (doc as { lists?: unknown } | null)?.lists;
  if (typeof doc !== 'object' || doc === null || !Array.isArray(lists))
    throw new CatalogueError(`${file}: must be an object {"lists": [...]}`);
  const seen = new Set<string>();
  return lists.map((entry, index) => {
    const problem = entryProblem(entry);
    if (problem !== undefined) throw new CatalogueError(`${file}: ${describe(index, entry)}: ${problem}`);
    const e = entry as BlocklistEntry;
    const id = `${e.kind} ${e.zone.toLowerCase()}`;
    if (seen.has(id))
      throw new CatalogueError(`${file}: ${describe(index, entry)}: zone: listed twice as ${e.kind}`);
    seen.add(id);
    return e;
  });
}

/** The key setting names a catalogue file holds, for the configuration to read (src/config). */
export function readCatalogueKeySettings(file: string): string[] {
  return [...new Set(readEntries(file).flatMap((e) => (e.key === null ? [] : [e.key])))];
}

/** Whether `value` can stand in a zone's key label; a key with a dot would query another zone. */
export function isUsableKey(value: string): boolean {
  return KEY_VALUE.test(value);
}

function readEntries(file: string): BlocklistEntry[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new CatalogueError(
      `${file}: cannot read it (${(err as NodeJS.ErrnoException).code ?? String(err)})`,
    );
  }
  return parseCatalogue(text, file);
}

function toBlocklist(e: BlocklistEntry, keys: Readonly<Record<string, string>>): Blocklist {
  const keyValue = e.key === null ? null : (keys[e.key] ?? null);
  const list = {
    zone: (e.key === null ? e.zone : e.zone.slice(KEY_PLACEHOLDER.length + 1)).toLowerCase(),
    name: e.name,
    kind: e.kind as BlocklistKind,
    codes: Object.freeze({ ...e.codes }),
    refusalCodes: Object.freeze({ ...e.refusal_codes }),
    delistUrl: e.delist_url,
    keySetting: e.key,
    keyMissing: e.key !== null && keyValue === null,
    terms: e.terms,
    enabled: e.enabled,
    bitmask: e.bitmask ?? false,
    sources: Object.freeze([...(e.sources ?? [])]),
  };
  Object.defineProperty(list, 'keyValue', { value: keyValue, enumerable: false });
  return Object.freeze(list) as Blocklist;
}

/**
 * The catalogue the configuration names (BLOCKLISTS_FILE, else the bundled file), its lists
 * joined with the keys the configuration read. Throws a CatalogueError for a bad file
 * (src/config checks it at start-up, so a running service does not meet one).
 */
export function loadCatalogue(config: {
  readonly blocklistsFile: string;
  readonly blocklistKeys: Readonly<Record<string, string>>;
}): Catalogue {
  const lists = readEntries(config.blocklistsFile).map((e) => toBlocklist(e, config.blocklistKeys));
  return Object.freeze({ file: config.blocklistsFile, lists: Object.freeze(lists) });
}
