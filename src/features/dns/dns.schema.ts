import { type Static, Type } from 'typebox';
import { AttributionFields } from '../../api-schema.js';
import { DNS_API_TYPES } from './dns-target.js';

export const DnsQuerySchema = Type.Object({
  target: Type.String({
    minLength: 1,
    maxLength: 1024,
    description:
      'A domain name (IDN accepted, converted to A-labels; trailing dot accepted), or for type=PTR a public IPv4 or IPv6 address.',
    examples: ['example.com'],
  }),
  type: Type.Optional(
    Type.Enum([...DNS_API_TYPES], {
      default: 'A',
      description: 'Record type, case-insensitive. Default A.',
    }),
  ),
});
export type DnsQuery = Static<typeof DnsQuerySchema>;

const AnswerSchema = Type.Object({
  name: Type.String(),
  type: Type.String(),
  ttl: Type.Integer({ minimum: 0 }),
  data: Type.String({ description: 'Record data in presentation format; names without the trailing dot.' }),
});

const RecordSchema = Type.Object(
  { ttl: Type.Integer({ minimum: 0 }) },
  {
    additionalProperties: true,
    description:
      'A/AAAA {address}, CNAME {target}, MX {priority, exchange}, TXT {text, strings}, NS {host}, ' +
      'SOA {mname, rname, serial, refresh, retry, expire, minimum}, CAA {flags, tag, value, critical}, ' +
      'SRV {priority, weight, port, target}, PTR {host}; each with ttl.',
  },
);

export const DnsResponseSchema = Type.Object({
  target: Type.String({ description: 'The name asked (normalized); for PTR the address as given.' }),
  query_name: Type.String({ description: 'The name sent on the wire (the reverse name for PTR).' }),
  type: Type.String(),
  rcode: Type.String({ description: 'DNS response code: NOERROR (also for an empty answer) or NXDOMAIN.' }),
  authenticated_data: Type.Boolean({
    description:
      "The AD flag as the resolver that answered set it: that resolver's DNSSEC verdict, not netdiag's (it is as " +
      'trustworthy as the path to the resolver, RFC 4035 §4.9.3). GET /api/dnssec validates the name itself.',
  }),
  flags: Type.Object(
    {
      aa: Type.Boolean({ description: 'Authoritative answer.' }),
      tc: Type.Boolean({ description: 'Truncated (the client then retried over TCP).' }),
      rd: Type.Boolean(),
      ra: Type.Boolean({ description: 'Recursion available.' }),
      ad: Type.Boolean({ description: 'Authentic data, as the resolver set it (see authenticated_data).' }),
      cd: Type.Boolean(),
    },
    { description: 'Header flags of the response as received.' },
  ),
  answers: Type.Array(AnswerSchema, {
    description: 'The answer section, CNAME chain included; MX rows by preference, then name.',
  }),
  records: Type.Array(RecordSchema, {
    description: 'Only the records of the asked type, normalized per type (MX by preference, then name).',
  }),
  extended_errors: Type.Optional(
    Type.Array(
      Type.Object({ code: Type.Integer(), name: Type.String(), text: Type.Optional(Type.String()) }),
      { description: 'Extended DNS Errors (RFC 8914) the resolver attached.' },
    ),
  ),
  ...AttributionFields,
});
export type DnsResponse = Static<typeof DnsResponseSchema>;
