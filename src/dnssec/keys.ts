/**
 * DNSKEY records: their key tag (RFC 4034 Appendix B), flags, and public key as
 * a node:crypto KeyObject for the algorithms this validator verifies:
 * RSA (5, 7, 8, 10; key format RFC 3110 §2), ECDSA P-256 and P-384 (13, 14;
 * RFC 6605 §4), Ed25519 and Ed448 (15, 16; RFC 8080 §3). Anything else is
 * reported as unsupported, never thrown.
 */
import { createPublicKey, type KeyObject } from 'node:crypto';
import { algorithmName, isAlgorithmSupported } from './algorithms.js';
import type { DnskeyData } from './types.js';
import { rdataWire } from './wire.js';

/** DNSKEY flag bits (RFC 4034 §2.1.1, RFC 5011 §7). dns-packet's own constants have them reversed. */
export const DNSKEY_FLAG_ZONE = 0x0100;
export const DNSKEY_FLAG_REVOKE = 0x0080;
export const DNSKEY_FLAG_SEP = 0x0001;

/** The DNSKEY RDATA in wire form (flags, protocol 3, algorithm, key). */
export function dnskeyRdata(key: DnskeyData): Buffer {
  return rdataWire('DNSKEY', key);
}

/** The key tag of RFC 4034 Appendix B (the ones' complement sum; algorithm 1 its own rule). */
export function keyTag(key: DnskeyData): number {
  const rdata = dnskeyRdata(key);
  if (key.algorithm === 1) {
    // RFC 4034 B.1: RSA/MD5 takes the modulus' least significant 16 bits but one octet.
    return rdata.length < 4 ? 0 : rdata.readUInt16BE(rdata.length - 3);
  }
  let sum = 0;
  for (let i = 0; i < rdata.length; i++) sum += i & 1 ? rdata[i]! : rdata[i]! << 8;
  sum += (sum >>> 16) & 0xffff;
  return sum & 0xffff;
}

/** Why a key cannot be used: its algorithm is not one we verify, or its key data is not a key. */
export type KeyProblem = 'algorithm_unsupported' | 'key_malformed';

export interface DnskeyInfo {
  algorithm: number;
  /** The algorithm's mnemonic (RSASHA256, ...), ALG<n> when unknown. */
  algorithmName: string;
  keyTag: number;
  flags: number;
  /** Zone Key flag (RFC 4034 §2.1.1): only zone keys may sign zone data. */
  zoneKey: boolean;
  /** Secure Entry Point flag (RFC 4034 §2.1.1): the key a DS is meant to name (a KSK). */
  sep: boolean;
  /** REVOKE flag (RFC 5011 §2.1). */
  revoked: boolean;
  /** Key size in bits: the RSA modulus, the curve's size, 256 for Ed25519 and 456 for Ed448. */
  bits?: number;
  /** Whether this validator can verify signatures made with it. */
  supported: boolean;
  problem?: KeyProblem;
  /** A short sentence when there is a problem. */
  detail?: string;
  key?: KeyObject;
}

/** Everything the validator and the findings need to know about one DNSKEY. */
export function dnskeyInfo(data: DnskeyData): DnskeyInfo {
  const base = {
    algorithm: data.algorithm,
    algorithmName: algorithmName(data.algorithm),
    keyTag: keyTag(data),
    flags: data.flags,
    zoneKey: (data.flags & DNSKEY_FLAG_ZONE) !== 0,
    sep: (data.flags & DNSKEY_FLAG_SEP) !== 0,
    revoked: (data.flags & DNSKEY_FLAG_REVOKE) !== 0,
  };
  if (!isAlgorithmSupported(data.algorithm)) {
    return {
      ...base,
      supported: false,
      problem: 'algorithm_unsupported',
      detail: `algorithm ${data.algorithm} (${base.algorithmName}) is not one this validator verifies`,
    };
  }
  const parsed = publicKey(data.algorithm, data.key);
  if ('problem' in parsed) {
    return { ...base, supported: false, problem: 'key_malformed', detail: parsed.problem, bits: parsed.bits };
  }
  return { ...base, supported: true, bits: parsed.bits, key: parsed.key };
}

