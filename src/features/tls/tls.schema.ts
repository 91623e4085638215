/**
 * GET /api/tls: the query and the `tls` evidence object. /api/inspect embeds
 * the same object (TlsEvidenceSchema) under its own `tls` key.
 */
import { type Static, Type } from 'typebox';
import { Nullable, TaggedUnion } from '../../api-schema.js';

export const TlsQuerySchema = Type.Object({
  target: Type.String({
    minLength: 1,
    maxLength: 2048,
    description:
      'The host whose certificate on port 443 is inspected: a name (IDN accepted), an IPv4 or IPv6 literal ' +
      '(`[v6]` too; no SNI is sent then), `HOST:443`, or an http(s) URL of which only the host is used. ' +
      'Any other port is refused. The host must resolve to public addresses only.',
    examples: ['example.com'],
  }),
});
export type TlsQuery = Static<typeof TlsQuerySchema>;

export const SeveritySchema = Type.Enum(['critical', 'high', 'medium', 'low'], {
  description:
    'critical: clients fail now; high: clients fail soon or some fail; medium: a weakness or deadline; low: untidy.',
});

export const FindingSchema = Type.Object(
  {
    code: Type.String({
      description:
        'expired, not_yet_valid, expires_within_14_days, expires_within_30_days, name_mismatch, untrusted, ' +
        'protocol_below_tls_1_2, no_forward_secrecy, weak_key, weak_signature, incomplete_chain, ' +
        'chain_wrong_order, chain_contains_root, chain_unrelated_certificates, expired_intermediate.',
    }),
    severity: SeveritySchema,
    message: Type.String({ description: 'What is wrong, with the rule it rests on.' }),
  },
  { additionalProperties: false },
);

const KeySchema = Type.Object(
  {
    type: Type.String({ description: 'RSA, RSA-PSS, EC, Ed25519, Ed448, DSA (or the algorithm OID).' }),
    bits: Type.Optional(Type.Integer({ description: 'Modulus size (RSA, DSA) or field size (EC).' })),
    curve: Type.Optional(Type.String({ description: 'EC only: P-256, P-384, P-521, or the OpenSSL name.' })),
  },
  { additionalProperties: false },
);

/** The fields every certificate summary carries, leaf or chain member. */
const certificateFields = {
  subject: Type.String({
    description: 'Distinguished name, attributes in encoded order, e.g. "CN=example.com".',
  }),
  issuer: Type.String(),
  serial: Type.String({ description: 'Upper-case hex, as OpenSSL prints it.' }),
  not_before: Type.String({ format: 'date-time' }),
  not_after: Type.String({ format: 'date-time' }),
  expired: Type.Boolean(),
  self_signed: Type.Boolean({
    description: 'Issued by itself: subject = issuer and its own key verifies it.',
  }),
  key: KeySchema,
  signature_algorithm: Type.String({
    description: 'As OpenSSL names it (sha256WithRSAEncryption, ecdsa-with-SHA256, ED25519), from the DER.',
  }),
  fingerprint_sha256: Type.String({ description: 'SHA-256 of the DER, upper-case hex pairs joined by ":".' }),
};

export const LeafSchema = Type.Object(
  {
    ...certificateFields,
    san: Type.Array(Type.String(), { description: 'subjectAltName DNS names and IP addresses.' }),
    days_remaining: Type.Integer({ description: 'Whole days until not_after, negative once expired.' }),
    ocsp_urls: Type.Array(Type.String(), { description: 'Authority Information Access: OCSP responders.' }),
    ca_issuer_urls: Type.Array(Type.String(), { description: 'Authority Information Access: CA Issuers.' }),
    sct_count: Type.Integer({ minimum: 0, description: 'SCTs embedded in the certificate (RFC 6962 §3.3).' }),
  },
  { additionalProperties: false },
);

export const ChainCertificateSchema = Type.Object(
  {
    index: Type.Integer({
      minimum: 0,
      description: 'Position in the Certificate message as sent; 0 is the leaf.',
    }),
    role: Type.Enum(['leaf', 'intermediate', 'root', 'unrelated'], {
      description: 'On the path from the leaf (intermediate, root) or not (unrelated).',
    }),
    issued_by: Nullable(Type.Integer({ minimum: 0 }), 'Index of the sent certificate that issued this one.'),
    is_ca: Type.Boolean({ description: 'basicConstraints cA.' }),
    ...certificateFields,
  },
  { additionalProperties: false },
);

