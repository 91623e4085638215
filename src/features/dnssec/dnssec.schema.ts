/**
 * GET /api/dnssec: netdiag's own validation of one name and type, the chain of trust zone by
 * zone from the trust anchor, and the first broken link.
 */
import { type Static, Type } from 'typebox';
import { AttributionFields, Nullable } from '../../api-schema.js';
import { recordTypesThrough } from '../../providers/dns/types.js';

/** /api/dns's types (through PTR) and the DNSSEC ones a validation is asked about: DS, DNSKEY, TLSA. */
export const DNSSEC_TYPES = recordTypesThrough('TLSA');

export const DnssecQuerySchema = Type.Object({
  target: Type.String({
    minLength: 1,
    maxLength: 253,
    description: 'The name to validate (IDN accepted); a URL or an email address is reduced to its host.',
    examples: ['example.com'],
  }),
  type: Type.Optional(
    Type.String({
      description: `Record type, one of ${DNSSEC_TYPES.join(', ')} (any case). Default A.`,
      default: 'A',
    }),
  ),
});
export type DnssecQuery = Static<typeof DnssecQuerySchema>;

export const DnssecStatusSchema = Type.Enum(['secure', 'insecure', 'bogus', 'indeterminate'], {
  description:
    'secure: every link from the trust anchor verified; insecure: the chain of trust ends at a zone that is ' +
    'provably unsigned (or signed only with algorithms this validator does not support); bogus: a link is ' +
    'broken, and validating resolvers answer SERVFAIL; indeterminate: no trust anchor covers the name, or ' +
    'the servers or the query budget gave out first.',
});

export const ReasonSchema = Nullable(
  Type.Object(
    {
      code: Type.String({
        description:
          'From the catalogue in docs/dnssec.md. Bogus: no_dnskey_matches_ds, ds_digest_mismatch, dnskey_missing, ' +
          'rrsig_missing, signature_expired, signature_not_yet_valid, signature_invalid, denial_missing, ' +
          'not_covered, ...; insecure: no_ds, nsec3_opt_out, nsec3_iterations, ds_algorithm_unsupported, ' +
          'ds_digest_unsupported; indeterminate: no_trust_anchor, servers_unreachable, budget_exhausted, ...',
      }),
      zone: Type.String({
        description: 'bogus: the zone of the first broken link; insecure: where the chain of trust ends.',
      }),
      detail: Type.String({ description: 'What was found, in a sentence.' }),
    },
    { additionalProperties: false },
  ),
  'Why the status is not secure; null when it is.',
);

const Signature = Type.Object(
  {
    owner: Type.String(),
    covers: Type.String({ description: 'The type the RRSIG covers.' }),
    key_tag: Type.Integer(),
    algorithm: Type.Integer(),
    signer: Type.String(),
    inception: Type.String({ format: 'date-time' }),
    expiration: Type.String({ format: 'date-time' }),
  },
  { additionalProperties: false },
);

const Finding = Type.Object(
  {
    severity: Type.Enum(['error', 'warning', 'info']),
    code: Type.String(),
    message: Type.String(),
  },
  { additionalProperties: false },
);

export const ChainLinkSchema = Type.Object(
  {
    zone: Type.String(),
    status: DnssecStatusSchema,
    reason: ReasonSchema,
    anchored: Type.Boolean({ description: 'Its DS (or keys) come from the trust anchor, not a parent.' }),
    ds: Type.Array(
      Type.Object(
        {
          key_tag: Type.Integer(),
          algorithm: Type.Integer(),
          algorithm_name: Type.String(),
          digest_type: Type.Integer(),
          digest: Type.String({ description: 'Hex.' }),
          supported: Type.Boolean({
            description: 'This validator computes the digest and verifies the algorithm.',
          }),
          matches_key: Type.Boolean({ description: 'A DNSKEY of the zone has this digest.' }),
        },
        { additionalProperties: false },
      ),
    ),
    dnskeys: Type.Array(
      Type.Object(
        {
          key_tag: Type.Integer(),
          flags: Type.Integer(),
          role: Type.Enum(['KSK', 'ZSK'], { description: 'KSK: the SEP flag is set (RFC 4034 §2.1.1).' }),
          algorithm: Type.Integer(),
          algorithm_name: Type.String(),
          bits: Nullable(Type.Integer()),
          revoked: Type.Boolean(),
          supported: Type.Boolean(),
          matched_by_ds: Type.Boolean(),
          signs_keyset: Type.Boolean({ description: 'Its RRSIG over the DNSKEY RRset verified.' }),
        },
        { additionalProperties: false },
      ),
    ),
    signatures: Type.Array(Signature, {
      description: 'Over the DNSKEY RRset, and over the DS RRset at the parent.',
    }),
    findings: Type.Array(Finding),
  },
  { additionalProperties: false },
);

export const DnssecResponseSchema = Type.Object(
  {
    target: Type.String(),
    type: Type.String(),
    status: DnssecStatusSchema,
    reason: ReasonSchema,
    chain: Type.Array(ChainLinkSchema, {
      description: 'From the trust anchor down, one entry per zone checked.',
    }),
    answer: Type.Object(
      {
        rcode: Type.String(),
        records: Type.Array(
          Type.Object(
            { name: Type.String(), type: Type.String(), ttl: Type.Integer(), data: Type.String() },
            { additionalProperties: false },
          ),
          { description: 'The answer section (a CNAME chain included), without RRSIGs.' },
        ),
        signatures: Type.Array(Signature),
        denial: Nullable(
          Type.Object(
            {
              status: Type.Enum(['proven', 'insecure', 'failed']),
              kind: Nullable(Type.String(), 'nxdomain, nodata, wildcard_nodata, wildcard_answer, ...'),
              records: Type.Array(
                Type.Object(
                  { name: Type.String(), type: Type.String(), data: Type.String() },
                  { additionalProperties: false },
                ),
              ),
            },
            { additionalProperties: false },
          ),
          'The NSEC/NSEC3 proof of a negative answer or of a wildcard expansion; null when none was needed.',
        ),
      },
      { additionalProperties: false },
    ),
    findings: Type.Array(Finding),
    queries: Type.Integer({
      minimum: 0,
      description: 'Upstream queries this answer cost (a warm infrastructure cache makes it 1 or 2).',
    }),
    checked_at: Type.String({ format: 'date-time' }),
    ...AttributionFields,
  },
  { additionalProperties: false },
);
export type DnssecResponse = Static<typeof DnssecResponseSchema>;
