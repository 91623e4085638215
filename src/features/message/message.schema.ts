/**
 * POST /api/message: one message's DKIM, ARC, SPF and DMARC, judged by
 * netdiag itself, and the path it took (docs/message.md). The message is
 * never logged, cached or kept; only this answer exists.
 */
import { type Static, Type } from 'typebox';
import { AttributionFields, Nullable } from '../../api-schema.js';
import { SpfResponseSchema } from '../spf/spf.schema.js';

const envelopeFields = {
  ip: Type.Optional(
    Type.String({
      maxLength: 64,
      description:
        "The address that connected to the receiving server. Default: from the receiving side's first Received header.",
      examples: ['192.0.2.1'],
    }),
  ),
  helo: Type.Optional(
    Type.String({ maxLength: 512, description: 'Its HELO/EHLO name. Default: from the same header.' }),
  ),
  mail_from: Type.Optional(
    Type.String({
      maxLength: 512,
      description:
        'MAIL FROM (empty for a bounce). Default: the Received header’s envelope-from, else Return-Path.',
    }),
  ),
};

/** With a raw body (message/rfc822), who connected is said in the query. */
export const MessageQuerySchema = Type.Object(envelopeFields);
export type MessageQuery = Static<typeof MessageQuerySchema>;

export const MessageJsonBodySchema = Type.Object(
  {
    message: Type.String({
      minLength: 1,
      description: 'The raw message (RFC 5322), or its headers alone; bare LF line ends are read as CRLF.',
    }),
    ...envelopeFields,
  },
  { additionalProperties: false },
);
export type MessageJsonBody = Static<typeof MessageJsonBodySchema>;

/** RFC 8601 §2.7.1's DKIM results (and ARC's, §2.7.x of RFC 8617). */
export const AUTH_RESULTS = ['pass', 'fail', 'neutral', 'policy', 'temperror', 'permerror', 'none'] as const;
const AuthResultSchema = Type.Enum([...AUTH_RESULTS]);

export const DkimSignatureSchema = Type.Object(
  {
    index: Type.Integer({ minimum: 0, description: 'Position among the DKIM-Signature headers, top first.' }),
    domain: Nullable(Type.String(), 'd=; null when the signature has none.'),
    selector: Nullable(Type.String(), 's='),
    algorithm: Nullable(Type.String(), 'a=, e.g. rsa-sha256, ed25519-sha256.'),
    canonicalization: Type.Object(
      { header: Type.String(), body: Type.String() },
      { additionalProperties: false, description: 'c= as signed (default simple/simple).' },
    ),
    identity: Nullable(Type.String(), 'i= (default @d=).'),
    signed_headers: Type.Array(Type.String(), { description: 'h=, as listed (lower case).' }),
    body_length: Nullable(Type.Integer(), 'l=: the body octets signed; null when the whole body is.'),
    signed_at: Nullable(Type.String({ format: 'date-time' }), 't='),
    expires_at: Nullable(Type.String({ format: 'date-time' }), 'x='),
    result: AuthResultSchema,
    reason: Nullable(Type.String(), 'Why, in words, for every result but pass.'),
    body_hash: Type.Enum(['match', 'mismatch', 'not_checked'], {
      description:
        'not_checked: only headers were given, or the signature failed before the body was hashed.',
    }),
    key: Nullable(
      Type.Object(
        {
          name: Type.String({ description: 'The TXT record asked for: <selector>._domainkey.<domain>.' }),
          type: Nullable(Type.String(), 'k=: rsa, ed25519.'),
          bits: Nullable(Type.Integer()),
          record: Type.String({ description: 'The key record as published.' }),
        },
        { additionalProperties: false },
      ),
      'The public key used; null when none could be had.',
    ),
    aligned: Nullable(Type.Boolean(), 'd= aligns with the From domain (relaxed or strict as DMARC says).'),
  },
  { additionalProperties: false },
);
export type DkimSignature = Static<typeof DkimSignatureSchema>;

const ArcInstanceSchema = Type.Object(
  {
    instance: Type.Integer({ minimum: 1, description: 'i= of the set.' }),
    seal: Type.Object(
      {
        result: AuthResultSchema,
        domain: Nullable(Type.String()),
        selector: Nullable(Type.String()),
        cv: Nullable(
          Type.String(),
          'The chain validation this instance’s sealer claimed (none, pass, fail).',
        ),
      },
      { additionalProperties: false },
    ),
    message_signature: Type.Object(
      { result: AuthResultSchema, domain: Nullable(Type.String()), selector: Nullable(Type.String()) },
      { additionalProperties: false },
    ),
    authentication_results: Nullable(Type.String(), 'The ARC-Authentication-Results this instance carries.'),
  },
  { additionalProperties: false },
);

export const ArcSchema = Type.Object(
  {
    result: Type.Enum(['none', 'pass', 'fail'], { description: 'RFC 8617 §5.2 chain validation.' }),
    instances: Type.Integer({ minimum: 0 }),
    chain: Type.Array(ArcInstanceSchema, { description: 'One entry per instance, i=1 first.' }),
    broken_at: Nullable(Type.Integer(), 'The instance where the chain broke; null when it did not.'),
    reason: Nullable(Type.String(), 'Why it failed, in words.'),
  },
  { additionalProperties: false },
);
export type Arc = Static<typeof ArcSchema>;