export const TlsEvidenceSchema = Type.Object(
  {
    host: Type.String({ description: 'The inspected host, normalized (A-label name or IP literal).' }),
    port: Type.Integer(),
    connection: Type.Object(
      {
        address: Type.String({ description: 'The checked address the handshake went to.' }),
        sni: Nullable(Type.String(), 'The SNI sent; null for an IP literal.'),
        protocol: Type.String({ description: 'TLSv1.3, TLSv1.2, TLSv1.1 or TLSv1.' }),
        cipher: Type.String({ description: 'IANA name of the cipher suite, e.g. TLS_AES_128_GCM_SHA256.' }),
        cipher_openssl: Type.String({ description: "OpenSSL's name for the suite." }),
        alpn: Nullable(Type.String(), 'The ALPN protocol chosen from h2 and http/1.1; null when none.'),
        ephemeral_key: Nullable(
          Type.Object(
            {
              type: Type.String({
                description:
                  'ECDH, DH, or KEM: a key-encapsulation group, hybrid or post-quantum (X25519MLKEM768), which has no single key size.',
              }),
              curve: Type.Optional(
                Type.String({ description: 'Group, e.g. X25519, prime256v1, X25519MLKEM768.' }),
              ),
              bits: Type.Optional(Type.Integer()),
            },
            { additionalProperties: false },
          ),
          'The key-exchange key; null when the exchange was not ephemeral.',
        ),
        forward_secrecy: Type.Boolean(),
        ocsp_stapled: Type.Boolean({ description: 'The server stapled an OCSP response (status_request).' }),
        authorized: Type.Boolean({
          description: 'The chain verified against the trusted roots and the name matched (OpenSSL).',
        }),
        authorization_error: Nullable(
          Type.String(),
          'Why not: OpenSSL/Node codes such as CERT_HAS_EXPIRED, DEPTH_ZERO_SELF_SIGNED_CERT, ERR_TLS_CERT_ALTNAME_INVALID.',
        ),
        authorization_reason: Nullable(
          Type.String(),
          'The same in words, naming what is wrong with this certificate (e.g. "issued for shop.example, not www.example"); null when authorized.',
        ),
        hostname_matches: Type.Boolean({
          description: 'A subjectAltName entry covers the host (RFC 6125; the CN is not used).',
        }),
      },
      { additionalProperties: false },
    ),
    leaf: LeafSchema,
    chain: Type.Object(
      {
        source: Type.Enum(['handshake', 'reconstructed'], {
          description:
            'handshake: read from the Certificate message, exactly as sent. reconstructed: the handshake ' +
            "could not be read and the list is OpenSSL's issuer links, which may reorder, drop, or add trust-store " +
            'certificates; order and root findings are then not judged.',
        }),
        sent_count: Type.Integer({ minimum: 1, description: 'How many certificates the server sent.' }),
        certificates: Type.Array(ChainCertificateSchema, { description: 'As sent (at most the first 16).' }),
        root: Nullable(
          Type.Object(
            {
              subject: Type.String(),
              fingerprint_sha256: Type.String(),
              source: Type.Enum(['sent', 'trust store']),
            },
            { additionalProperties: false },
          ),
          'The self-signed root the path from the leaf ends at, and who supplied it; null when none was found.',
        ),
        findings: Type.Array(FindingSchema, {
          description: 'The chain findings (also in the top-level list).',
        }),
      },
      { additionalProperties: false },
    ),
    verdict: Type.Object(
      {
        status: Type.Enum(['trusted', 'trusted_with_warnings', 'rejected'], {
          description:
            'rejected: a client that checks certificates (a browser, a sender under MTA-STS) refuses it now; ' +
            'trusted_with_warnings: accepted, with a critical or high finding to fix (expiry within 14 days, a weak key...); ' +
            'trusted: accepted.',
        }),
        summary: Type.String({
          description: 'The verdict in one sentence, with the reason a client refuses it.',
        }),
      },
      { additionalProperties: false, description: 'What a person reads first.' },
    ),
    findings: Type.Array(FindingSchema, { description: 'Every finding, most severe first.' }),
    checked_at: Type.String({ format: 'date-time', description: 'When the handshake was made.' }),
  },
  { additionalProperties: false, description: 'Live certificate evidence from one TLS handshake.' },
);
export type TlsEvidence = Static<typeof TlsEvidenceSchema>;

/**
 * The evidence (`status: ok`), or why the target gave none (`status: error`): a refused or
 * timed-out connection, a failed handshake, a server with no readable certificate. That is
 * what the user came to learn about the target, so it is an answer (200), not a failure of
 * netdiag's (a 502 means one of our providers failed and carries `providers_tried`).
 */
export const TlsPartSchema = TaggedUnion(
  'status',
  [
    Type.Object(
      { status: Type.Literal('ok'), ...TlsEvidenceSchema.properties },
      { additionalProperties: false, description: 'Live certificate evidence from one TLS handshake.' },
    ),
    Type.Object(
      {
        status: Type.Literal('error'),
        error: Type.String({ description: 'What happened, naming the host and the stage.' }),
        stage: Type.Optional(Type.String({ description: 'dns, connect or tls handshake.' })),
      },
      { additionalProperties: false, description: 'The target gave no evidence: why.' },
    ),
  ],
  { description: 'One live handshake with HOST:443 (shared cache), or why there is none.' },
);
export type TlsPart = Static<typeof TlsPartSchema>;

export const TlsResponseSchema = Type.Object({ tls: TlsPartSchema }, { additionalProperties: false });
export type TlsResponse = Static<typeof TlsResponseSchema>;
