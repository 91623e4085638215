/**
 * GET /api/email-security: input and the complete response schema. Every
 * field the score depends on is declared, so the score can be recomputed
 * from the response alone (see docs/email-security.md).
 *
 * The schema has no `anyOf`: fast-json-stringify serializes `anyOf` by
 * compiling an Ajv validator per branch on first use, which cost ~0.6 s on
 * the first response of every process. So checks share one shape, each
 * check's own facts live under `details.<check id>` with their own schema,
 * and nullable fields are type arrays (`["integer", "null"]`, JSON Schema
 * 2020-12 as OpenAPI 3.1 uses it), which it serializes natively.
 */
import { type Static, Type } from 'typebox';
import { AttributionFields, Nullable } from '../../api-schema.js';
import { DnssecStatusSchema, ReasonSchema } from '../dnssec/dnssec.schema.js';
import { SpfDetails } from './email-spf.schema.js';
import { CHECK_IDS } from './types.js';

export const EmailSecurityQuerySchema = Type.Object({
  domain: Type.String({
    minLength: 1,
    maxLength: 1024,
    description: 'The domain to check. IDN accepted (converted to A-labels); a trailing dot is accepted.',
    examples: ['example.com'],
  }),
  selector: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 400,
      description:
        'Up to 5 comma-separated DKIM selectors (1–63 of A-Z a-z 0-9 . _ - each), case-insensitive, tested in ' +
        'alphabetical order (not the order given) before the built-in list (also tried as BIMI selectors, in that ' +
        'order, before `default`).',
      examples: ['google', 's1,s2'],
    }),
  ),
});
export type EmailSecurityQuery = Static<typeof EmailSecurityQuerySchema>;

const FindingSchema = Type.Object({
  severity: Type.Enum(['error', 'warning', 'info']),
  message: Type.String(),
  rfc: Type.String({ description: 'Where the rule comes from, e.g. "RFC 7208 §4.6.4".' }),
});

const RuleSchema = Type.Object(
  {
    rule: Type.String(),
    points: Type.Integer({ minimum: 0 }),
    max_points: Type.Integer({ minimum: 0 }),
  },
  { description: 'One scoring rule of the check; its points and max_points sum to the check’s.' },
);

const STATUS = Type.Enum(['pass', 'warn', 'fail', 'info', 'error', 'not_applicable'], {
  description: '`error`: a DNS lookup failed (timeout, SERVFAIL); the check then has max_points 0.',
});

const MxDetails = Type.Object({
  state: Type.Enum(['present', 'null_mx', 'invalid_null_mx', 'none', 'nxdomain', 'error']),
  implicit_mx_addresses: Type.Array(Type.String(), {
    description: 'With no MX record: the domain’s own addresses, which senders use instead (RFC 5321 §5.1).',
  }),
});

const ReportDestinationSchema = Type.Object({
  domain: Type.String(),
  tags: Type.Array(Type.Enum(['rua', 'ruf'])),
  external: Type.Boolean(),
  authorized: Nullable(Type.Boolean()),
  authorization_name: Type.Optional(Type.String()),
});

const PolicyEnum = Type.Enum(['none', 'quarantine', 'reject']);

const DmarcDetails = Type.Object({
  state: Type.Enum(['found', 'none', 'error']),
  record_domain: Nullable(Type.String()),
  inherited: Type.Boolean({ description: 'The record was found at a parent domain by the DNS Tree Walk.' }),
  policy_tag: Nullable(Type.Enum(['p', 'sp'])),
  requested_policy: Nullable(PolicyEnum),
  effective_policy: Nullable(PolicyEnum),
  testing: Type.Boolean(),
  sub_policies_not_weaker: Type.Boolean(),
  has_rua: Type.Boolean(),
  tags: Type.Array(Type.Object({ name: Type.String(), value: Type.String() })),
  destinations: Type.Array(ReportDestinationSchema),
  lookups: Type.Array(
    Type.Object({
      name: Type.String(),
      result: Type.Enum(['record', 'none', 'multiple_records', 'invalid', 'error']),
      aliases: Type.Array(Type.String()),
    }),
    { description: 'The DNS Tree Walk, in order (at most 8 names).' },
  ),
});

