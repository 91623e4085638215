/**
 * GET /api/tls-scan: what a web or mail server accepts, protocol by
 * protocol, suite by suite, group by group (docs/tls-scan.md). The scan
 * itself lives in src/tls-scan/; this is its contract.
 */
import { type Static, Type } from 'typebox';
import { Nullable, TaggedUnion } from '../../api-schema.js';
import { ChainCertificateSchema, LeafSchema, FindingSchema as TlsFindingSchema } from '../tls/tls.schema.js';

export const TlsScanQuerySchema = Type.Object({
  target: Type.String({
    minLength: 1,
    maxLength: 2048,
    description:
      'The host to scan: a name (IDN accepted), an IPv4 or IPv6 literal (no SNI is sent then), or an ' +
      'http(s) URL of which only the host is used. It must resolve to public addresses only.',
    examples: ['example.com'],
  }),
  service: Type.Optional(
    Type.Enum(['https', 'smtp'], {
      description:
        'https (default): port 443. smtp: port 25 with STARTTLS, every handshake in its own SMTP session ' +
        '(banner, EHLO, STARTTLS; never MAIL or RCPT).',
      default: 'https',
    }),
  ),
});
export type TlsScanQuery = Static<typeof TlsScanQuerySchema>;

export const PROTOCOL_NAMES = ['SSLv2', 'SSLv3', 'TLSv1', 'TLSv1.1', 'TLSv1.2', 'TLSv1.3'] as const;
export type ScanProtocol = (typeof PROTOCOL_NAMES)[number];
const ProtocolNameSchema = Type.Enum([...PROTOCOL_NAMES]);

/** A boolean-or-null per protocol the server offers (absent for those it does not). */
const perProtocol = (description: string) =>
  Type.Object(
    {
      SSLv2: Type.Optional(Nullable(Type.Boolean())),
      SSLv3: Type.Optional(Nullable(Type.Boolean())),
      TLSv1: Type.Optional(Nullable(Type.Boolean())),
      'TLSv1.1': Type.Optional(Nullable(Type.Boolean())),
      'TLSv1.2': Type.Optional(Nullable(Type.Boolean())),
      'TLSv1.3': Type.Optional(Nullable(Type.Boolean())),
    },
    { additionalProperties: false, description },
  );

export const NCSC_CLASSES = ['good', 'sufficient', 'phase_out', 'insufficient'] as const;
export type NcscClass = (typeof NCSC_CLASSES)[number];
const NcscClassSchema = Type.Enum([...NCSC_CLASSES], {
  description:
    'NCSC-NL TLS guidelines (as internet.nl applies them): good, sufficient, phase out, insufficient.',
});

export const ScannedSuiteSchema = Type.Object(
  {
    protocol: ProtocolNameSchema,
    code: Type.String({ description: 'The code point, e.g. 0xC02F (SSLv2: three bytes, 0x0700C0).' }),
    name: Type.String({ description: 'IANA name (the RFC name where IANA has none).' }),
    openssl_name: Nullable(Type.String(), "OpenSSL's name; null where OpenSSL has none."),
    key_exchange: Type.String({ description: 'ECDHE, DHE, RSA, ECDH, DH, PSK, ..., or "any" (TLS 1.3).' }),
    authentication: Type.String({
      description: 'RSA, ECDSA, DSS, PSK, none (anonymous), or "any" (TLS 1.3).',
    }),
    encryption: Type.String({ description: 'AESGCM, AES (CBC), ChaCha20, AESCCM, 3DES, RC4, NULL, ...' }),
    bits: Type.Integer({ minimum: 0, description: "The encryption key's strength in bits." }),
    export: Type.Boolean({ description: 'An export-grade suite (40/56-bit, RFC 2246 App. A.5).' }),
    ncsc: NcscClassSchema,
  },
  { additionalProperties: false },
);
export type ScannedSuite = Static<typeof ScannedSuiteSchema>;

