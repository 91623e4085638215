/**
 * BIND's signing tools, driven from a test (test/fakes/bind-hierarchy.ts): keys from
 * `dnssec-keygen`, DS records from `dnssec-dsfromkey`, zones signed by `dnssec-signzone`
 * in its one-record-per-line `full` format, so a test can break a signed zone afterwards
 * line by line (drop an RRSIG, edit an NSEC).
 *
 * One thing BIND will not make: an NSEC3 chain of more than 150 iterations
 * (`dnssec-signzone -H 200` is refused since 9.16, though `named` still serves such a zone,
 * warning). RFC 9276 tells validators to treat those as insecure, which is the case a test
 * needs, so `rechainNsec3` replaces a signed zone's NSEC chain with an NSEC3 chain of any
 * iteration count, signed here with the zone's ECDSA P-256 key (RFC 5155 §5 hashing,
 * RFC 4034 §3.1.8.1 signed data, RFC 6605 signatures). Every other signature is BIND's.
 */
import { execFile } from 'node:child_process';
import { createHash, createPrivateKey, sign } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** The DNSSEC algorithms a test zone can be signed with (IANA numbers → BIND's names). */
export const ALGORITHM_NAMES = {
  5: 'RSASHA1',
  7: 'NSEC3RSASHA1',
  8: 'RSASHA256',
  10: 'RSASHA512',
  13: 'ECDSAP256SHA256',
  14: 'ECDSAP384SHA384',
  15: 'ED25519',
  16: 'ED448',
} as const;
export type SigningAlgorithm = keyof typeof ALGORITHM_NAMES;

export interface KeySpec {
  algorithm: SigningAlgorithm;
  /** RSA only. */
  bits?: number;
  /** csk: one key (flags 257) signs everything; ksk signs the DNSKEY RRset, zsk the rest. */
  role: 'csk' | 'ksk' | 'zsk';
}

export interface ZoneKey {
  zone: string;
  /** The key's files without their extension (`.key`, `.private`). */
  path: string;
  tag: number;
  algorithm: SigningAlgorithm;
  role: KeySpec['role'];
  /** Its DNSKEY record, one zone-file line. */
  dnskey: string;
}

/** A line of a zone in `full` format: every field present, one record per line. */
export interface ZoneLine {
  owner: string;
  ttl: number;
  type: string;
  rdata: string;
}

/** `secure.test` → `secure.test.`; the root is `.`. */
export function fqdn(name: string): string {
  return name === '' || name === '.' ? '.' : `${name.replace(/\.$/, '')}.`;
}

export async function keygen(dir: string, zone: string, spec: KeySpec): Promise<ZoneKey> {
  const args = ['-q', '-K', dir, '-a', ALGORITHM_NAMES[spec.algorithm], '-L', '300'];
  if (spec.bits) args.push('-b', String(spec.bits));
  if (spec.role !== 'zsk') args.push('-f', 'KSK');
  const { stdout } = await run('dnssec-keygen', [...args, fqdn(zone)]);
  const base = stdout.trim();
  const tag = Number(/\+(\d+)$/.exec(base)?.[1]);
  const text = await readFile(join(dir, `${base}.key`), 'utf8');
  const dnskey = text.split('\n').find((l) => l.trim() !== '' && !l.startsWith(';'));
  if (!dnskey || !Number.isInteger(tag)) throw new Error(`dnssec-keygen: unexpected output ${stdout}`);
  return { zone, path: join(dir, base), tag, algorithm: spec.algorithm, role: spec.role, dnskey };
}

/** The DS record (SHA-256) of a key, or of the DNSKEY records in `dnskeyFile`, as a zone-file line. */
export async function dsFromKey(source: ZoneKey | { zone: string; dnskeyFile: string }): Promise<string> {
  const args =
    'path' in source
      ? ['-a', 'SHA-256', `${source.path}.key`]
      : ['-a', 'SHA-256', '-f', source.dnskeyFile, fqdn(source.zone)];
  const { stdout } = await run('dnssec-dsfromkey', args);
  return stdout.trim();
}

export interface SignOptions {
  dir: string;
  zone: string;
  input: string;
  output: string;
  keys: ZoneKey[];
  nsec3?: { salt: string; iterations: number; optOut?: boolean };
  /** Signature validity, absolute (BIND's default: from an hour ago for 30 days). */
  validity?: { inception: Date; expiration: Date };
}

/** Signs `input` into `output` (full format) and returns its lines. */
export async function signZone(o: SignOptions): Promise<ZoneLine[]> {
  const args = ['-q', '-O', 'full', '-o', fqdn(o.zone), '-f', o.output];
  if (o.keys.every((k) => k.role === 'csk')) args.push('-z');
  if (o.nsec3) {
    args.push('-3', o.nsec3.salt === '' ? '-' : o.nsec3.salt, '-H', String(o.nsec3.iterations));
    if (o.nsec3.optOut) args.push('-A');
  }
  if (o.validity) {
    // Verifying a zone whose signatures are not valid now would fail: that is the point.
    args.push('-s', stamp(o.validity.inception), '-e', stamp(o.validity.expiration), '-P');
  }
  args.push(o.input, ...o.keys.map((k) => `${k.path}.private`));
  try {
    // cwd: signzone writes its dsset- file there.
    await run('dnssec-signzone', args, { cwd: o.dir });
  } catch (err) {
    const stderr = (err as { stderr?: string }).stderr ?? '';
    throw new Error(`dnssec-signzone ${o.zone}: ${stderr.trim() || String(err)}`);
  }
  return parseZone(await readFile(o.output, 'utf8'));
}

export function parseZone(text: string): ZoneLine[] {
  const lines: ZoneLine[] = [];
  for (const raw of text.split('\n')) {
    if (raw.startsWith(';') || raw.trim() === '') continue;
    const m = /^(\S+)\s+(\d+)\s+IN\s+(\S+)\s+(.*)$/.exec(raw);
    if (!m) throw new Error(`unexpected line in a signed zone: ${raw}`);
    lines.push({ owner: m[1]!.toLowerCase(), ttl: Number(m[2]), type: m[3]!, rdata: m[4]!.trim() });
  }
  return lines;
}

export function formatZone(lines: ZoneLine[]): string {
  return `${lines.map((l) => `${l.owner} ${l.ttl} IN ${l.type} ${l.rdata}`).join('\n')}\n`;
}

/** The RRSIG lines over `type` at `owner`. */
export function isRrsigOver(line: ZoneLine, owner: string, type: string): boolean {
  return line.type === 'RRSIG' && line.owner === fqdn(owner) && line.rdata.split(/\s+/)[0] === type;
}

/** YYYYMMDDHHMMSS, UTC: the form of signzone's -s/-e and of RRSIG's presentation. */
export function stamp(d: Date): string {
  return d.toISOString().replace(/[-:T]/g, '').slice(0, 14);
}

// ---- NSEC3 beyond BIND's limit ----------------------------------------------------------

const TYPE_CODES: Record<string, number> = {
  A: 1,
  NS: 2,
  CNAME: 5,
  SOA: 6,
  MX: 15,
  TXT: 16,
  AAAA: 28,
  DS: 43,
  RRSIG: 46,
  DNSKEY: 48,
  NSEC3: 50,
  NSEC3PARAM: 51,
  TLSA: 52,
};

function typeCode(type: string): number {
  const code = TYPE_CODES[type];
  if (code === undefined) throw new Error(`rechainNsec3: no code for type ${type}`);
  return code;
}

function nameWire(name: string): Buffer {
  const labels = fqdn(name) === '.' ? [] : fqdn(name).slice(0, -1).toLowerCase().split('.');
  return Buffer.concat([
    ...labels.map((l) => Buffer.concat([Buffer.from([l.length]), Buffer.from(l)])),
    Buffer.of(0),
  ]);
}

function labelCount(name: string): number {
  return fqdn(name) === '.' ? 0 : fqdn(name).split('.').length - 1;
}

const BASE32HEX = '0123456789abcdefghijklmnopqrstuv';

function base32hex(bytes: Buffer): string {
  let bits = 0;
  let value = 0;
  let out = '';
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += BASE32HEX[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += BASE32HEX[(value << (5 - bits)) & 31];
  return out;
}

/** RFC 5155 §5: IH(salt, x, k). */
function nsec3Hash(name: string, salt: Buffer, iterations: number): Buffer {
  let digest = createHash('sha1').update(nameWire(name)).update(salt).digest();
  for (let i = 0; i < iterations; i++) digest = createHash('sha1').update(digest).update(salt).digest();
  return digest;
}

/** RFC 4034 §4.1.2 type bit maps. */
function typeBitmap(types: Iterable<string>): Buffer {
  const windows = new Map<number, number[]>();
  for (const code of [...new Set([...types].map(typeCode))].sort((a, b) => a - b)) {
    const bytes = windows.get(code >> 8) ?? [];
    const low = code & 0xff;
    while (bytes.length <= low >> 3) bytes.push(0);
    bytes[low >> 3]! |= 0x80 >> (low & 7);
    windows.set(code >> 8, bytes);
  }
  return Buffer.concat([...windows].map(([w, bytes]) => Buffer.from([w, bytes.length, ...bytes])));
}

function u16(n: number): Buffer {
  const b = Buffer.alloc(2);
  b.writeUInt16BE(n);
  return b;
}

function u32(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n >>> 0);
  return b;
}

/** The zone's ECDSA P-256 key as a node:crypto private key (BIND's private-key file + DNSKEY). */
async function p256Key(key: ZoneKey) {
  if (key.algorithm !== 13) throw new Error('rechainNsec3 signs with an ECDSAP256SHA256 key only');
  const priv = /^PrivateKey:\s*(\S+)/m.exec(await readFile(`${key.path}.private`, 'utf8'))?.[1];
  const publicKey = Buffer.from(
    key.dnskey.split(/DNSKEY\s+\d+\s+\d+\s+\d+\s+/)[1]!.replace(/\s/g, ''),
    'base64',
  );
  if (!priv || publicKey.length !== 64) throw new Error(`unreadable key ${key.path}`);
  const b64url = (b: Buffer) => b.toString('base64url');
  return createPrivateKey({
    key: {
      kty: 'EC',
      crv: 'P-256',
      d: b64url(Buffer.from(priv, 'base64')),
      x: b64url(publicKey.subarray(0, 32)),
      y: b64url(publicKey.subarray(32)),
    },
    format: 'jwk',
  });
}

export interface Nsec3Chain {
  salt: string;
  iterations: number;
  inception: Date;
  expiration: Date;
}

/**
 * Replaces the NSEC chain of a zone signed by `signZone` (with NSEC, one ECDSA P-256
 * key) by an NSEC3 chain with these parameters, NSEC3PARAM included, both signed.
 * Handles what a test zone holds: no delegations below the apex.
 */
export async function rechainNsec3(
  lines: ZoneLine[],
  zone: string,
  key: ZoneKey,
  chain: Nsec3Chain,
): Promise<ZoneLine[]> {
  const apex = fqdn(zone);
  const kept = lines.filter((l) => l.type !== 'NSEC' && !(l.type === 'RRSIG' && l.rdata.startsWith('NSEC ')));
  const soa = kept.find((l) => l.type === 'SOA' && l.owner === apex);
  if (!soa) throw new Error(`rechainNsec3: no SOA at ${apex}`);
  const ttl = Math.min(soa.ttl, Number(soa.rdata.split(/\s+/).at(-1)));
  const types = new Map<string, Set<string>>();
  for (const l of kept) {
    // Empty non-terminals get an NSEC3 of their own (RFC 5155 §7.1).
    for (
      let name = l.owner;
      name !== apex && name.endsWith(`.${apex}`);
      name = name.slice(name.indexOf('.') + 1)
    ) {
      if (!types.has(name)) types.set(name, new Set());
    }
    const set = types.get(l.owner) ?? new Set<string>();
    set.add(l.type);
    types.set(l.owner, set);
  }
  types.get(apex)?.add('NSEC3PARAM').add('RRSIG');
  const salt = Buffer.from(chain.salt, 'hex');
  const hashed = [...types]
    .map(([name, set]) => ({ hash: nsec3Hash(name, salt, chain.iterations), set }))
    .sort((a, b) => Buffer.compare(a.hash, b.hash));
  const privateKey = await p256Key(key);
  const sigFields = (type: string, owner: string, originalTtl: number) =>
    Buffer.concat([
      u16(typeCode(type)),
      Buffer.of(13, labelCount(owner)),
      u32(originalTtl),
      u32(chain.expiration.getTime() / 1000),
      u32(chain.inception.getTime() / 1000),
      u16(key.tag),
      nameWire(apex),
    ]);
  const signed = (type: string, owner: string, rrTtl: number, rdata: Buffer, text: string): ZoneLine[] => {
    const fields = sigFields(type, owner, rrTtl);
    const rr = Buffer.concat([
      nameWire(owner),
      u16(typeCode(type)),
      u16(1),
      u32(rrTtl),
      u16(rdata.length),
      rdata,
    ]);
    const signature = sign('sha256', Buffer.concat([fields, rr]), {
      key: privateKey,
      dsaEncoding: 'ieee-p1363',
    });
    const rrsig = [
      type,
      13,
      labelCount(owner),
      rrTtl,
      stamp(chain.expiration),
      stamp(chain.inception),
      key.tag,
      apex,
      signature.toString('base64'),
    ].join(' ');
    return [
      { owner, ttl: rrTtl, type, rdata: text },
      { owner, ttl: rrTtl, type: 'RRSIG', rdata: rrsig },
    ];
  };
  const saltText = chain.salt === '' ? '-' : chain.salt.toUpperCase();
  const params = Buffer.concat([Buffer.of(1, 0), u16(chain.iterations), Buffer.of(salt.length), salt]);
  const out = [...kept, ...signed('NSEC3PARAM', apex, 0, params, `1 0 ${chain.iterations} ${saltText}`)];
  hashed.forEach(({ hash, set }, i) => {
    const next = hashed[(i + 1) % hashed.length]!.hash;
    const owner = `${base32hex(hash)}.${apex}`;
    const rdata = Buffer.concat([params, Buffer.of(next.length), next, typeBitmap(set)]);
    const text = `1 0 ${chain.iterations} ${saltText} ${base32hex(next).toUpperCase()} ${[...set].join(' ')}`;
    out.push(...signed('NSEC3', owner, ttl, rdata, text));
  });
  return out;
}
