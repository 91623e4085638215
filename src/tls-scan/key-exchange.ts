/**
 * The key-exchange parameters of a TLS ≤ 1.2 ServerKeyExchange, which
 * travels in plaintext after the Certificate: the named curve of an ECDHE
 * exchange (RFC 8422 §5.4: ECParameters, curve_type named_curve(3)) and the
 * size of a DHE exchange's prime (RFC 5246 §7.4.3: ServerDHParams, dh_p
 * first). Only the parameters are read; the signature is not checked (the
 * handshake is never completed, so nothing is trusted on it).
 */
import type { ServerHello } from './server-hello.js';

const SERVER_KEY_EXCHANGE = 12;
const NAMED_CURVE = 3;

export interface KeyExchangeParams {
  /** ECDHE: the NamedGroup code point. */
  group?: number;
  /** DHE: the prime's size in bits (its leading zero bits not counted). */
  dhBits?: number;
}

/** The parameters of `hello`'s ServerKeyExchange, or undefined when there is none or it is malformed. */
export function readServerKeyExchange(
  hello: ServerHello,
  kind: 'ECDHE' | 'DHE',
): KeyExchangeParams | undefined {
  const body = hello.following.find((m) => m.type === SERVER_KEY_EXCHANGE)?.body;
  if (!body) return undefined;
  if (kind === 'ECDHE') {
    if (body.length < 3 || body[0] !== NAMED_CURVE) return undefined;
    return { group: body.readUInt16BE(1) };
  }
  if (body.length < 2) return undefined;
  const length = body.readUInt16BE(0);
  if (length === 0 || body.length < 2 + length) return undefined;
  const prime = body.subarray(2, 2 + length);
  let first = 0;
  while (first < prime.length && prime[first] === 0) first += 1;
  if (first === prime.length) return undefined;
  return { dhBits: (prime.length - first - 1) * 8 + (32 - Math.clz32(prime[first]!)) };
}
