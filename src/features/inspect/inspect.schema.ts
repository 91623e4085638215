/**
 * GET /api/inspect: query and response schemas. The contract calls the body
 * a free-form object; every part is still declared here so the serializer
 * passes only the fields we mean to publish (upstream JSON cannot leak
 * through). The `tls` part is the /api/tls evidence object, declared open.
 */
import { type TSchema, Type } from 'typebox';
import { Nullable, ProviderAttemptSchema } from '../../api-schema.js';
import { TlsPartSchema } from '../tls/tls.schema.js';

const PartStatus = Type.Enum(['ok', 'error'], { description: 'ok, or error with `error` saying why.' });

export const InspectQuerySchema = Type.Object({
  target: Type.String({
    minLength: 1,
    maxLength: 1024,
    description:
      'A public host name (IDN accepted) or IP address; not a URL. http://TARGET/ and https://TARGET/ are ' +
      'fetched; an IP literal gets no SNI.',
    examples: ['example.com'],
  }),
  ip: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 64,
      description:
        'A public IPv4 or IPv6 address to add BGP routing data for; looked up, never connected to.',
    }),
  ),
  include_tls: Type.Optional(
    Type.Boolean({
      default: true,
      description:
        'false omits `tls` and makes no TLS-evidence handshake beyond what HTTPS itself needs (use it when ' +
        '/api/tls is called separately).',
    }),
  ),
});

const TimingsSchema = Type.Object(
  {
    dns: Type.Number(),
    connect: Type.Number(),
    tls: Type.Number(),
    ttfb: Type.Number(),
    total: Type.Number(),
  },
  { description: 'Milliseconds: DNS, TCP connect, TLS handshake, time to first byte, and the whole hop.' },
);

const HopTlsSchema = Type.Object({
  protocol: Nullable(Type.String()),
  alpn: Nullable(Type.String()),
  cipher: Nullable(Type.String()),
  authorized: Type.Boolean({ description: 'The certificate verified for this host.' }),
  authorization_error: Nullable(Type.String()),
});

const HopSchema = Type.Object({
  url: Type.String(),
  status: Type.Integer(),
  location: Nullable(Type.String({ description: 'A redirect’s Location, resolved against the hop URL.' })),
  http_version: Type.Enum(['1.1', '2']),
  remote_address: Type.String(),
  timings: TimingsSchema,
  tls: Nullable(HopTlsSchema),
});

const ChainSchema = Type.Object({
  start_url: Type.String(),
  status: PartStatus,
  error: Type.Optional(Type.String()),
  stage: Type.Optional(
    Type.String({
      description: 'dns, connect, tls handshake, request, response headers, response body, refused.',
    }),
  ),
  hops: Type.Array(HopSchema, { description: 'Every response, in order (also those before a failure).' }),
  final_url: Nullable(Type.String()),
  redirect_limit_reached: Type.Boolean(),
  total_ms: Type.Number(),
});

const AltServiceSchema = Type.Object({
  protocol: Type.String(),
  authority: Type.String(),
  max_age: Type.Integer(),
});

const HttpPartSchema = Type.Object({
  status: PartStatus,
  error: Type.Optional(Type.String()),
  chains: Type.Object({ http: ChainSchema, https: ChainSchema }),
  final: Nullable(
    Type.Object({
      url: Type.String(),
      status: Type.Integer(),
      http_version: Type.Enum(['1.1', '2']),
      remote_address: Type.String(),
      headers: Type.Record(Type.String(), Type.String(), {
        description: 'The allow-listed headers (security, caching, content, server), values capped at 8 KiB.',
      }),
      truncated_headers: Type.Array(Type.String()),
      other_headers: Type.Array(Type.String(), {
        description: 'Names of other headers received; values omitted.',
      }),
      body: Type.Object({ bytes: Type.Integer(), truncated: Type.Boolean() }),
      timings: TimingsSchema,
      tls: Nullable(HopTlsSchema),
    }),
  ),
  redirects_to_https: Nullable(Type.Boolean()),
  timings: Nullable(TimingsSchema),
  http2: Type.Object({
    negotiated: Type.Boolean({ description: 'h2 chosen by ALPN on the final HTTPS response.' }),
  }),
  http3: Type.Object({
    advertised: Type.Boolean({
      description: 'Alt-Svc offers h3; never verified (no QUIC connection is made).',
    }),
    alternatives: Type.Array(AltServiceSchema),
    clear: Type.Boolean(),
  }),
});

const FindingFields = {
  present: Type.Boolean(),
  value: Nullable(Type.String({ description: 'As received; several field lines joined with ", ".' })),
  verdict: Type.Enum(['good', 'weak', 'bad', 'missing']),
  notes: Type.Array(Type.String()),
};
const Finding = <P extends Record<string, TSchema>>(extra: P) => Type.Object({ ...FindingFields, ...extra });
const PlainFinding = Type.Object(FindingFields);

