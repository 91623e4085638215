import { type Static, Type } from 'typebox';
import { AttributionFields, Nullable, TaggedUnion } from '../../api-schema.js';

export const RdapQuerySchema = Type.Object({
  target: Type.String({
    minLength: 1,
    maxLength: 1024,
    description:
      'For type=domain a domain name (IDN accepted, converted to A-labels; trailing dot accepted; case-insensitive). ' +
      'For type=ip a public IPv4 or IPv6 address.',
    examples: ['example.com'],
  }),
  type: Type.Enum(['domain', 'ip'], { description: 'What `target` is.' }),
});
export type RdapQueryParams = Static<typeof RdapQuerySchema>;

const EventsSchema = Type.Record(Type.String(), Type.String(), {
  description:
    'RFC 9083 event dates keyed by eventAction in snake case: registration, expiration, last_changed, ' +
    'last_update_of_rdap_database, transfer, ... Dates are ISO 8601 (UTC) where the registry sent a parseable date.',
});

const AddressSchema = Type.Object({
  label: Nullable(Type.String({ description: 'The formatted address the registry gave (jCard LABEL).' })),
  lines: Type.Array(Type.String(), { description: 'Post office box, extended and street address lines.' }),
  locality: Nullable(Type.String()),
  region: Nullable(Type.String()),
  postal_code: Nullable(Type.String()),
  country: Nullable(Type.String()),
  country_code: Nullable(Type.String()),
});

const ContactSchema = Type.Object(
  {
    handle: Nullable(Type.String()),
    roles: Type.Array(Type.String()),
    kind: Nullable(Type.String({ description: 'jCard KIND: individual, org, group.' })),
    name: Nullable(Type.String({ description: 'jCard FN.' })),
    organization: Nullable(Type.String({ description: 'jCard ORG.' })),
    email: Nullable(Type.String()),
    phone: Nullable(Type.String()),
    fax: Nullable(Type.String()),
    address: Nullable(AddressSchema),
    redacted: Type.Boolean({
      description:
        'The registry marks this contact as redacted (for privacy); what it still publishes is shown as is.',
    }),
  },
  { description: 'A contact as the registry publishes it (jCard, RFC 7095); absent data is null.' },
);

const EntitiesSchema = Type.Object({
  registrar: Nullable(
    Type.Object({
      name: Nullable(Type.String()),
      iana_id: Nullable(Type.String({ description: 'From publicIds "IANA Registrar ID".' })),
      handle: Nullable(Type.String()),
      url: Type.Optional(Type.String()),
    }),
  ),
  abuse: Nullable(
    Type.Object({
      email: Nullable(Type.String()),
      phone: Nullable(Type.String()),
    }),
  ),
  registrant: Type.Optional(ContactSchema),
  administrative: Type.Optional(ContactSchema),
  technical: Type.Optional(ContactSchema),
  billing: Type.Optional(ContactSchema),
  noc: Type.Optional(ContactSchema),
});

const NoticeSchema = Type.Object({
  title: Nullable(Type.String()),
  description: Type.Array(Type.String()),
  links: Type.Array(Type.String()),
});

const RawFields = {
  raw: Nullable(
    Type.Object(
      {},
      {
        additionalProperties: true,
        description: 'The registry object as received (RFC 9083); null when it exceeded the size cap.',
      },
    ),
  ),
  raw_truncated: Type.Boolean({
    description: 'True when `raw` was left out because the object exceeded 64 KiB.',
  }),
};

export const RdapDomainSchema = Type.Object(
  {
    url: Type.String({ description: 'Where the object was fetched (after redirects).' }),
    object_class: Type.Literal('domain'),
    handle: Nullable(Type.String()),
    ldh_name: Nullable(Type.String({ description: 'Lower case, no trailing dot.' })),
    unicode_name: Nullable(Type.String()),
    status: Type.Array(Type.String(), { description: 'RFC 9083 §10.2.2 status values as published.' }),
    events: EventsSchema,
    entities: EntitiesSchema,
    nameservers: Type.Array(
      Type.Object({
        ldh_name: Type.String(),
        unicode_name: Type.Optional(Type.String()),
        ipv4: Type.Array(Type.String()),
        ipv6: Type.Array(Type.String()),
      }),
    ),
    secure_dns: Nullable(
      Type.Object({
        delegation_signed: Nullable(Type.Boolean()),
        zone_signed: Type.Optional(Type.Boolean()),
        ds: Type.Optional(
          Type.Array(
            Type.Object({
              key_tag: Nullable(Type.Integer()),
              algorithm: Nullable(Type.Integer()),
              digest_type: Nullable(Type.Integer()),
              digest: Nullable(Type.String()),
            }),
          ),
        ),
      }),
    ),
    notices: Type.Array(NoticeSchema),
    ...RawFields,
  },
  { description: 'An RDAP domain object (RFC 9083 §5.3), normalized.' },
);
export type RdapDomain = Static<typeof RdapDomainSchema>;

export const RdapNetworkSchema = Type.Object(
  {
    url: Type.String({ description: 'Where the object was fetched (after redirects).' }),
    object_class: Type.Literal('ip network'),
    handle: Nullable(Type.String()),
    name: Nullable(Type.String()),
    type: Nullable(Type.String({ description: 'The RIR allocation type, e.g. "DIRECT ALLOCATION".' })),
    start_address: Nullable(Type.String()),
    end_address: Nullable(Type.String()),
    cidrs: Type.Array(Type.String(), {
      description:
        'The network as CIDR prefixes: from the cidr0 extension, else computed from the address range.',
    }),
    ip_version: Nullable(Type.Enum(['v4', 'v6'])),
    country: Nullable(Type.String()),
    parent_handle: Nullable(Type.String()),
    status: Type.Array(Type.String()),
    events: EventsSchema,
    entities: EntitiesSchema,
    notices: Type.Array(NoticeSchema),
    ...RawFields,
  },
  { description: 'An RDAP IP network object (RFC 9083 §5.4), normalized.' },
);
export type RdapNetwork = Static<typeof RdapNetworkSchema>;

export type RdapEntities = Static<typeof EntitiesSchema>;
export type RdapContact = Static<typeof ContactSchema>;
export type RdapNotices = Static<typeof NoticeSchema>[];

export const RdapResponseSchema = Type.Object({
  target: Type.String({ description: 'The normalized target: A-label domain name or canonical IP address.' }),
  type: Type.Enum(['domain', 'ip']),
  registry: TaggedUnion('object_class', [RdapDomainSchema, RdapNetworkSchema], {
    description: 'The object from the registry (or RIR) that holds it.',
  }),
  registrar: Nullable(RdapDomainSchema),
  notes: Type.Array(Type.String(), {
    description: 'What could not be done, e.g. why `registrar` is null when the registry pointed to one.',
  }),
  ...AttributionFields,
});
export type RdapResponse = Static<typeof RdapResponseSchema>;
