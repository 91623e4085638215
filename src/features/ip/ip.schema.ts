import { type Static, Type } from 'typebox';
import { AttributionFields, DataAgeSchema, Nullable } from '../../api-schema.js';

export const IpQuerySchema = Type.Object({
  ip: Type.String({
    minLength: 1,
    maxLength: 64,
    description:
      'An IPv4 (dotted quad) or IPv6 address; `[...]` brackets are accepted. An IPv4-mapped IPv6 address ' +
      '(`::ffff:a.b.c.d`) is treated as the IPv4 address it carries.',
    examples: ['193.0.6.139'],
  }),
});
export type IpQuery = Static<typeof IpQuerySchema>;

export const DataAttributionSchema = Type.Object(
  {
    text: Type.String(),
    url: Type.String(),
    license: Type.Optional(Type.String()),
    license_url: Type.Optional(
      Type.String({ description: 'The licence text (CC BY 4.0 asks for its link).' }),
    ),
  },
  { description: 'A data set licence notice; show it wherever the data is shown.' },
);

const CountrySchema = Type.Object({
  code: Type.String({ description: 'ISO 3166-1 alpha-2.' }),
  name: Type.String({ description: 'English short name.' }),
});

export const EgressRegionSchema = Type.Object(
  {
    country: Nullable(Type.String(), 'ISO 3166-1 alpha-2.'),
    region: Nullable(Type.String(), 'ISO 3166-2 subdivision code, e.g. GB-EN.'),
    city: Nullable(Type.String()),
  },
  { description: "The list's hint of where the relay's users are (RFC 8805 geofeed fields)." },
);

export const RelayMatchSchema = Type.Object({
  provider: Type.Enum(['iCloud Private Relay', 'Tor']),
  prefix: Type.String({ description: 'The published prefix holding the address (a /32 or /128 for Tor).' }),
  egress_region: Nullable(EgressRegionSchema, 'Null for Tor, whose list carries no location.'),
});

const RelayListSchema = Type.Object({
  provider: Type.Enum(['iCloud Private Relay', 'Tor']),
  entries: Type.Integer({ minimum: 0, description: 'Prefixes or addresses in the copy in use.' }),
  updated_at: Nullable(
    Type.String({ format: 'date-time' }),
    'When the copy in use was last downloaded or confirmed unchanged (for a local file, its modification time).',
  ),
  source_url: Type.String(),
  loaded: Type.Boolean({ description: 'False until the first copy has loaded.' }),
});

export const IpPrivacyResponseSchema = Type.Object({
  ip: Type.String({ description: 'The address, normalized.' }),
  is_relay: Type.Boolean(),
  relay: Nullable(RelayMatchSchema),
  lists: Type.Array(RelayListSchema),
  note: Type.String(),
});
export type IpPrivacyResponse = Static<typeof IpPrivacyResponseSchema>;

export const IpGeoResponseSchema = Type.Object({
  ip: Type.String({ description: 'The address, normalized.' }),
  country: Nullable(CountrySchema),
  region: Nullable(Type.String()),
  city: Nullable(Type.String()),
  latitude: Nullable(Type.Number()),
  longitude: Nullable(Type.Number()),
  accuracy_note: Type.String(),
  timezone: Nullable(Type.String({ description: 'IANA time zone name, where the source has one.' })),
  asn: Nullable(Type.Integer({ minimum: 0 })),
  as_org: Nullable(Type.String()),
  network: Nullable(Type.String({ description: 'The prefix the location record is filed under.' })),
  is_relay: Nullable(
    Type.Boolean(),
    'Whether the address is a published relay egress (see /api/ip-privacy); null while the lists load.',
  ),
  ...AttributionFields,
  attribution: Type.Array(DataAttributionSchema),
  data: Nullable(
    DataAgeSchema,
    "The date of the location data that answered (the database's build time, or RIPEstat's snapshot); " +
      'null when the source does not say.',
  ),
});
export type IpGeoResponse = Static<typeof IpGeoResponseSchema>;

const MyIpGeoSchema = Type.Object({
  country: Nullable(CountrySchema),
  region: Nullable(Type.String()),
  city: Nullable(Type.String()),
  latitude: Nullable(Type.Number()),
  longitude: Nullable(Type.Number()),
  timezone: Nullable(Type.String()),
  network: Nullable(Type.String()),
  accuracy_note: Type.String(),
  attribution: Type.Array(DataAttributionSchema),
  data: Nullable(DataAgeSchema, "The date of the location data (the database's build time)."),
});

export const MyIpResponseSchema = Type.Object({
  ip: Type.String({
    description: 'The public address that reached the service (may be a VPN or relay egress).',
  }),
  version: Type.Enum([4, 6]),
  reverse_dns: Nullable(
    Type.String(),
    'The PTR name, looked up for at most 1.5 s; null when none or no answer.',
  ),
  geo: Nullable(
    MyIpGeoSchema,
    'From the offline database only; null for special-use addresses or no record.',
  ),
  asn: Nullable(
    Type.Object({
      number: Type.Integer({ minimum: 0 }),
      org: Nullable(Type.String()),
      attribution: Type.Array(DataAttributionSchema),
    }),
  ),
  relay: Nullable(
    Type.Object({ is_relay: Type.Boolean(), match: Nullable(RelayMatchSchema) }),
    'Relay egress classification; null while the lists load, or for a special-use address.',
  ),
  edge: Type.Object(
    {},
    {
      additionalProperties: Type.String(),
      description:
        'Allow-listed CDN headers (Cloudflare cf-*, CloudFront cloudfront-viewer-*), only when the peer is a ' +
        'proxy TRUST_PROXY trusts; empty otherwise.',
    },
  ),
  request: Type.Object({
    protocol: Type.String({
      description: 'HTTP version of the connection that reached the service: http/1.1, h2, ...',
    }),
    tls_version: Type.Optional(Type.String({ description: 'e.g. TLSv1.3, when that connection is TLS.' })),
    user_agent: Nullable(Type.String()),
    via_trusted_proxy: Type.Boolean({
      description:
        'True when the connection came from a trusted proxy: protocol and TLS then describe its hop.',
    }),
  }),
});
export type MyIpResponse = Static<typeof MyIpResponseSchema>;
