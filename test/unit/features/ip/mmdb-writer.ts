/**
 * A minimal MaxMind DB (MMDB 2.0) writer for tests, so a test builds the tiny
 * database it reads instead of committing a binary. Spec:
 * https://maxmind.github.io/MaxMind-DB/ (search tree with 24-bit records, a
 * 16-byte zero separator, the data section, then the metadata after the
 * "\xAB\xCD\xEFMaxMind.com" marker). No pointers, no deduplication; networks
 * must not overlap. Verified by reading the output back with mmdb-lib.
 */
import { isIPv4 } from 'node:net';

export type MmdbValue = string | number | boolean | bigint | MmdbValue[] | { [key: string]: MmdbValue };

export interface MmdbNetwork {
  /** "a.b.c.d/n" or "x::/n". IPv4 networks in an IPv6 database go under ::/96, as the spec places them. */
  cidr: string;
  data: MmdbValue;
}

export interface MmdbOptions {
  ipVersion: 4 | 6;
  databaseType: string;
  description?: string;
  buildEpoch?: number;
}

const METADATA_MARKER = Buffer.from([0xab, 0xcd, 0xef, ...Buffer.from('MaxMind.com')]);

function controlBytes(type: number, size: number): Buffer {
  const head: number[] = [];
  let sizeBits: number;
  const extra: number[] = [];
  if (size < 29) sizeBits = size;
  else if (size < 285) {
    sizeBits = 29;
    extra.push(size - 29);
  } else if (size < 65_821) {
    sizeBits = 30;
    const v = size - 285;
    extra.push(v >> 8, v & 0xff);
  } else {
    sizeBits = 31;
    const v = size - 65_821;
    extra.push((v >> 16) & 0xff, (v >> 8) & 0xff, v & 0xff);
  }
  if (type <= 7) head.push((type << 5) | sizeBits);
  else head.push(sizeBits, type - 7); // extended type: 0 in the top bits, type - 7 in the next byte
  return Buffer.from([...head, ...extra]);
}

function uintBytes(value: bigint): Buffer {
  const bytes: number[] = [];
  for (let v = value; v > 0n; v >>= 8n) bytes.unshift(Number(v & 0xffn));
  return Buffer.from(bytes);
}

export function encodeValue(value: MmdbValue): Buffer {
  if (typeof value === 'string') {
    const bytes = Buffer.from(value, 'utf8');
    return Buffer.concat([controlBytes(2, bytes.length), bytes]);
  }
  if (typeof value === 'boolean') return controlBytes(14, value ? 1 : 0);
  if (typeof value === 'bigint') {
    const bytes = uintBytes(value);
    return Buffer.concat([controlBytes(9, bytes.length), bytes]);
  }
  if (typeof value === 'number') {
    if (Number.isInteger(value) && value >= 0 && value <= 0xffffffff) {
      const bytes = uintBytes(BigInt(value));
      return Buffer.concat([controlBytes(6, bytes.length), bytes]);
    }
    const bytes = Buffer.alloc(8);
    bytes.writeDoubleBE(value);
    return Buffer.concat([controlBytes(3, 8), bytes]);
  }
  if (Array.isArray(value)) return Buffer.concat([controlBytes(11, value.length), ...value.map(encodeValue)]);
  const entries = Object.entries(value);
  return Buffer.concat([
    controlBytes(7, entries.length),
    ...entries.flatMap(([k, v]) => [encodeValue(k), encodeValue(v)]),
  ]);
}

/** The network's address bits, most significant first, and its prefix length in this tree. */
function networkBits(cidr: string, ipVersion: 4 | 6): { bits: number[]; length: number } {
  const [addr = '', lenText] = cidr.split('/');
  const bytes: number[] = [];
  if (isIPv4(addr)) {
    if (ipVersion === 6) bytes.push(...new Array<number>(12).fill(0));
    bytes.push(...addr.split('.').map(Number));
  } else {
    if (ipVersion === 4) throw new Error(`IPv6 network ${cidr} in an IPv4 database`);
    const [head = '', tail = ''] = addr.includes('::') ? addr.split('::') : [addr, ''];
    const h = head ? head.split(':') : [];
    const t = tail ? tail.split(':') : [];
    const groups = addr.includes('::')
      ? [...h, ...new Array<string>(8 - h.length - t.length).fill('0'), ...t]
      : h;
    for (const g of groups) {
      const n = Number.parseInt(g, 16);
      bytes.push(n >> 8, n & 0xff);
    }
  }
  const offset = isIPv4(addr) && ipVersion === 6 ? 96 : 0;
  const length = offset + Number(lenText ?? bytes.length * 8 - offset);
  const bits = bytes.flatMap((b) => [7, 6, 5, 4, 3, 2, 1, 0].map((i) => (b >> i) & 1));
  return { bits, length };
}

type Record = { node: number } | { data: number } | undefined;

export function buildMmdb(networks: MmdbNetwork[], opts: MmdbOptions): Buffer {
  const nodes: [Record, Record][] = [[undefined, undefined]];
  const data: Buffer[] = [];
  let dataSize = 0;
  for (const { cidr, data: value } of networks) {
    const encoded = encodeValue(value);
    const offset = dataSize;
    data.push(encoded);
    dataSize += encoded.length;
    const { bits, length } = networkBits(cidr, opts.ipVersion);
    let node = 0;
    for (let depth = 0; depth < length; depth++) {
      const side = bits[depth]!;
      const record = nodes[node]![side];
      if (depth === length - 1) {
        if (record !== undefined) throw new Error(`${cidr} overlaps another network`);
        nodes[node]![side] = { data: offset };
      } else if (record === undefined) {
        nodes.push([undefined, undefined]);
        nodes[node]![side] = { node: nodes.length - 1 };
        node = nodes.length - 1;
      } else if ('node' in record) {
        node = record.node;
      } else {
        throw new Error(`${cidr} overlaps another network`);
      }
    }
  }
  const nodeCount = nodes.length;
  const tree = Buffer.alloc(nodeCount * 6);
  const recordValue = (r: Record): number =>
    r === undefined ? nodeCount : 'node' in r ? r.node : nodeCount + 16 + r.data;
  nodes.forEach(([left, right], i) => {
    tree.writeUIntBE(recordValue(left), i * 6, 3);
    tree.writeUIntBE(recordValue(right), i * 6 + 3, 3);
  });
  const metadata = encodeValue({
    node_count: nodeCount,
    record_size: 24,
    ip_version: opts.ipVersion,
    database_type: opts.databaseType,
    languages: ['en'],
    binary_format_major_version: 2,
    binary_format_minor_version: 0,
    build_epoch: BigInt(opts.buildEpoch ?? 1_780_000_000),
    description: { en: opts.description ?? 'netdiag test database' },
  });
  return Buffer.concat([tree, Buffer.alloc(16), ...data, METADATA_MARKER, metadata]);
}
