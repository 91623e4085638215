import { type Static, Type } from 'typebox';
import { DataAgeSchema, Nullable } from '../../api-schema.js';

const ProviderSchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  capabilities: Type.Array(Type.String()),
  docs_url: Type.String(),
  access: Type.Enum(['none', 'api_key']),
  configured: Type.Boolean({
    description: 'false when it needs a key that is not set; it is then never tried.',
  }),
  endpoint: Type.String(),
  roles: Type.Record(Type.String(), Type.Enum(['primary', 'fallback']), {
    description:
      'Role per capability: the primary is asked first, a fallback only after an operational failure.',
  }),
  status: Type.Object({
    last_success_at: Nullable(Type.String()),
    last_failure_at: Nullable(Type.String()),
    last_error: Nullable(Type.String()),
    consecutive_failures: Type.Integer({ minimum: 0 }),
  }),
  quota: Type.Optional(
    Type.Object(
      {
        limit: Type.Integer({ minimum: 0, description: 'Units (Globalping: tests) allowed per window.' }),
        remaining: Type.Integer({ minimum: 0, description: 'Units left in the current window.' }),
        reset_at: Nullable(
          Type.String({ format: 'date-time' }),
          'When the window resets; null once it has reset (nothing spent in the next one yet).',
        ),
        observed_at: Type.String({
          format: 'date-time',
          description: 'When the upstream last reported these figures to this instance.',
        }),
      },
      {
        description:
          "The upstream's own account of this service's quota, from its last answer (Globalping: tests per " +
          'hour, one per probe, so a ten-country measurement spends 10). Absent until it has reported one.',
      },
    ),
  ),
  data: Type.Optional({
    ...DataAgeSchema,
    description:
      'For a provider that answers from its own data set (the GeoIP database): how old the data in use is. ' +
      'Present once the data is open (right after start-up).',
  }),
});

export const ProvidersResponseSchema = Type.Object(
  {
    providers: Type.Array(ProviderSchema),
    policy: Type.String(),
  },
  { additionalProperties: true },
);

export type ProvidersResponse = Static<typeof ProvidersResponseSchema>;
