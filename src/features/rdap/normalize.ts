/**
 * RFC 9083 objects → the API's RdapDomain / RdapNetwork, as pure functions.
 * Registries differ in what they fill in and how (Verisign upper-cases
 * names, .top keeps the trailing dot, MarkMonitor writes "last update" and
 * "+0000" offsets, RIPE sends no cidr0), so every value is checked and
 * normalized, and whatever is missing is null rather than invented.
 */
import { domainToUnicode } from 'node:url';
import type {
  RdapEntity,
  RdapEvent,
  RdapLink,
  RdapNameserver,
  RdapNotice,
  RdapObject,
} from '../../providers/rdap/types.js';
import { cidrsFromCidr0, rangeToCidrs } from './ip-range.js';
import { faxPhone, type JCard, parseJCard, voicePhone } from './jcard.js';
import type { RdapContact, RdapDomain, RdapEntities, RdapNetwork, RdapNotices } from './rdap.schema.js';

/** `raw` carries the original object up to this size (serialized); larger ones are left out. */
export const RAW_MAX_BYTES = 64 * 1024;

/** The media type of an RDAP response (RFC 7480 §4.2), which a registrar referral link must carry. */
export const RDAP_MEDIA_TYPE = 'application/rdap+json';

export function domainFromRdap(object: RdapObject, url: string): RdapDomain {
  const ldh = str(object.ldhName);
  const ldhName = ldh === null ? null : dnsName(ldh);
  const unicode = str(object.unicodeName);
  return {
    url,
    object_class: 'domain',
    handle: str(object.handle),
    ldh_name: ldhName,
    // Derived from the A-label name when the registry does not send unicodeName (RFC 9083 §5.3 makes it optional).
    unicode_name:
      unicode !== null ? dnsName(unicode) : ldhName !== null ? domainToUnicode(ldhName) || ldhName : null,
    status: strings(object.status),
    events: eventsFromRdap(object.events),
    entities: entitiesFromRdap(object.entities),
    nameservers: arrayOf<RdapNameserver>(object.nameservers).flatMap((ns) => {
      const name = str(ns.ldhName);
      if (name === null) return [];
      const unicodeName = str(ns.unicodeName);
      return [
        {
          ldh_name: dnsName(name),
          ...(unicodeName !== null && dnsName(unicodeName) !== dnsName(name)
            ? { unicode_name: dnsName(unicodeName) }
            : {}),
          ipv4: strings(ns.ipAddresses?.v4),
          ipv6: strings(ns.ipAddresses?.v6),
        },
      ];
    }),
    secure_dns: secureDns(object.secureDNS),
    notices: noticesFromRdap(object.notices),
    ...rawCapped(object),
  };
}

export function networkFromRdap(object: RdapObject, url: string): RdapNetwork {
  const start = str(object.startAddress);
  const end = str(object.endAddress);
  const fromCidr0 = cidrsFromCidr0(object.cidr0_cidrs);
  const version = str(object.ipVersion)?.toLowerCase();
  return {
    url,
    object_class: 'ip network',
    handle: str(object.handle),
    name: str(object.name),
    type: str(object.type),
    start_address: start,
    end_address: end,
    cidrs: fromCidr0.length > 0 ? fromCidr0 : start !== null && end !== null ? rangeToCidrs(start, end) : [],
    ip_version:
      version === 'v4' || version === 'v6' ? version : start?.includes(':') ? 'v6' : start ? 'v4' : null,
    country: str(object.country)?.toUpperCase() ?? null,
    parent_handle: str(object.parentHandle),
    status: strings(object.status),
    events: eventsFromRdap(object.events),
    entities: entitiesFromRdap(object.entities),
    notices: noticesFromRdap(object.notices),
    ...rawCapped(object),
  };
}

/**
 * The registrar's own RDAP URL in a thin registry's answer (.com, .net):
 * a link with rel "related" and type application/rdap+json (RFC 9083 §4.2,
 * ICANN gTLD RDAP Response Profile §2.2). `related` links to HTML pages
 * (web WHOIS) are not RDAP and are ignored.
 */
export function registrarLink(object: RdapObject): string | undefined {
  for (const link of arrayOf<RdapLink>(object.links)) {
    const rel = str(link.rel)?.toLowerCase();
    const type = str(link.type)?.toLowerCase().split(';')[0]?.trim();
    const href = str(link.href);
    if (rel === 'related' && type === RDAP_MEDIA_TYPE && href !== null && /^https?:\/\//i.test(href))
      return href;
  }
  return undefined;
}

/**
 * Event dates keyed by eventAction in snake case (RFC 9083 §4.5, action
 * names from the IANA "RDAP JSON Values" registry, RFC 9083 §10.2.3). The
 * first event of an action wins. "last update" is not a registered action
 * but some registrars (MarkMonitor) use it for "last changed".
 */
export function eventsFromRdap(events: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  for (const event of arrayOf<RdapEvent>(events)) {
    const action = str(event.eventAction);
    const date = str(event.eventDate);
    if (action === null || date === null) continue;
    const key = action
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '_')
      .replace(/^_|_$/g, '');
    if (key !== '' && !(key in out)) out[key] = isoDate(date);
  }
  if (out.last_changed === undefined && out.last_update !== undefined) out.last_changed = out.last_update;
  return out;
}

/**
 * The registrar, the abuse contact and one contact per role. Entities nest
 * (RFC 9083 §5.1): gTLD registries put the abuse contact inside the
 * registrar entity, RIRs put it at the top or inside the registrant, so the
 * tree is searched breadth first and the shallowest match wins.
 */