type Parsed = { key: KeyObject; bits: number } | { problem: string; bits?: number };

function publicKey(algorithm: number, keyData: Buffer): Parsed {
  switch (algorithm) {
    case 5:
    case 7:
    case 8:
    case 10:
      return rsaKey(keyData);
    case 13:
      return ecKey(keyData, 'P-256', 32);
    case 14:
      return ecKey(keyData, 'P-384', 48);
    case 15:
      return edKey(keyData, 'Ed25519', 32);
    case 16:
      return edKey(keyData, 'Ed448', 57);
    default:
      return { problem: `algorithm ${algorithm} has no key format here` };
  }
}

// RFC 3110 §2: "For interoperability, the exponent and modulus are each limited to 4096 bits".
const RSA_MAX_BITS = 4096;

/** RFC 3110 §2: exponent length (1 octet, or 0 then 2 octets), exponent, modulus; all unsigned big-endian. */
function rsaKey(data: Buffer): Parsed {
  if (data.length < 3) return { problem: 'RSA key shorter than its length prefix' };
  let offset = 1;
  let exponentLength = data[0]!;
  if (exponentLength === 0) {
    exponentLength = data.readUInt16BE(1);
    offset = 3;
  }
  const exponent = stripZeros(data.subarray(offset, offset + exponentLength));
  const modulus = stripZeros(data.subarray(offset + exponentLength));
  if (offset + exponentLength >= data.length || exponent.length === 0 || modulus.length === 0) {
    return { problem: 'RSA key has no exponent or no modulus (RFC 3110 §2)' };
  }
  const bits = bitLength(modulus);
  if (bits > RSA_MAX_BITS || bitLength(exponent) > RSA_MAX_BITS) {
    return { problem: `RSA key over ${RSA_MAX_BITS} bits (RFC 3110 §2 limit)`, bits };
  }
  return fromJwk({ kty: 'RSA', n: modulus.toString('base64url'), e: exponent.toString('base64url') }, bits);
}

/** RFC 6605 §4: the point's x and y, each the curve's size, with no point-format octet. */
function ecKey(data: Buffer, crv: 'P-256' | 'P-384', size: number): Parsed {
  if (data.length !== size * 2) {
    return { problem: `${crv} key is ${data.length} octets, not ${size * 2} (RFC 6605 §4)` };
  }
  const x = data.subarray(0, size).toString('base64url');
  const y = data.subarray(size).toString('base64url');
  return fromJwk({ kty: 'EC', crv, x, y }, size * 8);
}

/** RFC 8080 §3: the public key as RFC 8032 encodes it, 32 octets for Ed25519 and 57 for Ed448. */
function edKey(data: Buffer, crv: 'Ed25519' | 'Ed448', size: number): Parsed {
  if (data.length !== size)
    return { problem: `${crv} key is ${data.length} octets, not ${size} (RFC 8080 §3)` };
  return fromJwk({ kty: 'OKP', crv, x: data.toString('base64url') }, size * 8);
}

function fromJwk(jwk: Record<string, string>, bits: number): Parsed {
  try {
    return { key: createPublicKey({ key: jwk, format: 'jwk' }), bits };
  } catch (err) {
    // OpenSSL refuses points off the curve and other impossible keys.
    return { problem: `not a valid public key: ${(err as Error).message}`, bits };
  }
}

function stripZeros(bytes: Buffer): Buffer {
  let start = 0;
  while (start < bytes.length && bytes[start] === 0) start++;
  return bytes.subarray(start);
}

function bitLength(bytes: Buffer): number {
  if (bytes.length === 0) return 0;
  return (bytes.length - 1) * 8 + (32 - Math.clz32(bytes[0]!));
}
