import { type Static, Type } from 'typebox';
import { AttributionFields, Nullable } from '../../api-schema.js';
import { GLOBAL_DNS_TYPES } from '../../providers/global-dns/index.js';

export const GlobalDnsBodySchema = Type.Object(
  {
    target: Type.String({
      minLength: 1,
      maxLength: 1024,
      description:
        'A domain name (IDN accepted, converted to A-labels; trailing dot accepted). Not an IP address.',
      examples: ['example.com'],
    }),
    type: Type.Enum([...GLOBAL_DNS_TYPES], {
      description: 'Record type, case-insensitive. SRV and PTR are not offered by the global measurement.',
    }),
  },
  { additionalProperties: false },
);
export type GlobalDnsBody = Static<typeof GlobalDnsBodySchema>;

const AnswerSchema = Type.Object({
  name: Type.String({ description: 'Owner name, without the trailing dot.' }),
  type: Type.String(),
  ttl: Type.Integer({
    minimum: 0,
    description: 'As the probe’s resolver returned it (a cache counts it down).',
  }),
  value: Type.String({ description: 'Record data in presentation format; names without the trailing dot.' }),
});

const ResultSchema = Type.Object({
  country: Type.String({ description: 'ISO 3166-1 alpha-2 code of the country measured.' }),
  city: Nullable(Type.String(), 'City of the probe.'),
  continent: Nullable(Type.String(), 'Continent code of the probe (AF, AN, AS, EU, NA, OC, SA).'),
  asn: Nullable(Type.Integer(), 'Autonomous system the probe sits in.'),
  network: Nullable(Type.String(), 'Network (operator) name of the probe.'),
  resolver: Nullable(Type.String(), 'Resolver the probe asked: an address, or "private" for a LAN resolver.'),
  status: Type.Enum(['finished', 'failed', 'timeout', 'no_probe'], {
    description:
      'finished: the resolver answered (any rcode); failed: no DNS answer (resolver unreachable, probe offline); ' +
      'timeout: still running at the deadline; no_probe: no probe available in this country (unmeasured).',
  }),
  rcode: Nullable(
    Type.String(),
    'DNS response code (NOERROR, NXDOMAIN, SERVFAIL, ...) when status is finished.',
  ),
  answers: Type.Array(AnswerSchema, { description: 'The answer section, CNAME chain included.' }),
  time_ms: Nullable(Type.Number({ minimum: 0 }), 'Query time reported by the probe.'),
});

const AnswerSetSchema = Type.Object({
  rcode: Type.String(),
  values: Type.Array(Type.String(), {
    description: 'Distinct values of the records of the asked type, canonical and sorted (no TTL).',
  }),
  countries: Type.Array(Type.String(), { description: 'Countries that saw exactly this set.' }),
});

const SummarySchema = Type.Object(
  {
    measured: Type.Integer({ minimum: 0, description: 'Countries where a probe ran the query.' }),
    answered: Type.Integer({ minimum: 0, description: 'Countries whose probe got a DNS response.' }),
    unmeasured: Type.Array(Type.String(), { description: 'Countries with no probe available.' }),
    distinct_answer_sets: Type.Integer({ minimum: 0 }),
    consistent: Type.Boolean({
      description: 'At least one country answered and every country that answered saw the same answer set.',
    }),
    answer_sets: Type.Array(AnswerSetSchema, { description: 'Most widely seen first.' }),
  },
  {
    description:
      'Does the whole world see the same answer (propagation, geo-DNS, split horizon)? Answer sets are ' +
      'compared ignoring TTL, record order, name case and trailing dots; the rcode is part of the set.',
  },
);

export const GlobalDnsResponseSchema = Type.Object(
  {
    target: Type.String({ description: 'The name asked (normalized).' }),
    type: Type.String(),
    measurement_id: Nullable(
      Type.String(),
      'The provider’s measurement id; null when no probe was available in any country (nothing was created).',
    ),
    measured_at: Type.String({ format: 'date-time', description: 'When the results were read.' }),
    reused: Type.Boolean({
      description:
        'True when this answer is an identical measurement made in the last 60 s (or still running for another ' +
        'caller) rather than a new one.',
    }),
    complete: Type.Boolean({
      description: 'False when the deadline passed before every probe reported; those probes say timeout.',
    }),
    countries_requested: Type.Array(Type.String(), {
      description: 'The ten configured countries, in order.',
    }),
    results: Type.Array(ResultSchema, { description: 'One per requested country, in the same order.' }),
    summary: SummarySchema,
    ...AttributionFields,
  },
  {
    // Free-form per the contract (no additionalProperties: false), but only these fields are serialized.
    description: 'A DNS measurement from the configured countries, with a consistency summary.',
  },
);
export type GlobalDnsResponse = Static<typeof GlobalDnsResponseSchema>;
