/**
 * Schemas every feature shares. One TypeBox schema is a route's validation,
 * its serialization and its part of /openapi.json.
 */
import { type Static, type TSchema, type TUnsafe, Type } from 'typebox';

export const ProviderAttemptSchema = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    status: Type.Enum(['ok', 'no_data', 'failed'], {
      description:
        '`ok`: it answered; `no_data`: it answered that it holds nothing for this (the next provider was ' +
        'asked; not a failure); `failed`: an operational failure, described by `error`.',
    }),
    error: Type.Optional(Type.String()),
  },
  { description: 'One provider consulted for this answer, in order.' },
);

export const ErrorSchema = Type.Object(
  {
    error: Type.String({ description: 'What went wrong, naming the parameter for bad input.' }),
    code: Type.Optional(Type.String({ description: 'Machine-readable code, e.g. challenge_required.' })),
    providers_tried: Type.Optional(Type.Array(ProviderAttemptSchema)),
  },
  { additionalProperties: false },
);

/** Attribution carried by every provider-backed answer. */
export const AttributionFields = {
  source: Type.String({ description: 'Name of the provider that answered.' }),
  source_id: Type.String({ description: 'Id of the provider that answered (see /api/providers).' }),
  providers_tried: Type.Array(ProviderAttemptSchema),
};

/** The date of a data set behind an answer or a provider (providers/ip/data-age.ts). */
export const DataAgeSchema = Type.Object(
  {
    built_at: Type.String({ format: 'date-time', description: 'When the data set was built.' }),
    age_days: Type.Integer({ minimum: 0, description: 'Whole days since then.' }),
    stale: Type.Boolean({
      description:
        'True when older than 60 days: DB-IP Lite is released monthly, so the copy has missed a release.',
    }),
  },
  { description: 'How old the data is.' },
);

const ERROR_TEXT: Record<number, string> = {
  400: 'Invalid or missing input; `error` names the parameter and why.',
  403: 'Challenge required (`code` = `challenge_required`) or verification rejected.',
  404: 'Not found.',
  429: 'Rate limit exceeded; see `Retry-After` (seconds).',
  502: 'Every upstream provider failed; `providers_tried` says how. Never cached.',
  503: 'Temporarily unavailable; see `Retry-After` where given.',
};

/** Response schemas for the error statuses a route can return. */
export function errorResponses(...statuses: number[]): Record<number, TSchema> {
  const out: Record<number, TSchema> = {};
  for (const status of statuses)
    out[status] = { ...ErrorSchema, description: ERROR_TEXT[status] ?? 'Error.' };
  return out;
}

/**
 * `schema` or null, as a type array (or an enum with null) rather than an
 * anyOf: fast-json-stringify serializes a type array natively, while an
 * anyOf costs an Ajv compile per branch on first use (email.schema.ts).
 */
export function Nullable<T extends TSchema>(schema: T): TUnsafe<Static<T> | null> {
  const raw = schema as unknown as { type?: string; enum?: unknown[] };
  if (raw.enum) return Type.Unsafe<Static<T> | null>({ ...schema, enum: [...raw.enum, null] });
  if (typeof raw.type !== 'string') throw new TypeError('Nullable needs a schema with one type or an enum');
  return Type.Unsafe<Static<T> | null>({ ...schema, type: [raw.type, 'null'] });
}
