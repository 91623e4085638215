/**
 * dns-packet's decoded records → our normalized, JSON-only DnsRR. Binary
 * fields become the text their zone-file presentation uses (hex, base64,
 * base32hex) so an answer survives a trip through the cache unchanged.
 */

import * as packet from 'dns-packet';
import ipaddr from 'ipaddr.js';
import { canonicalName } from './names.js';
import { RR_TYPE_CODES, typeMnemonic } from './parameters.js';
import type { DnsRR, DnsRRDataMap, SvcbData, SvcParam } from './types.js';

/** A record as dns-packet decodes it; `data`'s shape depends on `type`. */
export interface PacketRecord {
  name: string;
  type: string;
  class?: string;
  ttl?: number;
  data?: unknown;
}

// dns-packet's per-type decoded shapes (its index.js), read defensively.
interface PacketMx {
  preference: number;
  exchange: string;
}
interface PacketSoa {
  mname: string;
  rname: string;
  serial: number;
  refresh: number;
  retry: number;
  expire: number;
  minimum: number;
}
interface PacketCaa {
  flags: number;
  tag: string;
  value: string;
}
interface PacketSrv {
  priority: number;
  weight: number;
  port: number;
  target: string;
}
interface PacketDs {
  keyTag: number;
  algorithm: number;
  digestType: number;
  digest: Buffer;
}
interface PacketDnskey {
  flags: number;
  algorithm: number;
  key: Buffer;
}
interface PacketRrsig {
  typeCovered: string;
  algorithm: number;
  labels: number;
  originalTTL: number;
  expiration: number;
  inception: number;
  keyTag: number;
  signersName: string;
  signature: Buffer;
}
interface PacketNsec {
  nextDomain: string;
  rrtypes: string[];
}
interface PacketNsec3 {
  algorithm: number;
  flags: number;
  iterations: number;
  salt: Buffer;
  nextDomain: Buffer;
  rrtypes: string[];
}
interface PacketTlsa {
  usage: number;
  selector: number;
  matchingType: number;
  certificate: Buffer;
}

/** dns-packet's record codecs, which its type declarations leave out. */
const recordCodec = (packet as unknown as { record(type: string): { encode(data: unknown): Buffer } }).record;

/**
 * Converts one record, or returns undefined for records that are not data
 * (OPT) or not of class IN. Throws on data dns-packet decoded into an
 * unexpected shape; the caller reports that as a malformed response.
 */
