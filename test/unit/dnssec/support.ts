/**
 * What the src/dnssec/ tests share: records in dns-packet's shape, RRSIG times
 * from their presentation form, and zone keys made by node:crypto at test time
 * in DNSKEY form (RFC 3110, RFC 6605, RFC 8080) with a signer for each.
 */
import { sign as cryptoSign, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { rrsigLabelCount, signedData } from '../../../src/dnssec/index.js';
import type {
  DnskeyData,
  DnskeyRecord,
  DnsRecord,
  Nsec3Record,
  NsecRecord,
  RrsigData,
  RrsigRecord,
} from '../../../src/dnssec/types.js';

/** YYYYMMDDHHmmSS (RFC 4034 §3.2) → seconds since the epoch. */
export function t(text: string): number {
  const [y, mo, d, h, mi, s] = [0, 4, 6, 8, 10, 12].map((i, k) =>
    Number(text.slice(i, i + (k === 0 ? 4 : 2))),
  );
  return Date.UTC(y!, mo! - 1, d!, h!, mi!, s!) / 1000;
}

export function rr(name: string, type: string, data: unknown, ttl = 3600): DnsRecord {
  return { name, type, class: 'IN', ttl, data };
}

export function dnskeyRecord(name: string, data: DnskeyData, ttl = 3600): DnskeyRecord {
  return { name, type: 'DNSKEY', class: 'IN', ttl, data };
}

export function rrsigRecord(name: string, data: RrsigData, ttl = 3600): RrsigRecord {
  return { name, type: 'RRSIG', class: 'IN', ttl, data };
}

export function nsec(name: string, nextDomain: string, rrtypes: string[]): NsecRecord {
  return { name, type: 'NSEC', class: 'IN', ttl: 3600, data: { nextDomain, rrtypes } };
}

export function nsec3(
  name: string,
  next: Buffer,
  rrtypes: string[],
  params: { flags?: number; iterations?: number; salt?: Buffer } = {},
): Nsec3Record {
  return {
    name,
    type: 'NSEC3',
    class: 'IN',
    ttl: 3600,
    data: {
      algorithm: 1,
      flags: params.flags ?? 0,
      iterations: params.iterations ?? 0,
      salt: params.salt ?? Buffer.alloc(0),
      nextDomain: next,
      rrtypes,
    },
  };
}

export interface TestKey {
  data: DnskeyData;
  sign(data: Buffer): Buffer;
}

const RSA_HASH: Record<number, string> = { 5: 'sha1', 7: 'sha1', 8: 'sha256', 10: 'sha512' };

/** A fresh key pair for `algorithm`, its public half as DNSKEY data. */
export function makeKey(algorithm: number, flags = 256, rsaBits = 1024): TestKey {
  const { publicKey, privateKey } = generate(algorithm, rsaBits);
  const jwk = publicKey.export({ format: 'jwk' });
  const b = (text: string | undefined) => Buffer.from(text ?? '', 'base64url');
  let key: Buffer;
  let sign: (data: Buffer) => Buffer;
  if (algorithm in RSA_HASH) {
    const e = b(jwk.e);
    const prefix =
      e.length < 256 ? Buffer.from([e.length]) : Buffer.from([0, e.length >> 8, e.length & 0xff]);
    key = Buffer.concat([prefix, e, b(jwk.n)]);
    sign = (data) => cryptoSign(RSA_HASH[algorithm]!, data, privateKey);
  } else if (algorithm === 13 || algorithm === 14) {
    key = Buffer.concat([b(jwk.x), b(jwk.y)]);
    const hash = algorithm === 13 ? 'sha256' : 'sha384';
    sign = (data) => cryptoSign(hash, data, { key: privateKey, dsaEncoding: 'ieee-p1363' });
  } else {
    key = b(jwk.x);
    sign = (data) => cryptoSign(null, data, privateKey);
  }
  return { data: { flags, algorithm, key }, sign };
}

function generate(algorithm: number, rsaBits: number): { publicKey: KeyObject; privateKey: KeyObject } {
  switch (algorithm) {
    case 5:
    case 7:
    case 8:
    case 10:
      return generateKeyPairSync('rsa', { modulusLength: rsaBits });
    case 13:
      return generateKeyPairSync('ec', { namedCurve: 'P-256' });
    case 14:
      return generateKeyPairSync('ec', { namedCurve: 'P-384' });
    case 15:
      return generateKeyPairSync('ed25519');
    case 16:
      return generateKeyPairSync('ed448');
    default:
      throw new Error(`no test key for algorithm ${algorithm}`);
  }
}

/** An RRSIG over `rrset` by `key` at `signer`, valid from 2000 to 2030 unless told otherwise. */
export function signRRset(
  rrset: readonly DnsRecord[],
  key: TestKey,
  signer: string,
  keyTag: number,
  options: Partial<Pick<RrsigData, 'labels' | 'inception' | 'expiration' | 'originalTTL'>> = {},
): RrsigRecord {
  const first = rrset[0]!;
  const data: RrsigData = {
    typeCovered: first.type,
    algorithm: key.data.algorithm,
    labels: options.labels ?? rrsigLabelCount(first.name),
    originalTTL: options.originalTTL ?? first.ttl ?? 3600,
    expiration: options.expiration ?? t('20300101000000'),
    inception: options.inception ?? t('20000101000000'),
    keyTag,
    signersName: signer,
    signature: Buffer.alloc(0),
  };
  data.signature = key.sign(signedData(data, rrset));
  return rrsigRecord(first.name, data);
}

/** A copy of `buf` with one bit flipped at `index` (negative counts from the end). */
export function flipped(buf: Buffer, index: number): Buffer {
  const copy = Buffer.from(buf);
  const at = index < 0 ? copy.length + index : index;
  copy[at] = copy[at]! ^ 0x01;
  return copy;
}
