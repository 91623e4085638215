import { type Static, Type } from 'typebox';

const LimitStateSchema = Type.Object({
  limit: Type.Integer({ minimum: 1 }),
  remaining: Type.Integer({ minimum: 0 }),
  reset_seconds: Type.Integer({ minimum: 0, description: 'Whole seconds until the window resets.' }),
});

const TierSchema = Type.Object({
  name: Type.Enum(['general', 'expensive']),
  limit: Type.Integer({ minimum: 1 }),
  window_seconds: Type.Integer({ minimum: 1 }),
  endpoints: Type.Optional(
    Type.Array(Type.String(), {
      description: 'Endpoints that count against this tier as well as the general one.',
    }),
  ),
});

export const ChallengeStatusSchema = Type.Object(
  {
    protection: Type.Object({
      active: Type.Boolean({
        description:
          'True when both Turnstile keys are configured; diagnostic endpoints then need a session.',
      }),
      provider: Type.Literal('turnstile'),
      site_key: Type.Optional(Type.String({ description: 'The widget site key (when active).' })),
      script_url: Type.Optional(Type.String({ description: 'The widget script (when active).' })),
    }),
    session: Type.Object({
      required: Type.Boolean({ description: 'Whether diagnostic endpoints currently need a session.' }),
      valid: Type.Boolean({ description: 'Whether this request carried a valid, unexpired session cookie.' }),
      expires_at: Type.Optional(Type.String({ format: 'date-time' })),
    }),
    rate_limit: Type.Object(
      { general: LimitStateSchema, expensive: LimitStateSchema },
      {
        description: "The caller's budget per tier, counting this request; reading it consumes nothing more.",
      },
    ),
    tiers: Type.Array(TierSchema),
  },
  { additionalProperties: true },
);

export type ChallengeStatus = Static<typeof ChallengeStatusSchema>;

export const VerifyBodySchema = Type.Object(
  {
    token: Type.String({
      minLength: 1,
      maxLength: 2048,
      description: 'The single-use token the Turnstile widget produced.',
    }),
  },
  { additionalProperties: false },
);

export const VerifyResponseSchema = Type.Object(
  {
    verified: Type.Boolean(),
    protection_active: Type.Boolean(),
    expires_at: Type.Optional(
      Type.String({
        format: 'date-time',
        description: 'When the session cookie just set stops being valid.',
      }),
    ),
    message: Type.Optional(Type.String()),
  },
  { additionalProperties: true },
);

export type VerifyResponse = Static<typeof VerifyResponseSchema>;