export const GROUP_NAMES = [
  'x25519',
  'x448',
  'secp256r1',
  'secp384r1',
  'secp521r1',
  'ffdhe2048',
  'ffdhe3072',
  'ffdhe4096',
  'ffdhe6144',
  'ffdhe8192',
  'X25519MLKEM768',
  'SecP256r1MLKEM768',
  'SecP384r1MLKEM1024',
] as const;
export type ScanGroupName = (typeof GROUP_NAMES)[number];

export const ScannedGroupSchema = Type.Object(
  {
    name: Type.Enum([...GROUP_NAMES]),
    code: Type.Integer({ description: 'The NamedGroup code point (IANA TLS Supported Groups).' }),
    kind: Type.Enum(['ecdhe', 'ffdhe', 'hybrid_pq'], {
      description: 'Elliptic curve, finite field (RFC 7919), or a post-quantum hybrid (ML-KEM with ECDHE).',
    }),
    protocol: Type.Enum(['TLSv1.3', 'TLSv1.2'], {
      description:
        'Where it was seen: a TLS 1.3 ServerHello or HelloRetryRequest, or a TLS 1.2 ServerKeyExchange.',
    }),
    ncsc: NcscClassSchema,
  },
  { additionalProperties: false },
);
export type ScannedGroup = Static<typeof ScannedGroupSchema>;

const OcspSchema = Type.Object(
  {
    stapled: Type.Boolean({ description: 'The server stapled an OCSP response (RFC 6066 §8) when asked.' }),
    status: Nullable(
      Type.Enum(['good', 'revoked', 'unknown', 'invalid']),
      "The staple's verdict on the leaf, its signature verified against the issuer (or a responder the " +
        'issuer delegated to, RFC 6960 §4.2.2.2); invalid: it cannot be trusted (see reason). Null when not stapled.',
    ),
    reason: Nullable(Type.String(), 'Why invalid, or why revoked (the CRL reason); null otherwise.'),
    produced_at: Nullable(Type.String({ format: 'date-time' })),
    this_update: Nullable(Type.String({ format: 'date-time' })),
    next_update: Nullable(Type.String({ format: 'date-time' }), 'Null when the responder gave none.'),
    revoked_at: Nullable(Type.String({ format: 'date-time' })),
    responder: Nullable(Type.String(), 'The responder ID: a distinguished name or a key hash.'),
  },
  { additionalProperties: false },
);
export type OcspStapling = Static<typeof OcspSchema>;

export const ScannedCertificateSchema = Type.Object(
  {
    key_type: Type.Enum(['RSA', 'ECDSA', 'EdDSA', 'DSA', 'other'], {
      description: 'The leaf key type this handshake asked for (signature algorithms limited to it).',
    }),
    key_bits: Nullable(Type.Integer()),
    fingerprint_sha256: Type.String(),
    protocol: Type.String({ description: 'The protocol of the handshake that served it.' }),
    leaf: LeafSchema,
    chain: Type.Array(ChainCertificateSchema, { description: 'As sent, leaf first.' }),
    authorized: Type.Boolean({ description: 'The chain verified to a trusted root and the name matched.' }),
    authorization_error: Nullable(Type.String()),
    verdict: Type.Object(
      {
        status: Type.Enum(['trusted', 'trusted_with_warnings', 'rejected']),
        summary: Type.String(),
      },
      { additionalProperties: false },
    ),
    findings: Type.Array(TlsFindingSchema, { description: "/api/tls's certificate and chain findings." }),
  },
  { additionalProperties: false },
);
export type ScannedCertificate = Static<typeof ScannedCertificateSchema>;

export const TlsScanFindingSchema = Type.Object(
  {
    code: Type.String({ description: 'A stable code from the catalogue in docs/tls-scan.md.' }),
    severity: Type.Enum(['critical', 'high', 'medium', 'low', 'info']),
    message: Type.String(),
    references: Type.Array(Type.String(), { description: 'RFCs and guidelines the finding rests on.' }),
  },
  { additionalProperties: false },
);
export type TlsScanFinding = Static<typeof TlsScanFindingSchema>;

const MOZILLA_LEVELS = ['modern', 'intermediate', 'old'] as const;
export type MozillaLevel = (typeof MOZILLA_LEVELS)[number];

