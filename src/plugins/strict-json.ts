/**
 * JSON request bodies, parsed strictly. Beyond well-formed JSON, a body may
 * not repeat a name within one object, nor use the prototype keys:
 *
 * - duplicate names: RFC 8259 §4 leaves their meaning to each parser (most
 *   keep the last, some the first), so `{"target": "a", "target": "b"}`
 *   can mean one thing to a proxy or WAF and another to us; I-JSON
 *   (RFC 7493 §2.3) forbids them;
 * - `__proto__`, and `constructor` holding `prototype`: the prototype-
 *   poisoning shapes Fastify's own parser (secure-json-parse) refuses too.
 *
 * Each is a 400 naming the key, instead of Fastify's "not valid JSON" for
 * a body that is valid JSON.
 */
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { AppError } from '../errors.js';

/** Why `text` (valid JSON) is refused, or undefined when it is fine. */
export function refusedKey(text: string): string | undefined {
  /** Per open container: the names seen (objects) or null (arrays), and the name that holds it. */
  const stack: { names: Set<string> | null; heldBy: string | undefined }[] = [];
  let expectName = false;
  let lastName: string | undefined;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22 /* " */) {
      let j = i + 1;
      while (text.charCodeAt(j) !== 0x22) j += text.charCodeAt(j) === 0x5c /* \ */ ? 2 : 1;
      const top = stack[stack.length - 1];
      if (expectName && top?.names) {
        const name = JSON.parse(text.slice(i, j + 1)) as string;
        if (name === '__proto__') return 'the key "__proto__" is not accepted';
        if (name === 'prototype' && top.heldBy === 'constructor')
          return 'the key "constructor" may not hold "prototype"';
        if (top.names.has(name))
          return `the key "${name}" appears twice in one object (names must be unique, RFC 7493 §2.3)`;
        top.names.add(name);
        lastName = name;
        expectName = false;
      }
      i = j;
    } else if (c === 0x7b /* { */) {
      stack.push({ names: new Set(), heldBy: lastName });
      expectName = true;
    } else if (c === 0x5b /* [ */) {
      stack.push({ names: null, heldBy: lastName });
      lastName = undefined;
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      stack.pop();
      lastName = undefined;
    } else if (c === 0x2c /* , */) {
      expectName = stack[stack.length - 1]?.names != null;
      lastName = undefined;
    }
  }
  return undefined;
}

async function strictJsonPlugin(app: FastifyInstance): Promise<void> {
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    const text = body as string;
    if (text.trim() === '') {
      return done(
        new AppError(400, 'bad_request', 'body must not be empty when Content-Type is application/json'),
        undefined,
      );
    }
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      return done(new AppError(400, 'bad_request', 'body is not valid JSON'), undefined);
    }
    const refused = refusedKey(text);
    if (refused !== undefined)
      return done(new AppError(400, 'bad_request', `body refused: ${refused}`), undefined);
    done(null, value);
  });
}

export default fp(strictJsonPlugin, { name: 'strict-json' });