export const ReceivedHopSchema = Type.Object(
  {
    index: Type.Integer({
      minimum: 0,
      description: 'Position among the Received headers, top (newest) first.',
    }),
    from: Nullable(Type.String(), 'The from clause: the name the client gave.'),
    from_address: Nullable(Type.String(), 'The address the receiving server saw (the TCP-info).'),
    from_reverse: Nullable(Type.String(), 'That address’s reverse name as the header wrote it.'),
    by: Nullable(Type.String()),
    with: Nullable(Type.String(), 'SMTP, ESMTP, ESMTPS, ESMTPSA, LMTP, HTTP, ... (RFC 3848).'),
    tls: Nullable(
      Type.Object(
        { version: Nullable(Type.String()), cipher: Nullable(Type.String()) },
        { additionalProperties: false },
      ),
      'Where the header says so.',
    ),
    id: Nullable(Type.String()),
    for: Nullable(Type.String()),
    envelope_from: Nullable(Type.String()),
    time: Nullable(Type.String({ format: 'date-time' })),
    delay_seconds: Nullable(
      Type.Integer(),
      'Since the hop below it (the previous one on the way); null without both times.',
    ),
  },
  { additionalProperties: false },
);
export type ReceivedHop = Static<typeof ReceivedHopSchema>;

export const AuthenticationResultsSchema = Type.Object(
  {
    index: Type.Integer({
      minimum: 0,
      description: 'Position among the Authentication-Results headers, top first.',
    }),
    authserv_id: Type.String(),
    trusted: Type.Boolean({
      description:
        'Written by the receiving side (above its Received header, RFC 8601 §5); others may be forged.',
    }),
    why: Type.String(),
    results: Type.Array(
      Type.Object(
        {
          method: Type.String({ description: 'dkim, spf, dmarc, arc, ...' }),
          result: Type.String(),
          properties: Type.Record(Type.String(), Type.String(), {
            description: 'ptype.property = value, e.g. "header.d": "example.com".',
          }),
        },
        { additionalProperties: false },
      ),
    ),
    disagreements: Type.Array(Type.String(), { description: 'Where its results differ from netdiag’s own.' }),
  },
  { additionalProperties: false },
);

export const MessageFindingSchema = Type.Object(
  {
    code: Type.String(),
    severity: Type.Enum(['critical', 'high', 'medium', 'low', 'info']),
    message: Type.String(),
  },
  { additionalProperties: false },
);

export const MessageAnalysisSchema = Type.Object(
  {
    verdict: Type.Object(
      {
        status: Type.Enum(['authenticated', 'not_authenticated', 'unknown'], {
          description:
            'authenticated: DMARC passes for the From domain; not_authenticated: it fails; unknown: no ' +
            'DMARC record, or a DNS failure decided nothing.',
        }),
        summary: Type.String({ description: 'What a person reads first.' }),
      },
      { additionalProperties: false },
    ),
    headers_only: Type.Boolean({ description: 'No body was given: body hashes are not checked.' }),
    from: Type.Object(
      {
        address: Nullable(Type.String()),
        domain: Nullable(Type.String()),
      },
      { additionalProperties: false, description: 'RFC5322.From, the identity DMARC protects.' },
    ),
    envelope: Type.Object(
      {
        ip: Nullable(Type.String()),
        helo: Nullable(Type.String()),
        mail_from: Nullable(Type.String()),
        source: Type.Enum(['given', 'received', 'none'], {
          description: 'given: in the request; received: read from a Received header; none: not known.',
        }),
        received_index: Nullable(Type.Integer(), 'The Received header trusted for it.'),
        why: Type.String({ description: 'Which header was trusted, and why that one.' }),
      },
      { additionalProperties: false },
    ),
    dkim: Type.Array(DkimSignatureSchema, {
      description: 'One entry per DKIM-Signature, even unreadable ones.',
    }),
    arc: ArcSchema,
    spf: Nullable(
      SpfResponseSchema,
      'check_host() for the connecting address and MAIL FROM; null without an address.',
    ),
    dmarc: Type.Object(
      {
        domain: Nullable(Type.String(), 'The From domain.'),
        record: Nullable(Type.String()),
        record_domain: Nullable(Type.String()),
        policy: Nullable(Type.Enum(['none', 'quarantine', 'reject']), 'The policy that applies (after t=y).'),
        alignment: Type.Object(
          { spf: Type.Enum(['relaxed', 'strict']), dkim: Type.Enum(['relaxed', 'strict']) },
          { additionalProperties: false },
        ),
        spf_aligned: Type.Boolean(),
        dkim_aligned: Type.Boolean(),
        result: Type.Enum(['pass', 'fail', 'none', 'temperror', 'permerror']),
        disposition: Type.Enum(['none', 'quarantine', 'reject'], {
          description: 'What a receiver following it does.',
        }),
        summary: Type.String(),
      },
      { additionalProperties: false },
    ),
    received: Type.Array(ReceivedHopSchema, { description: 'Top (newest) first, as the headers stand.' }),
    authentication_results: Type.Array(AuthenticationResultsSchema),
    findings: Type.Array(MessageFindingSchema, { description: 'Most severe first.' }),
    notes: Type.Array(Type.String(), { description: 'What was left out (limits), and why.' }),
    dns_lookups: Type.Array(
      Type.Object(
        {
          name: Type.String(),
          type: Type.String(),
          result: Type.Enum(['answer', 'nxdomain', 'nodata', 'error']),
          purpose: Type.String({ description: 'dkim key, arc key, spf, dmarc, ...' }),
        },
        { additionalProperties: false },
      ),
      { description: 'Every DNS question the analysis asked, in order.' },
    ),
    analyzed_at: Type.String({ format: 'date-time' }),
    ...AttributionFields,
  },
  { additionalProperties: false },
);
export type MessageAnalysis = Static<typeof MessageAnalysisSchema>;
