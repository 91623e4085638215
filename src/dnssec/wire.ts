/**
 * dns-packet's own codecs, which its type declarations leave out: the name,
 * each type's RDATA, and the type numbers. DNSSEC signs wire octets, so every
 * byte the validator hashes comes from dns-packet's encoder, never from a second
 * hand-written one.
 *
 * What dns-packet cannot give back byte for byte (docs in src/dnssec/index.ts):
 * a label holding a '.' or octets that are not UTF-8 (it decodes labels as
 * text), SSHFP with a hash type other than 1 and 2. A signature over such a
 * record fails to verify. (CAA's flags survive: canonical.ts keeps the octet.)
 */
import { createRequire } from 'node:module';
import * as packet from 'dns-packet';

interface Codec<T> {
  encode(value: T, buf?: Buffer, offset?: number): Buffer;
  decode(buf: Buffer, offset?: number): T;
}

interface PacketInternals {
  name: Codec<string>;
  record(type: string): Codec<unknown> & { encode: { bytes: number } };
}

interface TypeTable {
  toString(type: number): string;
  toType(name: string): number;
}

const internals = packet as unknown as PacketInternals;
// dns-packet's type table is its own module, which it ships without declarations.
const types = createRequire(import.meta.url)('dns-packet/types.js') as TypeTable;

/** A name in uncompressed wire form, exactly as given (no case folding). */
export function nameWire(name: string): Buffer {
  return internals.name.encode(name);
}

/** One record's RDATA as dns-packet encodes it, without the RDLENGTH prefix. */
export function rdataWire(type: string, data: unknown): Buffer {
  const codec = internals.record(type);
  const withLength = codec.encode(data);
  return withLength.subarray(2, codec.encode.bytes);
}

/** RDATA octets (without RDLENGTH) decoded by dns-packet's codec for `type`. */
export function decodeRdata(type: string, rdata: Buffer): unknown {
  const withLength = Buffer.alloc(rdata.length + 2);
  withLength.writeUInt16BE(rdata.length, 0);
  rdata.copy(withLength, 2);
  return internals.record(type).decode(withLength, 0);
}

/** The type number of a dns-packet type name ('A', 'UNKNOWN_65', ...); 0 when unknown. */
export function typeCode(type: string): number {
  return types.toType(type);
}

/** dns-packet's name for a type number (UNKNOWN_<n> for the ones it does not know). */
export function typeName(code: number): string {
  return types.toString(code);
}

/** The class number; DNSSEC validation here is for class IN (1) and names others as themselves. */
export function classCode(klass: string | undefined): number {
  switch ((klass ?? 'IN').toUpperCase()) {
    case 'IN':
      return 1;
    case 'CS':
      return 2;
    case 'CH':
      return 3;
    case 'HS':
      return 4;
    case 'ANY':
      return 255;
    default: {
      const match = /^UNKNOWN_(\d+)$/i.exec(klass ?? '');
      return match ? Number(match[1]) : 0;
    }
  }
}
