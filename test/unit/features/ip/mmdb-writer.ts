/**
 * A minimal MaxMind DB (MMDB 2.0) writer for tests, so a test builds the tiny
 * database it reads instead of committing a binary. Spec:
 * https://maxmind.github.io/MaxMind-DB/ (search tree with 24-, 28- or 32-bit
 * records, a 16-byte zero separator, the data section, then the metadata
 * after the "\xAB\xCD\xEFMaxMind.com" marker). Every data type the spec
 * gives a value can be written (typed() for the ones a JS value does not
 * name); with `pointers`, repeated strings, maps and arrays are written once
 * and pointed to, with the smallest pointer that reaches them ('minimal', so
 * a big enough data section gets all three sizes) or always the 4-byte one
 * ('wide'), and a record that repeats is one data section entry. Networks
 * must not overlap. Verified by reading the output back with mmdb-lib.
 */
import { isIPv4 } from 'node:net';

export type MmdbValue =
  | string
  | number
  | boolean
  | bigint
  | Buffer
  | Typed
  | MmdbValue[]
  | { [key: string]: MmdbValue };

/** A value of a type a JS value does not pick by itself. */
export class Typed {
  constructor(
    readonly type: 'uint16' | 'uint32' | 'int32' | 'uint64' | 'uint128' | 'float' | 'double',
    readonly value: number | bigint,
  ) {}
}
export const typed = (type: Typed['type'], value: number | bigint) => new Typed(type, value);

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
  /** Default 24. */
  recordSize?: 24 | 28 | 32;
  /** Default 'none': every value written out in full. */
  pointers?: 'none' | 'minimal' | 'wide';
  /** Metadata fields to replace (to write a bad database). */
  metadata?: Record<string, MmdbValue>;
  /** Told the size (the SS bits, 0-3) of every pointer written. */
  onPointer?: (size: number) => void;
}

const METADATA_MARKER = Buffer.from([0xab, 0xcd, 0xef, ...Buffer.from('MaxMind.com')]);

/** Control byte(s) with the payload size: spec § "Data Field Format", § "Payload Size". */
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

function scalar(value: MmdbValue): Buffer | undefined {
  if (typeof value === 'string') {
    const bytes = Buffer.from(value, 'utf8');
    return Buffer.concat([controlBytes(2, bytes.length), bytes]);
  }
  if (typeof value === 'boolean') return controlBytes(14, value ? 1 : 0);
  if (typeof value === 'bigint') return scalar(typed('uint64', value));
  if (Buffer.isBuffer(value)) return Buffer.concat([controlBytes(4, value.length), value]);
  if (typeof value === 'number') {
    if (Number.isInteger(value) && value >= 0 && value <= 0xffffffff) return scalar(typed('uint32', value));
    return scalar(typed('double', value));
  }
  if (value instanceof Typed) {
    const { type, value: v } = value;
    switch (type) {
      case 'double': {
        const bytes = Buffer.alloc(8);
        bytes.writeDoubleBE(Number(v));
        return Buffer.concat([controlBytes(3, 8), bytes]);
      }
      case 'float': {
        const bytes = Buffer.alloc(4);
        bytes.writeFloatBE(Number(v));
        return Buffer.concat([controlBytes(15, 4), bytes]);
      }
      case 'int32': {
        // Two's complement; a positive value takes only the bytes it needs.
        const n = Number(v);
        const bytes = n < 0 ? Buffer.alloc(4) : uintBytes(BigInt(n));
        if (n < 0) bytes.writeInt32BE(n);
        return Buffer.concat([controlBytes(8, bytes.length), bytes]);
      }
      default: {
        const bytes = uintBytes(BigInt(v));
        const number = { uint16: 5, uint32: 6, uint64: 9, uint128: 10 }[type];
        return Buffer.concat([controlBytes(number, bytes.length), bytes]);
      }
    }
  }
  return undefined;
}

/** The whole value in one buffer, no pointers (used for the metadata and by callers). */
export function encodeValue(value: MmdbValue): Buffer {
  const s = scalar(value);
  if (s) return s;
  if (Array.isArray(value)) return Buffer.concat([controlBytes(11, value.length), ...value.map(encodeValue)]);
  const entries = Object.entries(value as Record<string, MmdbValue>);
  return Buffer.concat([
    controlBytes(7, entries.length),
    ...entries.flatMap(([k, v]) => [encodeValue(k), encodeValue(v)]),
  ]);
}

/** Pointer field to data section offset `to`: spec § "Pointers" (001SSVVV); its size is (byte 0 >> 3) & 3. */
function pointerBytes(to: number, wide: boolean): Buffer {
  if (!wide && to < 2048) return Buffer.from([0x20 | (to >> 8), to & 0xff]);
  if (!wide && to < 526_336) {
    const v = to - 2048;
    return Buffer.from([0x28 | (v >> 16), (v >> 8) & 0xff, v & 0xff]);
  }
  if (!wide && to < 526_336 + 2 ** 27) {
    const v = to - 526_336;
    return Buffer.from([0x30 | (v >>> 24), (v >> 16) & 0xff, (v >> 8) & 0xff, v & 0xff]);
  }
  const out = Buffer.alloc(5);
  out[0] = 0x38;
  out.writeUInt32BE(to, 1);
  return out;
}

