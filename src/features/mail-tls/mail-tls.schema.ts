import { type Static, Type } from 'typebox';
import { AttributionFields, Nullable } from '../../api-schema.js';
import { DnssecStatusSchema, ReasonSchema } from '../dnssec/dnssec.schema.js';
import { TlsEvidenceSchema } from '../tls/tls.schema.js';
import { DANE_RECORD_RESULTS, DANE_VERDICTS } from './dane.js';

export const MailTlsQuerySchema = Type.Object({
  domain: Type.String({
    minLength: 1,
    maxLength: 1024,
    description: 'The mail domain (IDN accepted). Its MX hosts are tested, at most 10, in preference order.',
    examples: ['example.com'],
  }),
});
export type MailTlsQuery = Static<typeof MailTlsQuerySchema>;

const StatusSchema = Type.Enum(['pass', 'warn', 'fail', 'unreachable', 'refused', 'no_mail'], {
  description:
    '`pass`: STARTTLS with a certificate valid for the host, DANE valid where published, MTA-STS deliverable; ' +
    '`warn`: works, with a weakness; `fail`: a sender that checks (DANE, MTA-STS enforce) would not deliver, or ' +
    'no STARTTLS; `unreachable`: no connection to port 25; `refused`: the address is private or special-use and ' +
    'was not contacted; `no_mail`: a null MX.',
});

const MailFindingSchema = Type.Object(
  {
    severity: Type.Enum(['error', 'warning', 'info']),
    message: Type.String(),
    rfc: Type.String({ description: 'The rule: RFC 3207, RFC 7672, RFC 8461, ...' }),
  },
  { additionalProperties: false },
);

const ReplySchema = Type.Object(
  { code: Type.Integer(), lines: Type.Array(Type.String()) },
  { additionalProperties: false, description: 'An SMTP reply: its code and the text of each line.' },
);

const SmtpSchema = Type.Object(
  {
    banner: Nullable(ReplySchema),
    ehlo_extensions: Type.Array(Type.String(), { description: 'EHLO keywords, upper case.' }),
    starttls_offered: Nullable(Type.Boolean()),
    ehlo_after_tls: Nullable(ReplySchema),
    timings: Type.Array(
      Type.Object(
        {
          stage: Type.Enum(['connect', 'banner', 'ehlo', 'starttls', 'tls handshake', 'ehlo after tls']),
          ms: Type.Integer({ minimum: 0 }),
        },
        { additionalProperties: false },
      ),
      { description: 'Each completed stage and how long it took, in order.' },
    ),
    failure: Type.Optional(
      Type.Object(
        {
          stage: Type.Enum(['connect', 'banner', 'ehlo', 'starttls', 'tls handshake', 'ehlo after tls']),
          kind: Type.Enum(['timeout', 'refused', 'protocol', 'tls', 'network']),
          message: Type.String(),
        },
        { additionalProperties: false, description: 'Where the session stopped early, and why.' },
      ),
    ),
  },
  { additionalProperties: false },
);

const DaneRecordSchema = Type.Object(
  {
    usage: Type.Integer(),
    selector: Type.Integer(),
    matching_type: Type.Integer(),
    data: Type.String({ description: 'Certificate association data, upper-case hex.' }),
    meaning: Type.String({ description: 'RFC 7218 names, e.g. "DANE-EE(3) SPKI(1) SHA2-256(1)".' }),
    usable: Type.Boolean({
      description: 'Usable for SMTP (RFC 7672 §3.1): DANE-TA(2) or DANE-EE(3), known parameters.',
    }),
    problem: Type.Optional(Type.String({ description: 'Why SMTP cannot use it.' })),
    result: Type.Enum([...DANE_RECORD_RESULTS], {
      description:
        '`match`: it authenticates the server; `mismatch`: usable, and it does not (`reason`); `unusable`; `unchecked`: no chain to check.',
    }),
    matched: Nullable(
      Type.Integer({
        description: 'Position in the chain as sent (0 = leaf) of the certificate or key its data matches.',
      }),
    ),
    issued_by_record: Type.Optional(
      Type.Integer({
        description: 'DANE-TA(2) held whole in DNS: the sent certificate on the leaf’s path its key signed.',
      }),
    ),
    reason: Type.Optional(
      Type.String({ description: 'Why a usable record does not authenticate the server.' }),
    ),
  },
  { additionalProperties: false },
);