export const RatingsSchema = Type.Object(
  {
    mozilla: Type.Object(
      {
        version: Type.String({
          description: "The guidelines' version applied (Mozilla's server-side-tls JSON).",
        }),
        meets: Nullable(
          Type.Enum([...MOZILLA_LEVELS]),
          'The strictest configuration the server complies with; null when not even old.',
        ),
        gaps: Type.Array(
          Type.Object(
            {
              level: Type.Enum([...MOZILLA_LEVELS]),
              reasons: Type.Array(Type.String()),
            },
            { additionalProperties: false },
          ),
          {
            description:
              'For each configuration stricter than `meets` (or all when null): what keeps it out.',
          },
        ),
      },
      { additionalProperties: false },
    ),
    ncsc: Type.Object(
      {
        version: Type.String({ description: 'The NCSC-NL TLS guidelines version applied.' }),
        overall: NcscClassSchema,
        protocols: Type.Array(
          Type.Object({ name: ProtocolNameSchema, class: NcscClassSchema }, { additionalProperties: false }),
          {
            description: "Each offered version's own class (§3.3.1); `overall` counts what each carries too.",
          },
        ),
        reasons: Type.Array(Type.String(), { description: 'What keeps the overall class from `good`.' }),
      },
      {
        additionalProperties: false,
        description: 'Each suite and group also carries its own `ncsc` class.',
      },
    ),
  },
  { additionalProperties: false },
);
export type Ratings = Static<typeof RatingsSchema>;

export const FeaturesSchema = Type.Object(
  {
    secure_renegotiation: Nullable(Type.Boolean(), 'RFC 5746 renegotiation_info; null without TLS ≤ 1.2.'),
    compression: Nullable(Type.Boolean(), 'Accepts TLS compression (CRIME); null without TLS ≤ 1.2.'),
    fallback_scsv: Nullable(
      Type.Boolean(),
      'TLS_FALLBACK_SCSV honoured (RFC 7507: a lower-version hello carrying it is refused with ' +
        'inappropriate_fallback); null when the server offers one protocol only.',
    ),
    extended_master_secret: Nullable(
      Type.Boolean(),
      'RFC 7627; null without TLS ≤ 1.2 (TLS 1.3 has it built in).',
    ),
    session_tickets: Nullable(
      Type.Boolean(),
      'RFC 5077 session_ticket acknowledged; null without TLS ≤ 1.2.',
    ),
    alpn: Nullable(
      Type.Array(Type.String()),
      'The ALPN protocols accepted among h2 and http/1.1 (RFC 7301); null for SMTP.',
    ),
    heartbeat: Nullable(
      Type.Boolean(),
      'The heartbeat extension advertised (RFC 6520); null without TLS ≤ 1.2.',
    ),
  },
  { additionalProperties: false },
);
export type Features = Static<typeof FeaturesSchema>;