/** A key naming the value exactly, so equal values share one copy. */
function canonical(value: MmdbValue): string {
  if (typeof value === 'bigint') return `n${value}`;
  if (Buffer.isBuffer(value)) return `b${value.toString('hex')}`;
  if (value instanceof Typed) return `t${value.type}:${value.value}`;
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (typeof value === 'object') {
    return `{${Object.entries(value)
      .map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`)
      .join(',')}}`;
  }
  return JSON.stringify(value);
}

/** Appends values to a data section, pointing to the copy already written when asked to. */
class DataSection {
  readonly chunks: Buffer[] = [];
  size = 0;
  readonly #seen = new Map<string, number>();
  constructor(
    private readonly pointers: 'none' | 'minimal' | 'wide',
    private readonly onPointer: ((size: number) => void) | undefined,
  ) {}

  /** Writes a record; a repeated one is the same offset (the tree points at it twice). */
  record(value: MmdbValue): number {
    const key = canonical(value);
    const seen = this.pointers === 'none' ? undefined : this.#seen.get(key);
    if (seen !== undefined) return seen;
    const offset = this.size;
    this.#field(value);
    return offset;
  }

  #push(bytes: Buffer): void {
    this.chunks.push(bytes);
    this.size += bytes.length;
  }

  #field(value: MmdbValue): void {
    const shareable = typeof value === 'string' || typeof value === 'object';
    const key = shareable && this.pointers !== 'none' ? canonical(value) : undefined;
    if (key !== undefined) {
      const seen = this.#seen.get(key);
      if (seen !== undefined) {
        const pointer = pointerBytes(seen, this.pointers === 'wide');
        this.onPointer?.((pointer[0]! >> 3) & 3);
        this.#push(pointer);
        return;
      }
      this.#seen.set(key, this.size);
    }
    const s = scalar(value);
    if (s) {
      this.#push(s);
    } else if (Array.isArray(value)) {
      this.#push(controlBytes(11, value.length));
      for (const v of value) this.#field(v);
    } else {
      this.#mapField(value as Record<string, MmdbValue>);
    }
  }

  #mapField(value: Record<string, MmdbValue>): void {
    const entries = Object.entries(value);
    this.#push(controlBytes(7, entries.length));
    for (const [k, v] of entries) {
      this.#field(k);
      this.#field(v);
    }
  }
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

type TreeRecord = { node: number } | { data: number } | undefined;

/** Node layout for each record size: spec § "Node Layout". */
function writeNode(tree: Buffer, at: number, left: number, right: number, recordSize: 24 | 28 | 32): void {
  if (recordSize === 24) {
    tree.writeUIntBE(left, at, 3);
    tree.writeUIntBE(right, at + 3, 3);
  } else if (recordSize === 28) {
    // The low 24 bits of each record at the ends; their top 4 bits share the middle byte, left's first.
    tree.writeUIntBE(left % 2 ** 24, at, 3);
    tree[at + 3] = (Math.floor(left / 2 ** 24) << 4) | Math.floor(right / 2 ** 24);
    tree.writeUIntBE(right % 2 ** 24, at + 4, 3);
  } else {
    tree.writeUInt32BE(left, at);
    tree.writeUInt32BE(right, at + 4);
  }
}

export function buildMmdb(networks: MmdbNetwork[], opts: MmdbOptions): Buffer {
  const recordSize = opts.recordSize ?? 24;
  const nodes: [TreeRecord, TreeRecord][] = [[undefined, undefined]];
  const data = new DataSection(opts.pointers ?? 'none', opts.onPointer);
  for (const { cidr, data: value } of networks) {
    const offset = data.record(value);
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
  const nodeBytes = recordSize / 4;
  const tree = Buffer.alloc(nodeCount * nodeBytes);
  const recordValue = (r: TreeRecord): number =>
    r === undefined ? nodeCount : 'node' in r ? r.node : nodeCount + 16 + r.data;
  for (const [i, [left, right]] of nodes.entries()) {
    const l = recordValue(left);
    const r = recordValue(right);
    if (Math.max(l, r) >= 2 ** recordSize)
      throw new Error(`record ${Math.max(l, r)} too big for ${recordSize} bits`);
    writeNode(tree, i * nodeBytes, l, r, recordSize);
  }
  const metadata = encodeValue({
    node_count: nodeCount,
    record_size: typed('uint16', recordSize),
    ip_version: typed('uint16', opts.ipVersion),
    database_type: opts.databaseType,
    languages: ['en'],
    binary_format_major_version: typed('uint16', 2),
    binary_format_minor_version: typed('uint16', 0),
    build_epoch: BigInt(opts.buildEpoch ?? 1_780_000_000),
    description: { en: opts.description ?? 'netdiag test database' },
    ...opts.metadata,
  });
  return Buffer.concat([tree, Buffer.alloc(16), ...data.chunks, METADATA_MARKER, metadata]);
}
