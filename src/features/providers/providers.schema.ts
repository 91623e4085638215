import { type Static, Type } from 'typebox';

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
    last_success_at: Type.Union([Type.String(), Type.Null()]),
    last_failure_at: Type.Union([Type.String(), Type.Null()]),
    last_error: Type.Union([Type.String(), Type.Null()]),
    consecutive_failures: Type.Integer({ minimum: 0 }),
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
