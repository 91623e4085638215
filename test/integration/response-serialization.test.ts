/**
 * How answers are serialized: fast-json-stringify, from each route's response schema, never
 * through Ajv. An anyOf in a response schema makes fast-json-stringify validate the value
 * against each branch with Ajv on every response and compile the branch on the first one
 * (RDAP's registry: ~200 ms and ~20 MB of garbage that stayed as heap, docs/performance.md).
 * So a nullable is a type array (Nullable), and a union of objects is a TaggedUnion, which
 * plugins/tagged-unions.ts serializes as the branch the value names.
 */
import { Ajv } from 'ajv';
import { Type } from 'typebox';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Nullable, TaggedUnion } from '../../src/api-schema.js';
import { buildTestApp } from '../helper.js';

afterEach(() => {
  vi.restoreAllMocks();
});

/** Every anyOf in a 200 response of the document, by its JSON pointer, with its discriminator if any. */
function unionsIn(doc: { paths: Record<string, Record<string, { responses?: Record<string, unknown> }>> }) {
  const found: { at: string; discriminator: unknown }[] = [];
  const walk = (node: unknown, at: string): void => {
    if (Array.isArray(node)) {
      for (const [i, v] of node.entries()) walk(v, `${at}/${i}`);
    } else if (node !== null && typeof node === 'object') {
      const record = node as Record<string, unknown>;
      if ('anyOf' in record || 'oneOf' in record) found.push({ at, discriminator: record.discriminator });
      for (const [key, value] of Object.entries(record)) walk(value, `${at}/${key}`);
    }
  };
  for (const [path, operations] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(operations))
      walk(op.responses?.['200'], `${method} ${path} 200`);
  }
  return found;
}

describe('response schemas', () => {
  it('have no anyOf but tagged unions: every nullable is a type array', async () => {
    const app = await buildTestApp();
    const unions = unionsIn((await app.inject('/openapi.json')).json());
    expect(unions.map((u) => u.at).sort()).toEqual([
      'get /api/inspect 200/content/application/json/schema/properties/tls',
      'get /api/rdap 200/content/application/json/schema/properties/registry',
      'get /api/tls 200/content/application/json/schema/properties/tls',
      'get /api/tls-scan 200/content/application/json/schema/properties/scan',
    ]);
    for (const union of unions)
      expect(union.discriminator, union.at).toMatchObject({ propertyName: expect.any(String) });
  });
});

describe('a TaggedUnion', () => {
  const Cat = Type.Object(
    { kind: Type.Literal('cat'), lives: Type.Integer(), name: Nullable(Type.String()) },
    { additionalProperties: false },
  );
  const Dog = Type.Object({ kind: Type.Literal('dog'), tricks: Type.Array(Type.String()) });
  const Answer = Type.Object({
    id: Type.String(),
    pet: TaggedUnion('kind', [Cat, Dog]),
    note: Type.Optional(Type.String()),
  });

  async function app() {
    return buildTestApp({
      extend: (base) => {
        base.get('/api/pet', { schema: { response: { 200: Answer } } }, async (request) => {
          const kind = (request.query as { kind: string }).kind;
          return kind === 'cat'
            ? { id: '1', pet: { kind: 'cat', lives: 9, name: null, extra: 'not in the schema' } }
            : { id: '2', pet: { kind: 'dog', tricks: ['sit'], extra: 'not in the schema' }, note: 'n' };
        });
      },
    });
  }

  it('is serialized as the branch its tag names, each branch with its own fields only', async () => {
    const server = await app();
    expect((await server.inject('/api/pet?kind=cat')).json()).toEqual({
      id: '1',
      pet: { kind: 'cat', lives: 9, name: null },
    });
    // The dog branch declares no additionalProperties: false, so fast-json-stringify keeps only the declared ones.
    expect((await server.inject('/api/pet?kind=dog')).json()).toEqual({
      id: '2',
      pet: { kind: 'dog', tricks: ['sit'] },
      note: 'n',
    });
  });

  it('never makes fast-json-stringify ask Ajv for a branch', async () => {
    const server = await app();
    const getSchema = vi.spyOn(Ajv.prototype, 'getSchema');
    for (const kind of ['cat', 'dog', 'cat'])
      expect((await server.inject(`/api/pet?kind=${kind}`)).statusCode).toBe(200);
    const refs = getSchema.mock.calls.map((call) => String(call[0]));
    expect(refs.filter((ref) => ref.includes('anyOf'))).toEqual([]);
  });

  it('refuses a branch without a constant tag', () => {
    expect(() => TaggedUnion('kind', [Cat, Type.Object({ kind: Type.String() })])).toThrow(/constant kind/);
  });
});
