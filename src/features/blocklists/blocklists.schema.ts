/**
 * GET /api/blocklists: is this address or domain listed, on which lists, and
 * can the answer be trusted (docs/blocklists.md).
 */
import { type Static, Type } from 'typebox';
import { AttributionFields, Nullable } from '../../api-schema.js';

export const BlocklistsQuerySchema = Type.Object({
  ip: Type.Optional(
    Type.String({
      maxLength: 64,
      description: 'A public IPv4 or IPv6 address, checked against the IP lists.',
      examples: ['192.0.2.1'],
    }),
  ),
  domain: Type.Optional(
    Type.String({
      maxLength: 253,
      description:
        'A domain, checked against the domain lists (RHSBL), and its MX hosts’ addresses against the IP lists.',
      examples: ['example.com'],
    }),
  ),
});
export type BlocklistsQuery = Static<typeof BlocklistsQuerySchema>;

export const LIST_STATUSES = ['listed', 'not_listed', 'refused', 'error', 'broken'] as const;
export type ListStatus = (typeof LIST_STATUSES)[number];

export const ListResultSchema = Type.Object(
  {
    zone: Type.String({ description: 'The list’s zone (a keyed list’s without its key).' }),
    name: Type.String(),
    kind: Type.Enum(['ip4', 'ip6', 'domain']),
    status: Type.Enum([...LIST_STATUSES], {
      description:
        'listed: the list lists it (code, meaning, reason); not_listed; refused: the list declined to answer us ' +
        '(a refusal code, a key missing) — never a listing; error: no answer (timeout, SERVFAIL); broken: the list ' +
        'fails its RFC 5782 test points or lists everything, and its answer is not counted.',
    }),
    code: Type.Optional(Type.String({ description: 'The A record answered (127.0.0.x).' })),
    codes: Type.Optional(
      Type.Array(Type.String(), { description: 'Every A record, when there were several.' }),
    ),
    meaning: Type.Optional(
      Type.String({ description: 'The list’s own meaning of the code (or of the refusal).' }),
    ),
    reason: Type.Optional(Type.String({ description: 'The TXT record the list gives for a listing.' })),
    delist_url: Type.Optional(Type.String()),
    query: Type.String({ description: 'The name asked (the key of a keyed list replaced by {key}).' }),
    ttl: Type.Optional(
      Type.Integer({ description: 'Seconds the answer may be reused (its TTL, or the negative TTL).' }),
    ),
  },
  { additionalProperties: false },
);
export type ListResult = Static<typeof ListResultSchema>;

const AddressResultSchema = Type.Object(
  {
    address: Type.String(),
    listed_count: Type.Integer({ minimum: 0 }),
    lists: Type.Array(ListResultSchema),
  },
  { additionalProperties: false },
);

export const BlocklistsResponseSchema = Type.Object(
  {
    subject: Type.Object(
      {
        kind: Type.Enum(['ip', 'domain']),
        value: Type.String({ description: 'The address (canonical) or the domain (A-labels).' }),
      },
      { additionalProperties: false },
    ),
    listed_count: Type.Integer({
      minimum: 0,
      description: 'How many usable lists list the subject (refusals, errors and broken lists left out).',
    }),
    lists: Type.Array(ListResultSchema, {
      description: 'One entry per enabled list of the subject’s kind, listings first.',
    }),
    mx: Nullable(
      Type.Array(
        Type.Object(
          { host: Type.String(), addresses: Type.Array(AddressResultSchema) },
          { additionalProperties: false },
        ),
      ),
      'For a domain: its MX hosts’ addresses against the IP lists; null for an address.',
    ),
    summary: Type.String({ description: 'What a person reads first: listed where, and what to do.' }),
    checked_at: Type.String({ format: 'date-time' }),
    ...AttributionFields,
  },
  { additionalProperties: false },
);
export type BlocklistsResponse = Static<typeof BlocklistsResponseSchema>;
