/**
 * A 200 answer whose schema has TaggedUnion properties (api-schema.ts) is serialized with
 * that schema narrowed to the branches its body names, through Fastify's own serializer
 * compiler (reply.compileSerializationSchema, cached per narrowed schema): the same
 * fast-json-stringify output, without the Ajv validation of each anyOf branch that
 * fast-json-stringify would run on every response and compile on the first.
 */
import type { FastifyInstance, preSerializationHookHandler } from 'fastify';
import fp from 'fastify-plugin';
import { taggedUnionNarrowing } from '../api-schema.js';

async function taggedUnionsPlugin(app: FastifyInstance): Promise<void> {
  app.addHook('onRoute', (route) => {
    const response = route.schema?.response as Record<string, unknown> | undefined;
    const narrow = response?.[200] === undefined ? undefined : taggedUnionNarrowing(response[200]);
    if (narrow === undefined) return;
    const serializeAsBranch: preSerializationHookHandler<unknown> = (_request, reply, payload, done) => {
      if (reply.statusCode === 200 && typeof payload === 'object' && payload !== null) {
        reply.serializer(reply.compileSerializationSchema(narrow(payload) as Record<string, unknown>, '200'));
      }
      done(null, payload);
    };
    route.preSerialization = [...[route.preSerialization ?? []].flat(), serializeAsBranch];
  });
}

export default fp(taggedUnionsPlugin, { name: 'tagged-unions' });
