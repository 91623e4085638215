import { type Static, Type } from 'typebox';
import { AttributionFields, Nullable } from '../../api-schema.js';

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

const CT_GAP_TEXT =
  'issuance_cap: only the 1000 newest issuances are listed. result_cap: crt.sh stopped at its limit of ' +
  '10 000 matching names and returned an arbitrary subset, so the history is a partial, arbitrary sample, ' +
  'not its newest part. page_cap: Cert Spotter had more pages than were read. expired_excluded: crt.sh ran ' +
  'out of time on the full history and was asked for unexpired certificates only. unexpired_only: the ' +
  'answer came from Cert Spotter (the fallback, asked after crt.sh failed), which lists unexpired ' +
  'certificates only.';

const gapSchema = <const Reasons extends string[]>(reasons: readonly [...Reasons], text: string) =>
  Type.Object(
    {
      reason: Type.Enum(reasons, { description: text }),
      detail: Type.String({ description: 'What is missing and why, in one or two sentences.' }),
    },
    { description: 'One reason the answer is not complete.' },
  );

const CT_GAP_REASONS = [
  'issuance_cap',
  'result_cap',
  'page_cap',
  'expired_excluded',
  'unexpired_only',
] as const;

export const CertificatesResponseSchema = Type.Object({
  domain: Type.String({ description: 'The domain searched (normalized).' }),
  total: Type.Integer({
    minimum: 0,
    description:
      'Distinct issuances the provider returned for the domain and names below it (of a partial answer, ' +
      'only what it returned: see `gaps`).',
  }),
  truncated: Type.Boolean({
    description:
      'The list is not the whole CT history of the domain; `gaps` says why. True exactly when `gaps` is not empty.',
  }),
  expired_excluded: Type.Boolean({
    description:
      'Expired certificates are missing: crt.sh ran out of time on the full history and was asked for ' +
      'unexpired ones only, or the fallback, Cert Spotter, answered (it lists unexpired certificates only). ' +
      '`gaps` says which.',
  }),
  gaps: Type.Array(gapSchema(CT_GAP_REASONS, CT_GAP_TEXT), {
    description: "Why the list is not the domain's whole CT history, one entry per reason; empty when it is.",
  }),
  issuances: Type.Array(IssuanceSchema, { description: 'Newest `not_before` first.' }),
  ...AttributionFields,
});
export type CertificatesResponse = Static<typeof CertificatesResponseSchema>;
export type GapBody = CertificatesResponse['gaps'][number];
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
      'The host list is not complete: names left unresolved or unlisted, or the CT history behind them ' +
      'incomplete; `gaps` says why. True exactly when `gaps` is not empty.',
  }),
  gaps: Type.Array(
    gapSchema(
      [...CT_GAP_REASONS, 'unchecked_names', 'host_cap'],
      `${CT_GAP_TEXT} unchecked_names: only the 50 most recently valid names were resolved, the rest are ` +
        '`unchecked`. host_cap: only the first 1000 names are listed.',
    ),
    { description: 'Why the host list is not complete, one entry per reason; empty when it is.' },
  ),
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
