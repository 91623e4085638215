import { daysUntil, expiryText, expiryTone, relativeDays } from '../../client/words.js';
import type { RdapContact, RdapDomain, RdapNetwork, RdapResponse } from '../../features/rdap/rdap.schema.js';
import type { Style } from '../style.js';
import { type Fact, facts, section } from '../table.js';
import { badge, formatDate, type Renderer } from './common.js';

function dated(style: Style, iso: string | undefined): string | null {
  if (!iso) return null;
  const days = daysUntil(iso);
  return `${formatDate(iso)}${days === null ? '' : style.dim(` (${relativeDays(days)})`)}`;
}

function expiry(style: Style, iso: string | undefined): string | null {
  if (!iso) return null;
  const days = daysUntil(iso);
  if (days === null) return formatDate(iso);
  return `${formatDate(iso)} ${badge(style, expiryTone(days), expiryText(days))}`;
}

function contact(style: Style, c: RdapContact | undefined): string | null {
  if (!c) return null;
  const parts = [c.organization, c.name, c.address?.country_code ?? c.address?.country].filter(Boolean);
  if (parts.length === 0) return c.redacted ? style.dim('redacted for privacy') : null;
  return `${parts.join(', ')}${c.redacted ? style.dim(' (partly redacted)') : ''}`;
}

/** The rows both a registry's and a registrar's object have (src/web/results/rdap.tsx commonRows). */
function commonRows(style: Style, r: RdapDomain | RdapNetwork): Fact[] {
  const { registrar, abuse, registrant } = r.entities;
  return [
    [
      'Registrar',
      registrar?.name
        ? `${registrar.name}${registrar.iana_id ? style.dim(` (IANA ${registrar.iana_id})`) : ''}`
        : null,
    ],
    ['Registered', dated(style, r.events.registration)],
    ['Expires', expiry(style, r.events.expiration)],
    ['Last changed', dated(style, r.events.last_changed)],
    ['Status', r.status.join(', ')],
    ['Registrant', contact(style, registrant)],
    [
      'Abuse contact',
      abuse && (abuse.email || abuse.phone) ? [abuse.email, abuse.phone].filter(Boolean).join(' · ') : null,
    ],
  ];
}

function registryFacts(style: Style, r: RdapDomain | RdapNetwork): string[] {
  if (r.object_class === 'domain') {
    const signed = r.secure_dns?.delegation_signed;
    return facts(style, [
      [
        'Domain',
        `${r.ldh_name ?? '—'}${r.unicode_name && r.unicode_name !== r.ldh_name ? ` (${r.unicode_name})` : ''}`,
      ],
      ...commonRows(style, r),
      ['Nameservers', r.nameservers.map((ns) => ns.ldh_name).join(', ')],
      [
        'DNSSEC',
        signed === null || signed === undefined
          ? 'not stated'
          : badge(style, signed ? 'ok' : 'muted', signed ? 'signed delegation' : 'unsigned'),
      ],
    ]);
  }
  return facts(style, [
    ['Network', r.name],
    ['Handle', r.handle],
    ['Range', r.cidrs.join(', ')],
    ['Type', r.type],
    ['Country', r.country],
    ['Parent', r.parent_handle],
    ...commonRows(style, r),
  ]);
}

export const rdap: Renderer = (body, style) => {
  const data = body as RdapResponse;
  return [
    ...registryFacts(style, data.registry),
    ...(data.registrar
      ? section(style, 'From the registrar', facts(style, commonRows(style, data.registrar)))
      : []),
    ...data.notes.flatMap((n) => ['', style.dim(n)]),
  ];
};