const DkimKeySchema = Type.Object({
  record: Type.String(),
  state: Type.Enum(['valid', 'weak', 'too_short', 'revoked', 'invalid']),
  key_type: Nullable(Type.Enum(['rsa', 'ed25519'])),
  key_bits: Nullable(Type.Integer()),
  testing: Type.Boolean(),
  problem: Type.Optional(Type.String()),
});

const DkimDetails = Type.Object({
  state: Type.Enum(['found', 'none', 'error']),
  weakest: Nullable(Type.Enum(['strong', 'weak', 'too_short'])),
  selectors: Type.Array(
    Type.Object({
      selector: Type.String(),
      name: Type.String(),
      result: Type.Enum(['key', 'none', 'error']),
      aliases: Type.Array(Type.String()),
      keys: Type.Array(DkimKeySchema),
      error: Type.Optional(Type.String()),
    }),
    {
      description:
        'Selectors that returned a DKIM record or failed; all tested ones are in tested_dkim_selectors.',
    },
  ),
});

const MtaStsDetails = Type.Object({
  state: Type.Enum(['none', 'invalid', 'policy', 'error', 'not_applicable']),
  id: Nullable(Type.String()),
  policy_url: Type.String(),
  http_status: Nullable(Type.Integer()),
  policy: Nullable(
    Type.Object({
      version: Nullable(Type.String()),
      mode: Nullable(Type.Enum(['enforce', 'testing', 'none'])),
      max_age: Nullable(Type.Integer()),
      mx: Type.Array(Type.String()),
    }),
  ),
  policy_text: Nullable(Type.String()),
  all_mx_covered: Nullable(Type.Boolean()),
  uncovered_mx: Type.Array(Type.String()),
});

const TlsRptDetails = Type.Object({
  state: Type.Enum(['none', 'invalid', 'valid', 'error', 'not_applicable']),
  rua: Type.Array(Type.String()),
});

const BimiDetails = Type.Object({
  state: Type.Enum(['none', 'declined', 'invalid', 'record', 'error']),
  selector: Nullable(Type.String()),
  record_domain: Nullable(
    Type.String({
      description:
        'Where the record was found: the domain, or its organizational domain (Public Suffix List) when the ' +
        'domain has no BIMI record at that selector (draft-brand-indicators-for-message-identification, ' +
        '"Assertion Record Discovery").',
    }),
  ),
  inherited: Type.Boolean({ description: 'The record is the organizational domain’s.' }),
  location: Nullable(Type.String({ description: 'l=: the SVG logo URL.' })),
  authority: Nullable(Type.String({ description: 'a=: the VMC URL.' })),
  dmarc_enforced: Nullable(Type.Boolean()),
  svg: Nullable(
    Type.Object({
      url: Type.String(),
      http_status: Nullable(Type.Integer()),
      bytes: Nullable(Type.Integer()),
      sha256: Nullable(Type.String()),
      title: Nullable(Type.String()),
      valid: Type.Boolean(),
    }),
  ),
  vmc: Nullable(
    Type.Object({
      url: Type.String(),
      http_status: Nullable(Type.Integer()),
      valid: Type.Boolean({
        description:
          'Every check passed: the chain verifies to a Mark Verifying Authority root, the dates, the BIMI ' +
          'extended key usage, the domain among the subjectAltNames, and the logotype SVG (its hash, SVG Tiny ' +
          'PS, and the same SVG as at l=).',
      }),
      subject: Nullable(Type.String()),
      issuer: Nullable(Type.String()),
      not_before: Nullable(Type.String()),
      not_after: Nullable(Type.String()),
      domains: Type.Array(Type.String()),
      bimi_eku: Type.Boolean(),
      logotype: Type.Boolean({ description: 'The leaf has the logotype extension (1.3.6.1.5.5.7.1.12).' }),
      mva_root: Nullable(
        Type.String({
          description:
            'Subject of the Mark Verifying Authority root the chain verifies to (the bundled list, plus ' +
            '`BIMI_VMC_ROOTS_FILE`); null when it verifies to none of them.',
        }),
      ),
      logo: Nullable(
        Type.Object(
          {
            media_type: Type.String(),
            hash_algorithm: Nullable(
              Type.String({ description: "The logotype hash's algorithm, e.g. sha256." }),
            ),
            hash: Nullable(Type.String({ description: 'The logotype hash, hex.' })),
            matches_hash: Type.Boolean({ description: 'The embedded SVG hashes to it.' }),
            matches_location: Nullable(
              Type.Boolean({
                description: 'The SVG fetched from l= hashes to it too; null when none was fetched.',
              }),
            ),
          },
          {
            description:
              'The mark the VMC carries (RFC 9399 logotype, subject logo); null when none was read.',
          },
        ),
      ),
    }),
  ),
});