export const DaneSchema = Type.Object(
  {
    tlsa_name: Type.String(),
    verdict: Type.Enum([...DANE_VERDICTS], {
      description:
        '`valid`: a usable TLSA record authenticates the server (chain as sent); `mismatch`: usable records, none ' +
        'does (the stale record after a certificate rollover: DANE senders refuse to deliver); `unusable`: only ' +
        'records SMTP cannot use (PKIX usages 0/1, bad parameters); `unchecked`: usable records but no chain to ' +
        'check (no handshake); `insecure`: TLSA published in a zone that is not DNSSEC-signed (senders ignore ' +
        'it); `bogus`: the TLSA answer fails DNSSEC validation (DANE senders defer, RFC 7672 §2.2); ' +
        '`indeterminate`: TLSA published, no DNSSEC verdict reached; `none`: no TLSA; `error`: the TLSA lookup ' +
        "failed (DANE senders defer). The DNSSEC verdict is netdiag's own (as GET /api/dnssec), never a " +
        "resolver's AD bit.",
    }),
    validated: Nullable(
      Type.Boolean({
        description:
          "netdiag's own validation proved the TLSA answer secure (true), or insecure or bogus (false); null: no " +
          'verdict, or the lookup failed.',
      }),
    ),
    dnssec: Type.Object(
      { status: DnssecStatusSchema, reason: ReasonSchema },
      { additionalProperties: false, description: "netdiag's own verdict on the TLSA answer." },
    ),
    records: Type.Array(DaneRecordSchema),
    summary: Type.String(),
    findings: Type.Array(MailFindingSchema),
  },
  { additionalProperties: false },
);

const AddressSchema = Type.Object(
  {
    address: Type.String(),
    family: Type.Enum([4, 6]),
    status: StatusSchema,
    refused_reason: Type.Optional(Type.String({ description: 'Why the address was not contacted.' })),
    ptr: Type.Array(Type.String(), { description: 'PTR names of the address.' }),
    fcrdns: Nullable(
      Type.Boolean({
        description: 'A PTR name resolves back to the address (forward-confirmed reverse DNS).',
      }),
    ),
    smtp: Nullable(SmtpSchema),
    tls: Nullable(TlsEvidenceSchema),
    dane: Nullable(DaneSchema),
  },
  { additionalProperties: false },
);

const MtaStsHostSchema = Type.Object(
  {
    mode: Nullable(Type.Enum(['enforce', 'testing', 'none'])),
    matches_policy: Nullable(
      Type.Boolean({ description: 'The host matches one of the policy’s `mx` patterns.' }),
    ),
    deliverable: Nullable(
      Type.Boolean({
        description:
          'A sender applying the policy would deliver here: the host matches and its certificate is valid for its ' +
          'name (RFC 8461 §4.2). Null without an enforce or testing policy.',
      }),
    ),
  },
  { additionalProperties: false },
);

const HostSchema = Type.Object(
  {
    host: Type.String(),
    preference: Nullable(Type.Integer({ description: 'MX preference; null for the implicit MX.' })),
    status: StatusSchema,
    addresses: Type.Array(AddressSchema, { description: 'At most one IPv4 and one IPv6 address.' }),
    dane: Nullable(DaneSchema),
    mta_sts: MtaStsHostSchema,
    findings: Type.Array(MailFindingSchema),
  },
  { additionalProperties: false },
);

export const MailTlsResponseSchema = Type.Object(
  {
    domain: Type.String(),
    status: StatusSchema,
    summary: Type.String(),
    mx: Type.Object(
      {
        state: Type.Enum(['present', 'implicit', 'null_mx', 'nxdomain', 'no_address'], {
          description:
            '`implicit`: no MX, the domain itself is the mail host (RFC 5321 §5.1); `no_address`: neither MX ' +
            'nor an address.',
        }),
        hosts: Type.Integer({ minimum: 0, description: 'MX hosts published (at most 10 are tested).' }),
      },
      { additionalProperties: false },
    ),
    mta_sts: Type.Object(
      {
        mode: Nullable(Type.Enum(['enforce', 'testing', 'none'])),
        mx: Type.Array(Type.String(), { description: 'The policy’s mx patterns.' }),
        state: Type.String({
          description: 'none, invalid, policy, error, not_applicable (as GET /api/email-security).',
        }),
      },
      { additionalProperties: false },
    ),
    hosts: Type.Array(HostSchema),
    findings: Type.Array(MailFindingSchema),
    helo_name: Type.String({ description: 'The name this service gave in EHLO.' }),
    checked_at: Type.String({ format: 'date-time' }),
    ...AttributionFields,
  },
  { additionalProperties: false },
);
export type MailTlsResponse = Static<typeof MailTlsResponseSchema>;
export type MailTlsHost = Static<typeof HostSchema>;
export type MailTlsAddress = Static<typeof AddressSchema>;
export type MailTlsDane = Static<typeof DaneSchema>;