export function entitiesFromRdap(entities: unknown): RdapEntities {
  const flat = breadthFirst(arrayOf<RdapEntity>(entities));
  const withRole = (role: string) => flat.find((e) => strings(e.roles).some((r) => r.toLowerCase() === role));

  const out: RdapEntities = { registrar: null, abuse: null };
  const registrar = withRole('registrar');
  if (registrar) {
    const card = parseJCard(registrar.vcardArray);
    const ianaId = arrayOf<{ type?: unknown; identifier?: unknown }>(registrar.publicIds).find((p) =>
      /^iana registrar id$/i.test(String(p.type ?? '').trim()),
    );
    const url = card?.urls[0];
    out.registrar = {
      name: card?.fn ?? card?.org ?? null,
      iana_id: ianaId ? str(String(ianaId.identifier ?? '')) : null,
      handle: str(registrar.handle),
      ...(url ? { url } : {}),
    };
  }
  const abuse = withRole('abuse');
  if (abuse) {
    const card = parseJCard(abuse.vcardArray);
    out.abuse = { email: card?.emails[0] ?? null, phone: card ? voicePhone(card) : null };
  }
  for (const role of ['registrant', 'administrative', 'technical', 'billing', 'noc'] as const) {
    const entity = withRole(role);
    if (entity) out[role] = contactFromEntity(entity);
  }
  return out;
}

export function contactFromEntity(entity: RdapEntity): RdapContact {
  const card: JCard | undefined = parseJCard(entity.vcardArray);
  return {
    handle: str(entity.handle),
    roles: strings(entity.roles).map((r) => r.toLowerCase()),
    kind: card?.kind ?? null,
    name: card?.fn ?? null,
    organization: card?.org ?? null,
    email: card?.emails[0] ?? null,
    phone: card ? voicePhone(card) : null,
    fax: card ? faxPhone(card) : null,
    address: card?.addresses[0] ?? null,
    redacted: isRedacted(entity),
  };
}

/**
 * Whether the registry says it withheld some of this contact's data: a
 * remark titled "REDACTED FOR PRIVACY" (ICANN gTLD RDAP Response Profile) or
 * of type "object truncated due to authorization" (RFC 9083 §10.2.1), or a
 * status of "removed", "obscured" or "private" (RFC 8056 §2, registered for
 * RDAP in RFC 9083 §10.2.2).
 */
function isRedacted(entity: RdapEntity): boolean {
  if (strings(entity.status).some((s) => /^(removed|obscured|private)$/i.test(s))) return true;
  return arrayOf<RdapNotice>(entity.remarks).some(
    (r) =>
      /redacted/i.test(String(r.title ?? '')) || /truncated due to authorization/i.test(String(r.type ?? '')),
  );
}

export function noticesFromRdap(notices: unknown): RdapNotices {
  return arrayOf<RdapNotice>(notices).map((n) => ({
    title: str(n.title),
    description: strings(n.description),
    links: arrayOf<RdapLink>(n.links).flatMap((l) => {
      const href = str(l.href);
      return href === null ? [] : [href];
    }),
  }));
}

function secureDns(value: unknown): RdapDomain['secure_dns'] {
  if (typeof value !== 'object' || value === null) return null;
  const s = value as NonNullable<RdapObject['secureDNS']>;
  const ds = arrayOf<NonNullable<typeof s.dsData>[number]>(s.dsData).map((d) => ({
    key_tag: int(d.keyTag),
    algorithm: int(d.algorithm),
    digest_type: int(d.digestType),
    digest: str(d.digest),
  }));
  return {
    delegation_signed: typeof s.delegationSigned === 'boolean' ? s.delegationSigned : null,
    ...(typeof s.zoneSigned === 'boolean' ? { zone_signed: s.zoneSigned } : {}),
    ...(ds.length > 0 ? { ds } : {}),
  };
}

/** The original object when small enough; RAW_MAX_BYTES bounds what one answer (and the cache) carries. */
export function rawCapped(object: RdapObject): {
  raw: Record<string, unknown> | null;
  raw_truncated: boolean;
} {
  const size = Buffer.byteLength(JSON.stringify(object));
  return size <= RAW_MAX_BYTES ? { raw: object, raw_truncated: false } : { raw: null, raw_truncated: true };
}

/** Lower case, without the trailing dot some registries keep (.top sends "bitcoin.top."). */
function dnsName(name: string): string {
  return name.replace(/\.$/, '').toLowerCase();
}

/**
 * ISO 8601 in UTC when the date parses ("2028-09-13T07:00:00.000+0000" →
 * "2028-09-13T07:00:00Z"); otherwise the registry's text unchanged.
 */
function isoDate(text: string): string {
  const ms = Date.parse(text);
  if (Number.isNaN(ms)) return text;
  return new Date(ms).toISOString().replace('.000Z', 'Z');
}

function breadthFirst(roots: RdapEntity[]): RdapEntity[] {
  const out: RdapEntity[] = [];
  let level = roots;
  // RDAP nests two or three levels deep; the bound only stops a pathological object.
  for (let depth = 0; depth < 8 && level.length > 0; depth++) {
    out.push(...level);
    level = level.flatMap((e) => arrayOf<RdapEntity>(e.entities));
  }
  return out;
}

function arrayOf<T>(value: unknown): T[] {
  return Array.isArray(value) ? (value.filter((v) => typeof v === 'object' && v !== null) as T[]) : [];
}

function strings(value: unknown): string[] {
  return Array.isArray(value)
    ? value.filter((v): v is string => typeof v === 'string' && v.trim() !== '')
    : [];
}

function str(value: unknown): string | null {
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : null;
}

function int(value: unknown): number | null {
  return typeof value === 'number' && Number.isInteger(value) ? value : null;
}
