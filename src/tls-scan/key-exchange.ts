/**
 * The key-exchange parameters of a TLS ≤ 1.2 ServerKeyExchange, which
 * travels in plaintext after the Certificate: the named curve of an ECDHE
 * exchange (RFC 8422 §5.4: ECParameters, curve_type named_curve(3)) and the
 * size of a DHE exchange's prime (RFC 5246 §7.4.3: ServerDHParams, dh_p
 * first). Only the parameters are read; the signature is not checked (the
 * handshake is never completed, so nothing is trusted on it).
 */
import { createHash } from 'node:crypto';
import type { ServerHello } from './server-hello.js';

const SERVER_KEY_EXCHANGE = 12;
const NAMED_CURVE = 3;

export interface KeyExchangeParams {
  /** ECDHE: the NamedGroup code point. */
  group?: number;
  /** DHE: the prime's size in bits (its leading zero bits not counted). */
  dhBits?: number;
  /** DHE: the RFC 7919 group the prime is, or null for a prime of the server's own. */
  dhGroup?: Ffdhe | null;
}

export type Ffdhe = 'ffdhe2048' | 'ffdhe3072' | 'ffdhe4096' | 'ffdhe6144' | 'ffdhe8192';

/**
 * SHA-256 of each RFC 7919 Appendix A prime (big-endian, no leading zero): the digests, not the
 * 2 048- to 8 192-bit primes themselves, are enough to recognise one. test/unit/tls-scan checks
 * them against OpenSSL's named groups.
 */
export const FFDHE_PRIME_SHA256: Readonly<Record<string, Ffdhe>> = {
  '9cd3b7f336872f46c09428d1bbc19877a4d440512cda8d1c1cf0cd6e33698966': 'ffdhe2048',
  '0eaf67db3a839156d5013494a5318a772b5697d270d721f37f092efc69ea5a17': 'ffdhe3072',
  '4648414224ac881b3d0dc59b466f96d06a558278776807797ecf1f66ff397b3e': 'ffdhe4096',
  '227ac9066b3ddd9e193670cda2388fa884f65ba0cf98b742d1fe77a6687c79c7': 'ffdhe6144',
  '770b14efaf6f049929c523113b3fa99a8d11dab1b18af3609590122075d19833': 'ffdhe8192',
};

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
  const digest = createHash('sha256').update(prime.subarray(first)).digest('hex');
  return {
    dhBits: (prime.length - first - 1) * 8 + (32 - Math.clz32(prime[first]!)),
    dhGroup: FFDHE_PRIME_SHA256[digest] ?? null,
  };
}