const SecurityHeadersSchema = Type.Object({
  status: PartStatus,
  error: Type.Optional(Type.String()),
  url: Type.Optional(Type.String({ description: 'The response the headers were read from.' })),
  https: Type.Optional(Type.Boolean()),
  strict_transport_security: Type.Optional(
    Finding({
      max_age: Nullable(Type.Integer()),
      include_subdomains: Type.Boolean(),
      preload: Type.Boolean(),
    }),
  ),
  content_security_policy: Type.Optional(
    Finding({
      policies: Type.Array(
        Type.Object({ directives: Type.Record(Type.String(), Type.Array(Type.String())) }),
      ),
      unsafe_inline: Type.Boolean(),
      unsafe_eval: Type.Boolean(),
      flags: Type.Array(
        Type.Object({
          policy: Type.Integer(),
          directive: Type.String(),
          keyword: Type.String(),
          effective: Type.Boolean(),
        }),
      ),
      report_only: Nullable(Type.String()),
    }),
  ),
  frame_ancestors: Type.Optional(PlainFinding),
  x_frame_options: Type.Optional(PlainFinding),
  x_content_type_options: Type.Optional(PlainFinding),
  referrer_policy: Type.Optional(Finding({ policy: Nullable(Type.String()) })),
  permissions_policy: Type.Optional(
    Finding({ features: Type.Record(Type.String(), Type.Array(Type.String())) }),
  ),
  cross_origin_opener_policy: Type.Optional(PlainFinding),
  cross_origin_resource_policy: Type.Optional(PlainFinding),
  cross_origin_embedder_policy: Type.Optional(PlainFinding),
  score: Type.Optional(Type.Integer({ minimum: 0, maximum: 100 })),
  grade: Type.Optional(Type.Enum(['A+', 'A', 'B', 'C', 'D', 'F'])),
  grade_notes: Type.Optional(Type.Array(Type.String())),
  hsts_preload: Type.Optional(
    Type.Object(
      {
        eligible: Type.Boolean({ description: 'No check failed (`unverified` ones do not count).' }),
        checks: Type.Array(
          Type.Object({
            requirement: Type.String({
              description:
                '`registrable domain` (from the Public Suffix List: a subdomain fails, naming the domain to ' +
                'submit) or `domain name` for an IP literal, `valid certificate`, `HTTP redirects to HTTPS`, ' +
                '`all subdomains serve HTTPS`, then the HSTS header rules.',
            }),
            status: Type.Enum(['pass', 'fail', 'unverified']),
            detail: Type.String(),
          }),
        ),
      },
      { description: 'hstspreload.org submission requirements, as far as one host shows them.' },
    ),
  ),
});

const OriginAsSchema = Type.Object({ asn: Type.Integer(), holder: Nullable(Type.String()) });

const NetworkPartSchema = Type.Object({
  status: PartStatus,
  error: Type.Optional(Type.String()),
  truncated: Type.Boolean(),
  addresses: Type.Array(
    Type.Object({
      address: Type.String(),
      family: Type.Enum([4, 6]),
      reverse_dns: Type.Object({
        status: PartStatus,
        error: Type.Optional(Type.String()),
        names: Type.Array(Type.String()),
      }),
      status: PartStatus,
      error: Type.Optional(Type.String()),
      announced: Nullable(Type.Boolean()),
      prefix: Nullable(Type.String()),
      asn: Nullable(Type.Integer()),
      holder: Nullable(Type.String()),
      origins: Type.Array(OriginAsSchema),
      source: Nullable(Type.String()),
      source_id: Nullable(Type.String()),
      providers_tried: Type.Array(ProviderAttemptSchema),
    }),
  ),
});

const VisibilitySchema = Nullable(
  Type.Object({ ris_peers_seeing: Type.Integer(), total_ris_peers: Type.Integer() }),
);
const SightingSchema = Nullable(
  Type.Object({ time: Type.String(), prefix: Nullable(Type.String()), origin: Nullable(Type.Integer()) }),
);
const PrefixOriginSchema = Type.Object({ prefix: Type.String(), origin: Nullable(Type.Integer()) });

const RoutingPartSchema = Type.Object({
  status: PartStatus,
  error: Type.Optional(Type.String()),
  ip: Type.String(),
  prefix: Type.Optional(Nullable(Type.String())),
  origins: Type.Optional(Type.Array(Type.Integer())),
  visibility: Type.Optional(Type.Object({ v4: VisibilitySchema, v6: VisibilitySchema })),
  first_seen: Type.Optional(SightingSchema),
  last_seen: Type.Optional(SightingSchema),
  less_specifics: Type.Optional(Type.Array(PrefixOriginSchema)),
  more_specifics: Type.Optional(Type.Array(PrefixOriginSchema)),
  query_time: Type.Optional(Nullable(Type.String())),
  source: Nullable(Type.String()),
  source_id: Nullable(Type.String()),
  providers_tried: Type.Array(ProviderAttemptSchema),
});

export const InspectResponseSchema = Type.Object(
  {
    target: Type.String({
      description: 'The host inspected: lower-case A-label name, or the canonical address.',
    }),
    target_type: Type.Enum(['domain', 'ip']),
    addresses: Type.Array(Type.String(), { description: 'Every resolved address, each checked public.' }),
    checked_at: Type.String({ format: 'date-time' }),
    http: HttpPartSchema,
    security_headers: SecurityHeadersSchema,
    tls: Type.Optional(TlsPartSchema),
    network: NetworkPartSchema,
    routing: Type.Optional(RoutingPartSchema),
  },
  {
    additionalProperties: true,
    description: 'HTTP, security-header, TLS and network evidence; each part has its own status.',
  },
);