export function toDnsRR(rec: PacketRecord): DnsRR | undefined {
  if (rec.type === 'OPT' || (rec.class !== undefined && rec.class !== 'IN')) return undefined;
  const name = canonicalName(rec.name);
  const ttl = rec.ttl ?? 0;
  const mnemonic = typeMnemonic(rec.type);
  const data = rec.data;
  switch (mnemonic) {
    case 'A':
    case 'AAAA':
      return { name, ttl, type: mnemonic, data: { address: str(data) } };
    case 'CNAME':
    case 'DNAME':
      return { name, ttl, type: mnemonic, data: { target: canonicalName(str(data)) } };
    case 'NS':
    case 'PTR':
      return { name, ttl, type: mnemonic, data: { host: canonicalName(str(data)) } };
    case 'MX': {
      const mx = data as PacketMx;
      return {
        name,
        ttl,
        type: 'MX',
        data: { priority: num(mx.preference), exchange: canonicalName(str(mx.exchange)) },
      };
    }
    case 'TXT': {
      const strings = (Array.isArray(data) ? data : [data]).map((part) => buf(part).toString('utf8'));
      return { name, ttl, type: 'TXT', data: { text: strings.join(''), strings } };
    }
    case 'SOA': {
      const soa = data as PacketSoa;
      return {
        name,
        ttl,
        type: 'SOA',
        data: {
          mname: canonicalName(str(soa.mname)),
          rname: canonicalName(str(soa.rname)),
          serial: num(soa.serial),
          refresh: num(soa.refresh),
          retry: num(soa.retry),
          expire: num(soa.expire),
          minimum: num(soa.minimum),
        },
      };
    }
    case 'CAA': {
      const caa = data as PacketCaa;
      const flags = num(caa.flags);
      return {
        name,
        ttl,
        type: 'CAA',
        data: { flags, tag: str(caa.tag), value: str(caa.value), critical: (flags & 0x80) !== 0 },
      };
    }
    case 'SRV': {
      const srv = data as PacketSrv;
      return {
        name,
        ttl,
        type: 'SRV',
        data: {
          priority: num(srv.priority),
          weight: num(srv.weight),
          port: num(srv.port),
          target: canonicalName(str(srv.target)),
        },
      };
    }
    case 'DS': {
      const ds = data as PacketDs;
      return {
        name,
        ttl,
        type: 'DS',
        data: {
          keyTag: num(ds.keyTag),
          algorithm: num(ds.algorithm),
          digestType: num(ds.digestType),
          digest: hex(ds.digest),
        },
      };
    }
    case 'DNSKEY': {
      const key = data as PacketDnskey;
      return {
        name,
        ttl,
        type: 'DNSKEY',
        data: dnskeyData(num(key.flags), num(key.algorithm), buf(key.key)),
      };
    }
    case 'RRSIG': {
      const sig = data as PacketRrsig;
      return {
        name,
        ttl,
        type: 'RRSIG',
        data: {
          typeCovered: typeMnemonic(str(sig.typeCovered)),
          algorithm: num(sig.algorithm),
          labels: num(sig.labels),
          originalTtl: num(sig.originalTTL),
          expiration: num(sig.expiration),
          inception: num(sig.inception),
          keyTag: num(sig.keyTag),
          signerName: canonicalName(str(sig.signersName)),
          signature: buf(sig.signature).toString('base64'),
        },
      };
    }
    case 'NSEC': {
      const nsec = data as PacketNsec;
      return {
        name,
        ttl,
        type: 'NSEC',
        data: { nextDomain: canonicalName(str(nsec.nextDomain)), types: nsec.rrtypes.map(typeMnemonic) },
      };
    }
    case 'NSEC3': {
      const n3 = data as PacketNsec3;
      return {
        name,
        ttl,
        type: 'NSEC3',
        data: {
          algorithm: num(n3.algorithm),
          flags: num(n3.flags),
          iterations: num(n3.iterations),
          salt: hex(n3.salt),
          nextHashedOwner: base32hex(buf(n3.nextDomain)),
          types: n3.rrtypes.map(typeMnemonic),
        },
      };
    }
    case 'TLSA': {
      const tlsa = data as PacketTlsa;
      return {
        name,
        ttl,
        type: 'TLSA',
        data: {
          usage: num(tlsa.usage),
          selector: num(tlsa.selector),
          matchingType: num(tlsa.matchingType),
          data: hex(tlsa.certificate),
        },
      };
    }
    // dns-packet does not know these types and hands over the raw rdata.
    case 'SVCB':
    case 'HTTPS':
      return { name, ttl, type: mnemonic, data: parseSvcb(buf(data)) };
    default:
      return { name, ttl, type: `TYPE${typeCode(mnemonic)}`, data: { rdata: hex(genericRdata(rec)) } };
  }
}

function typeCode(mnemonic: string): number {
  const generic = /^TYPE(\d+)$/.exec(mnemonic);
  const code = generic ? Number(generic[1]) : RR_TYPE_CODES[mnemonic];
  if (code === undefined) throw new Error(`unknown RR type ${mnemonic}`);
  return code;
}

/** Raw rdata of a type we do not model: dns-packet keeps unknown types as bytes; known ones are re-encoded. */
function genericRdata(rec: PacketRecord): Buffer {
  if (Buffer.isBuffer(rec.data)) return rec.data;
  // The codec writes a 2-byte RDLENGTH before the rdata.
  return recordCodec(rec.type).encode(rec.data).subarray(2);
}

export function dnskeyData(flags: number, algorithm: number, key: Buffer): DnsRRDataMap['DNSKEY'] {
  const rdata = Buffer.concat([Buffer.from([flags >> 8, flags & 0xff, 3, algorithm]), key]);
  return { flags, protocol: 3, algorithm, publicKey: key.toString('base64'), keyTag: keyTag(rdata) };
}

/** RFC 4034 Appendix B: the key tag over the DNSKEY rdata (algorithm 1 is obsolete and not special-cased). */
function keyTag(rdata: Buffer): number {
  let ac = 0;
  for (let i = 0; i < rdata.length; i++) ac += i & 1 ? rdata[i]! : rdata[i]! << 8;
  ac += (ac >> 16) & 0xffff;
  return ac & 0xffff;
}

