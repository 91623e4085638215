import { type Static, type TSchema, Type } from 'typebox';
import { AttributionFields } from '../shared.schema.js';

const Nullable = <T extends TSchema>(schema: T, description: string) =>
  Type.Union([schema, Type.Null()], { description });

export const CtQuerySchema = Type.Object({
  domain: Type.String({
    minLength: 1,
    maxLength: 1024,
    description:
      'A registered domain or a name below one (IDN accepted, converted to A-labels; trailing dot accepted). ' +
      'At least two labels.',
    examples: ['example.com'],
  }),
});
export type CtQuery = Static<typeof CtQuerySchema>;

const IssuanceSchema = Type.Object(
  {
    id: Type.String({
      description: "The provider's id for the record (crt.sh certificate id, Cert Spotter issuance id).",
    }),
    source_id: Type.String({ description: 'Id of the provider the record came from (see /api/providers).' }),
    serial: Nullable(
      Type.String(),
      'Serial number, lower-case hex; null where the provider does not give it (Cert Spotter, old crt.sh rows).',
    ),
    issuer: Type.Object({
      name: Type.String({ description: "The issuing CA's common name (its whole name when it has no CN)." }),
      organization: Nullable(Type.String(), "The issuing CA's organization."),
    }),
    common_name: Nullable(Type.String(), 'Subject common name, where the provider gives it.'),
    dns_names: Type.Array(Type.String(), {
      description:
        'DNS names the provider listed, lower-case A-labels, `*.` kept on wildcards. crt.sh lists the names that ' +
        'matched the search (plus the common name), not necessarily every name on the certificate.',
    }),
    not_before: Type.String({ format: 'date-time', description: 'Validity start, ISO 8601 UTC.' }),
    not_after: Type.String({ format: 'date-time', description: 'Validity end, ISO 8601 UTC.' }),
    entry_timestamp: Type.Optional(
      Type.String({ format: 'date-time', description: 'When it was first logged, where the provider says.' }),
    ),
    expired: Type.Boolean({ description: '`not_after` is in the past at the time of this response.' }),
    revoked: Type.Optional(
      Type.Boolean({ description: 'Present only when the provider reports revocation.' }),
    ),
  },
  {
    description:
      'One issuance: a precertificate and its certificate (same issuer and serial) are merged into one entry.',
  },
);

export const CertificatesResponseSchema = Type.Object({
  domain: Type.String({ description: 'The domain searched (normalized).' }),
  total: Type.Integer({
    minimum: 0,
    description: 'Distinct issuances found for the domain and names below it.',
  }),
  truncated: Type.Boolean({
    description:
      'The list is incomplete: capped at the 1000 newest, the provider stopped paging, or expired ' +
      'certificates were left out (see expired_excluded).',
  }),
  expired_excluded: Type.Boolean({
    description: 'crt.sh timed out on the full history, so only unexpired certificates are listed.',
  }),
  issuances: Type.Array(IssuanceSchema, { description: 'Newest `not_before` first.' }),
  ...AttributionFields,
});
export type CertificatesResponse = Static<typeof CertificatesResponseSchema>;
export type IssuanceBody = CertificatesResponse['issuances'][number];

const HostSchema = Type.Object({
  name: Type.String({ description: 'Lower-case A-label, `*.` removed.' }),
  status: Type.Enum(['active', 'wildcard', 'historical', 'lookup_failed', 'unchecked'], {
    description:
      'active: it returns an A/AAAA or CNAME answer of its own now. wildcard: it answers, but only with what ' +
      "the domain's DNS wildcard gives any name. historical: seen in CT, no A/AAAA/CNAME answer now. " +
      'lookup_failed: a lookup failed at every resolver and none answered. unchecked: not resolved (only the ' +
      '50 most recently valid names are).',
  }),
  addresses: Type.Array(Type.String(), { description: 'A and AAAA addresses now (after any CNAME chain).' }),
  cname: Type.Optional(Type.String({ description: 'Its CNAME target now, if it has one.' })),
  first_seen: Type.String({
    format: 'date-time',
    description: 'Earliest `not_before` of a certificate naming it.',
  }),
  last_seen: Type.String({
    format: 'date-time',
    description: 'Latest `not_before` of a certificate naming it.',
  }),
  last_not_after: Type.String({
    format: 'date-time',
    description: 'Latest `not_after` of a certificate naming it.',
  }),
  certificate_count: Type.Integer({
    minimum: 1,
    description: 'Issuances naming it (as itself or as `*.name`).',
  }),
  wildcard: Type.Boolean({
    description: 'A certificate covered it as `*.name` (a wildcard certificate, not DNS).',
  }),
});
export type HostBody = Static<typeof HostSchema>;

export const SubdomainsResponseSchema = Type.Object({
  domain: Type.String({ description: 'The domain searched (normalized).' }),
  discovered_count: Type.Integer({ minimum: 0, description: 'Distinct names at or below the domain in CT.' }),
  checked_count: Type.Integer({
    minimum: 0,
    maximum: 50,
    description: 'Names resolved live (the 50 most recently valid at most); the rest are `unchecked`.',
  }),
  active_count: Type.Integer({ minimum: 0, description: 'Checked names with status `active`.' }),
  truncated: Type.Boolean({
    description:
      'More names were discovered than checked, or the CT list behind them was incomplete (capped, or ' +
      'expired certificates left out); `hosts` also stops at 1000 names.',
  }),
  dns_wildcard: Type.Object(
    {
      detected: Nullable(Type.Boolean(), 'null when the probes failed, so it is unknown.'),
      addresses: Type.Array(Type.String()),
      cnames: Type.Array(Type.String()),
    },
    { description: 'What three random names below the domain resolved to: its DNS wildcard, if any.' },
  ),
  hosts: Type.Array(HostSchema, { description: 'Most recently valid certificate first.' }),
  ...AttributionFields,
});
export type SubdomainsResponse = Static<typeof SubdomainsResponseSchema>;
