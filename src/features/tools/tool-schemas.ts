/**
 * A tool's input and output schemas, read from its route's TypeBox schemas as plain JSON
 * Schema. The input is the route's query (or body) schema, with what the tool layer adds on
 * top of the REST contract: parameters it fills in itself (defaults.ts) are not required, and
 * enumerations the route folds to one case are offered in both. The output is the route's
 * 200 response schema, which the tool's `structuredContent` (the route's JSON) conforms to.
 */
import { DEFAULTED } from './defaults.js';

/** A JSON Schema object (what TypeBox builds, without its symbol keys). */
export type JsonSchemaObject = {
  type: 'object';
  properties?: Record<string, object>;
  required?: string[];
} & Record<string, unknown>;

const NO_INPUT: JsonSchemaObject = { type: 'object', properties: {}, additionalProperties: false };

/**
 * TypeBox schemas carry symbol-keyed metadata; tool clients get plain JSON. OpenAPI's
 * `discriminator` (on TaggedUnion's anyOf) is no JSON Schema keyword: a validator is left
 * the anyOf it describes.
 */
function plainJson(schema: unknown): Record<string, unknown> {
  return JSON.parse(
    JSON.stringify(schema, function (this: Record<string, unknown>, key, value) {
      return key === 'discriminator' && Array.isArray(this.anyOf) ? undefined : value;
    }),
  ) as Record<string, unknown>;
}

function isObjectSchema(schema: Record<string, unknown>): schema is JsonSchemaObject {
  return schema.type === 'object';
}

/** Both cases of each value, the route's own spelling first. */
function bothCases(values: readonly unknown[]): unknown[] {
  const out = new Set<unknown>(values);
  for (const value of values) {
    if (typeof value !== 'string') continue;
    out.add(value.toUpperCase());
    out.add(value.toLowerCase());
  }
  return [...out];
}

export function toolInputSchema(
  tool: { readonly name: string; readonly caseInsensitive?: readonly string[] },
  routeInput: unknown,
): JsonSchemaObject {
  if (routeInput === undefined) return NO_INPUT;
  const schema = plainJson(routeInput);
  if (!isObjectSchema(schema)) throw new TypeError(`${tool.name}: the route's input schema is no object`);
  const properties = (schema.properties ?? {}) as Record<string, Record<string, unknown>>;
  for (const name of tool.caseInsensitive ?? []) {
    const property = properties[name];
    if (!Array.isArray(property?.enum)) throw new TypeError(`${tool.name}: ${name} is no enumeration`);
    property.enum = bothCases(property.enum);
  }
  const defaulted = DEFAULTED[tool.name];
  const property = defaulted && properties[defaulted.name];
  if (defaulted !== undefined && property !== undefined) {
    schema.required = schema.required?.filter((name) => name !== defaulted.name);
    if (defaulted.default !== undefined) property.default = defaulted.default;
    property.description = [property.description, defaulted.rule].filter(Boolean).join(' ');
  }
  return schema;
}

/**
 * The route's 200 response schema; undefined when it has none, or one that is not an object
 * (MCP requires an object at the top of an output schema).
 */
export function toolOutputSchema(responses: unknown): JsonSchemaObject | undefined {
  const ok = (responses as Record<string, unknown> | undefined)?.[200];
  if (ok === undefined) return undefined;
  const schema = plainJson(ok);
  return isObjectSchema(schema) ? schema : undefined;
}