const SVC_PARAM_KEYS: Readonly<Record<number, string>> = {
  // RFC 9460 §14.3.2 and the IANA "Service Parameter Keys (SvcParamKeys)" registry.
  0: 'mandatory',
  1: 'alpn',
  2: 'no-default-alpn',
  3: 'port',
  4: 'ipv4hint',
  5: 'ech',
  6: 'ipv6hint',
  7: 'dohpath',
  8: 'ohttp',
};

function svcKeyName(key: number): string {
  return SVC_PARAM_KEYS[key] ?? `key${key}`;
}

/** RFC 9460 §2.2 wire format: SvcPriority, TargetName (never compressed), then SvcParams. */
export function parseSvcb(rdata: Buffer): SvcbData {
  if (rdata.length < 3) throw new Error('SVCB rdata too short');
  const priority = rdata.readUInt16BE(0);
  const { name, next } = readUncompressedName(rdata, 2);
  const params: SvcParam[] = [];
  let off = next;
  while (off < rdata.length) {
    if (off + 4 > rdata.length) throw new Error('SVCB parameter header truncated');
    const key = rdata.readUInt16BE(off);
    const len = rdata.readUInt16BE(off + 2);
    const value = rdata.subarray(off + 4, off + 4 + len);
    if (value.length !== len) throw new Error('SVCB parameter value truncated');
    params.push({ key: svcKeyName(key), value: svcValue(key, value) });
    off += 4 + len;
  }
  return { priority, target: name, params };
}

function svcValue(key: number, value: Buffer): string {
  switch (key) {
    case 0: {
      const keys: string[] = [];
      for (let i = 0; i + 1 < value.length; i += 2) keys.push(svcKeyName(value.readUInt16BE(i)));
      return keys.join(',');
    }
    case 1: {
      const ids: string[] = [];
      for (let i = 0; i < value.length; ) {
        const len = value[i]!;
        ids.push(value.subarray(i + 1, i + 1 + len).toString('utf8'));
        i += 1 + len;
      }
      return ids.join(',');
    }
    case 3:
      return value.length === 2 ? String(value.readUInt16BE(0)) : hex(value);
    case 4:
    case 6: {
      const size = key === 4 ? 4 : 16;
      const addrs: string[] = [];
      for (let i = 0; i + size <= value.length; i += size) {
        addrs.push(ipaddr.fromByteArray([...value.subarray(i, i + size)]).toString());
      }
      return addrs.join(',');
    }
    case 5:
      return value.toString('base64');
    case 7:
      return value.toString('utf8');
    default:
      return value.length === 0 ? '' : hex(value);
  }
}

function readUncompressedName(b: Buffer, start: number): { name: string; next: number } {
  const labels: string[] = [];
  let off = start;
  for (;;) {
    const len = b[off];
    if (len === undefined) throw new Error('name runs past the rdata');
    off += 1;
    if (len === 0) break;
    // RFC 9460 §2.2: TargetName uses no compression, so any pointer is malformed.
    if (len > 63) throw new Error('compressed or invalid label in SVCB target');
    if (off + len > b.length) throw new Error('label runs past the rdata');
    labels.push(b.toString('utf8', off, off + len));
    off += len;
  }
  return { name: canonicalName(labels.join('.')), next: off };
}

const BASE32HEX = '0123456789ABCDEFGHIJKLMNOPQRSTUV';

/** RFC 4648 §7 "base32hex" without padding, as NSEC3 presentation uses (RFC 5155 §3.3). */
export function base32hex(bytes: Buffer): string {
  let out = '';
  let bits = 0;
  let acc = 0;
  for (const byte of bytes) {
    // Only the pending bits (< 13) matter; masking keeps the shift inside 32 bits.
    acc = ((acc << 8) | byte) & 0xffff;
    bits += 8;
    while (bits >= 5) {
      out += BASE32HEX[(acc >> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += BASE32HEX[(acc << (5 - bits)) & 31];
  return out;
}

function hex(value: unknown): string {
  return buf(value).toString('hex').toUpperCase();
}

function buf(value: unknown): Buffer {
  if (Buffer.isBuffer(value)) return value;
  if (typeof value === 'string') return Buffer.from(value);
  throw new Error('expected bytes in decoded record');
}

function str(value: unknown): string {
  if (typeof value !== 'string') throw new Error('expected text in decoded record');
  return value;
}

function num(value: unknown): number {
  if (typeof value !== 'number' || !Number.isFinite(value))
    throw new Error('expected a number in decoded record');
  return value;
}