const DnssecDetails = Type.Object(
  {
    state: Type.Enum(['secure', 'partial', 'insecure', 'bogus', 'indeterminate', 'not_checked'], {
      description:
        "netdiag's own validation of the answers in `answers`: bogus if any is (the chain of trust is broken: " +
        'validating resolvers refuse them), indeterminate if any is (no verdict reached), secure if all are, ' +
        'partial if some are, insecure if none is (an unsigned domain); not_checked: this instance does not ' +
        'validate (DNS_ROOT_HINTS names no root server it may ask).',
    }),
    reason: ReasonSchema,
    answers: Type.Array(
      Type.Object({
        name: Type.String(),
        type: Type.Enum(['MX', 'TXT']),
        status: DnssecStatusSchema,
        reason: ReasonSchema,
      }),
      {
        description:
          'The MX answer, the TXT answer SPF is read from, and the one at _dmarc, as netdiag validated them.',
      },
    ),
    mx_hosts: Type.Array(
      Type.Object({
        host: Type.String(),
        addresses: DnssecStatusSchema,
        addresses_reason: ReasonSchema,
        tlsa_name: Type.String({ description: '_25._tcp.<host> (RFC 7672 §2.2).' }),
        tlsa: Type.Enum(['secure', 'insecure', 'bogus', 'indeterminate', 'none', 'error'], {
          description:
            "TLSA records present, by netdiag's verdict on them: `secure`; `insecure` (an unsigned zone: senders " +
            'ignore them, RFC 6698 §4.1); `bogus` (DANE senders defer mail to the host; also without records); ' +
            '`indeterminate` (no verdict); `none`: no TLSA records; `error`: the lookup failed.',
        }),
        tlsa_reason: ReasonSchema,
        records: Type.Array(
          Type.Object({
            usage: Type.Integer({ minimum: 0 }),
            selector: Type.Integer({ minimum: 0 }),
            matching_type: Type.Integer({ minimum: 0 }),
            data: Type.String({ description: 'Certificate association data, upper-case hex.' }),
            meaning: Type.String({
              description: 'The fields by their RFC 7218 names: "DANE-EE(3) SPKI(1) SHA2-256(1)".',
            }),
            usable: Type.Boolean({ description: 'Usable for SMTP (RFC 7672 §3.1).' }),
            problem: Type.Optional(Type.String({ description: 'Why it is not usable.' })),
          }),
        ),
        dane: Type.Boolean({
          description:
            'DANE protects this host: the MX answer, its address answers and its TLSA answer are secure, with a ' +
            'usable record. The records are not compared with the server’s certificate here (GET /api/mail-tls does).',
        }),
      }),
      {
        description:
          'Each MX host by preference (the first 20), or the domain itself when it has no MX record (RFC 7672 §2.2.2).',
      },
    ),
    dane: Nullable(
      Type.Enum(['all', 'some', 'none', 'not_applicable'], {
        description:
          'How many MX hosts DANE protects; not_applicable without MX hosts; null: the MX lookup failed, or DNSSEC was not checked.',
      }),
    ),
  },
  {
    description:
      "DNSSEC by netdiag's own validation (from the trust anchor down, as GET /api/dnssec; never a resolver's AD " +
      'bit), and DANE TLSA records from DNS alone.',
  },
);