export const TlsScanSchema = Type.Object(
  {
    target: Type.String({ description: 'The scanned host, normalized (A-label name or IP literal).' }),
    service: Type.Enum(['https', 'smtp']),
    port: Type.Integer(),
    address: Type.String({ description: 'The checked address every handshake went to.' }),
    sni: Nullable(Type.String(), 'The SNI sent; null for an IP literal.'),
    protocols: Type.Array(
      Type.Object({ name: ProtocolNameSchema, offered: Type.Boolean() }, { additionalProperties: false }),
      { description: 'SSLv2 to TLS 1.3, each tested with its own hello.' },
    ),
    cipher_suites: Type.Array(ScannedSuiteSchema, {
      description:
        'Every suite accepted, grouped by protocol (newest first), each protocol in the order the server ' +
        'chose them when it enforces one, else in the order of the client offer.',
    }),
    server_preference: perProtocol(
      'Per protocol offered: true when the server picks by its own order, false when by the client, null ' +
        'when it cannot be told (one suite).',
    ),
    chacha20_preference: perProtocol(
      "Per protocol where the server enforces its order: true when it still picks ChaCha20 for a client that lists it first (OpenSSL's PrioritizeChaCha) — not a lack of server preference; null when there is no ChaCha20 suite to tell.",
    ),
    groups: Type.Array(ScannedGroupSchema, {
      description: "The key-exchange groups accepted, in the server's order of preference where it has one.",
    }),
    dhe: Nullable(
      Type.Object(
        {
          bits: Type.Integer({ description: 'The size of the DH prime of a DHE ServerKeyExchange.' }),
          group: Nullable(
            Type.Enum(['ffdhe2048', 'ffdhe3072', 'ffdhe4096', 'ffdhe6144', 'ffdhe8192']),
            "The RFC 7919 group the prime is; null for a prime of the server's own (NCSC-NL: insufficient).",
          ),
          ncsc: NcscClassSchema,
        },
        { additionalProperties: false },
      ),
      'The finite-field DH group a DHE suite gets; null when no DHE suite is accepted.',
    ),
    certificates: Type.Array(ScannedCertificateSchema, {
      description: 'One entry per key type served (a dual-certificate server shows RSA and ECDSA).',
    }),
    without_sni: Nullable(
      Type.Object(
        {
          fingerprint_sha256: Nullable(
            Type.String(),
            'Null when the server completed no handshake without SNI.',
          ),
          same_as_sni: Type.Boolean({ description: 'The same leaf as one of `certificates`.' }),
          subject: Nullable(Type.String()),
          error: Nullable(Type.String(), 'Why no certificate was served without SNI.'),
        },
        { additionalProperties: false },
      ),
      'What a client that sends no SNI gets; null when the target is an IP literal (no SNI is ever sent).',
    ),
    ocsp_stapling: OcspSchema,
    features: FeaturesSchema,
    findings: Type.Array(TlsScanFindingSchema, { description: 'Most severe first.' }),
    grade: Type.Enum(['A+', 'A', 'B', 'C', 'D', 'E', 'F', 'T'], {
      description: 'T: the certificate is not trusted; see docs/tls-scan.md for the rules.',
    }),
    ratings: RatingsSchema,
    handshakes: Type.Integer({
      minimum: 0,
      description: 'How many handshakes (connections) this scan made.',
    }),
    handshake_budget: Type.Integer({ description: 'The most a scan may make.' }),
    complete: Type.Boolean({
      description: 'False when the deadline or the handshake budget ended the scan early (see `notes`).',
    }),
    notes: Type.Array(Type.String(), { description: 'What could not be told, and why.' }),
    elapsed_ms: Type.Integer({ minimum: 0 }),
    scanned_at: Type.String({ format: 'date-time' }),
  },
  { additionalProperties: false },
);
export type TlsScan = Static<typeof TlsScanSchema>;

/**
 * The scan (`status: ok`), or why the target gave none (`status: error`: no address, nothing
 * listening, no SMTP STARTTLS): an answer about the target (200), never cached.
 */
export const TlsScanPartSchema = TaggedUnion(
  'status',
  [
    Type.Object(
      { status: Type.Literal('ok'), ...TlsScanSchema.properties },
      { additionalProperties: false, description: 'What the server accepts.' },
    ),
    Type.Object(
      {
        status: Type.Literal('error'),
        target: Type.String(),
        service: Type.Enum(['https', 'smtp']),
        error: Type.String({ description: 'What happened, naming the host and the stage.' }),
        stage: Type.String({ description: 'connect, smtp or tls.' }),
        handshakes: Type.Integer({ minimum: 0 }),
        elapsed_ms: Type.Integer({ minimum: 0 }),
      },
      { additionalProperties: false, description: 'The target could not be scanned: why.' },
    ),
  ],
  { description: 'One scan of TARGET (cached an hour), or why there is none.' },
);
export type TlsScanPart = Static<typeof TlsScanPartSchema>;

export const TlsScanResponseSchema = Type.Object(
  { scan: TlsScanPartSchema },
  { additionalProperties: false },
);
export type TlsScanResponse = Static<typeof TlsScanResponseSchema>;
