/**
 * Schemas every feature shares. One TypeBox schema is a route's validation,
 * its serialization and its part of /openapi.json.
 */
import {
  type Static,
  type TObject,
  type TSchema,
  type TSchemaOptions,
  type TUnion,
  type TUnsafe,
  Type,
} from 'typebox';

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
 * anyOf. fast-json-stringify serializes a type array with a `typeof` test,
 * while every anyOf costs an Ajv validation of the value on each response and
 * an Ajv compile per branch on the first one: a nested anyOf compiles again
 * for every enclosing branch, and the RDAP schema's 90 of them made the first
 * lookups of a process allocate tens of megabytes of garbage that stayed as
 * heap (docs/performance.md). `description` replaces the schema's own.
 */
export function Nullable<T extends TSchema>(schema: T, description?: string): TUnsafe<Static<T> | null> {
  const raw = schema as unknown as { type?: unknown; enum?: unknown[] };
  const described = description === undefined ? {} : { description };
  if (raw.enum) return Type.Unsafe<Static<T> | null>({ ...schema, enum: [...raw.enum, null], ...described });
  if (typeof raw.type !== 'string') throw new TypeError('Nullable needs a schema with one type or an enum');
  return Type.Unsafe<Static<T> | null>({ ...schema, type: [raw.type, 'null'], ...described });
}

/**
 * A union of object schemas told apart by one constant property, `tag`: what the OpenAPI
 * document (with its `discriminator`) and the TypeScript type see. A response is serialized
 * as the one branch its value names (plugins/tagged-unions.ts), never as the anyOf:
 * fast-json-stringify would validate the value against the branches with Ajv on every
 * response, and compile them on the first (for RDAP's registry ~200 ms, and ~20 MB of
 * garbage that stayed as heap).
 */
export function TaggedUnion<T extends TObject[]>(
  tag: string,
  branches: [...T],
  options: TSchemaOptions = {},
): TUnion<T> {
  for (const branch of branches) {
    const value = (branch.properties[tag] as { const?: unknown } | undefined)?.const;
    if (typeof value !== 'string')
      throw new TypeError(`every branch of a TaggedUnion needs a constant ${tag}`);
  }
  return Type.Union(branches, { ...options, discriminator: { propertyName: tag } });
}

/**
 * For an object schema with TaggedUnion properties, the schema a given value serializes as:
 * each such property narrowed to the branch the value's tag names (an absent property, or an
 * unknown tag, keeps the union). Undefined for a schema without any.
 */
export function taggedUnionNarrowing(schema: unknown): ((value: unknown) => object) | undefined {
  const properties = (schema as { properties?: Record<string, unknown> }).properties;
  if (properties === undefined) return undefined;
  const tagged = new Map<string, { tag: string; branches: Map<unknown, object> }>();
  for (const [key, property] of Object.entries(properties)) {
    const union = property as { anyOf?: { properties: Record<string, { const?: unknown }> }[] };
    const tag = (property as { discriminator?: { propertyName?: string } }).discriminator?.propertyName;
    if (tag === undefined || union.anyOf === undefined) continue;
    tagged.set(key, { tag, branches: new Map(union.anyOf.map((b) => [b.properties[tag]?.const, b])) });
  }
  if (tagged.size === 0) return undefined;
  // One narrowed schema per combination of tags, made once: the serializer compiled for a schema is
  // cached by its identity (reply.compileSerializationSchema).
  const narrowed = new Map<string, object>();
  return (value) => {
    const picks: [string, object][] = [];
    let id = '';
    for (const [key, { tag, branches }] of tagged) {
      const tagValue = (value as Record<string, Record<string, unknown> | undefined>)[key]?.[tag];
      const branch = branches.get(tagValue);
      if (branch !== undefined) picks.push([key, branch]);
      id += `${key}=${branch === undefined ? '' : String(tagValue)};`;
    }
    let out = narrowed.get(id);
    if (out === undefined) {
      out = { ...(schema as object), properties: { ...properties, ...Object.fromEntries(picks) } };
      narrowed.set(id, out);
    }
    return out;
  };
}