export const CheckSchema = Type.Object(
  {
    id: Type.Enum([...CHECK_IDS], { description: 'Its facts are in `details.<id>`.' }),
    status: STATUS,
    points: Type.Integer({ minimum: 0 }),
    max_points: Type.Integer({
      minimum: 0,
      description:
        'The weight of the check, or 0 when it is left out of the score (DNS failure, not applicable).',
    }),
    summary: Type.String(),
    record: Type.Optional(Type.String({ description: 'The exact record text found.' })),
    findings: Type.Array(FindingSchema),
    breakdown: Type.Array(RuleSchema),
  },
  {
    description:
      'One check. Weights: mx 5 (RFC 5321, 7505), spf 20 (RFC 7208), dmarc 35 (RFC 9989), dkim 20 (RFC 6376, 8301, ' +
      '8463), mta_sts 10 (RFC 8461), tls_rpt 5 (RFC 8460), bimi 5, dnssec 10 when the domain is signed or a chain is broken, else left out (RFC 4035, 6698, 7672).',
  },
);

export const CheckDetailsSchema = Type.Object(
  {
    mx: MxDetails,
    spf: SpfDetails,
    dmarc: DmarcDetails,
    dkim: DkimDetails,
    mta_sts: MtaStsDetails,
    tls_rpt: TlsRptDetails,
    bimi: BimiDetails,
    dnssec: DnssecDetails,
  },
  {
    description:
      'What each check found, keyed by check id: the SPF tree, the DMARC walk, every DKIM key, the DNSSEC and DANE report, ...',
  },
);

export const EmailSecurityResponseSchema = Type.Object({
  domain: Type.String({
    description: 'The domain checked, normalized (lower case, A-labels, no trailing dot).',
  }),
  score: Type.Integer({ minimum: 0, maximum: 100 }),
  grade: Type.Enum(['A', 'B', 'C', 'D', 'F'], {
    description: 'A ≥ 90, B ≥ 75, C ≥ 60, D ≥ 40, else F; after caps.',
  }),
  scoring: Type.Object(
    {
      earned: Type.Integer({ minimum: 0, description: 'Σ checks[].points' }),
      possible: Type.Integer({ minimum: 0, description: 'Σ checks[].max_points' }),
      uncapped_score: Type.Integer({
        minimum: 0,
        maximum: 100,
        description: 'round(100 × earned / possible), half up.',
      }),
      caps: Type.Array(
        Type.Object({
          check: Type.Enum([...CHECK_IDS]),
          max_grade: Type.Enum(['C', 'D']),
          max_score: Type.Integer(),
          reason: Type.String(),
        }),
      ),
      non_sending: Type.Boolean({
        description: 'Null MX + "v=spf1 -all" + DMARC reject: DKIM, MTA-STS and TLS-RPT earn full points.',
      }),
      formula: Type.String(),
    },
    { description: 'How score follows from the checks: score = min(uncapped_score, every cap’s max_score).' },
  ),
  checks: Type.Array(CheckSchema, {
    description: 'mx, spf, dmarc, dkim, mta_sts, tls_rpt, bimi, dnssec, in this order.',
  }),
  details: CheckDetailsSchema,
  mx: Type.Array(
    Type.Object({
      priority: Type.Integer({ minimum: 0 }),
      exchange: Type.String({ description: '"." for a null MX.' }),
      addresses: Type.Array(Type.String()),
    }),
  ),
  tested_dkim_selectors: Type.Array(Type.String(), {
    description:
      'Every selector queried, in order: the caller’s (alphabetical), then the disclosed common list.',
  }),
  recommendations: Type.Array(
    Type.Object({
      check: Type.Enum([...CHECK_IDS]),
      priority: Type.Enum(['high', 'medium', 'low']),
      text: Type.String(),
    }),
    { description: 'Most valuable first.' },
  ),
  dns_queries: Type.Integer({
    minimum: 0,
    description: 'DNS questions asked for this check (answered from cache or not).',
  }),
  checked_at: Type.String({ format: 'date-time' }),
  ...AttributionFields,
});
export type EmailSecurityResponse = Static<typeof EmailSecurityResponseSchema>;
export type EmailCheck = Static<typeof CheckSchema>;
export type EmailCheckDetails = Static<typeof CheckDetailsSchema>;
