/**
 * A MaxMind DB (MMDB 2.0) reader that reads the file where it lies, through
 * a BlockFile, instead of loading it into a Buffer: written from the MaxMind
 * DB File Format Specification 2.0 (https://maxmind.github.io/MaxMind-DB/;
 * "§" below names its sections). Answers as mmdb-lib's getWithPrefixLength
 * does (record or null, and the prefix length the walk ended at), which the
 * tests check against mmdb-lib on the bundled DB-IP files.
 */
import { BlockFile, type BlockFileOptions } from './block-file.js';
import type { ParsedIp } from './ip-number.js';
import { MmdbDecoder, MmdbFormatError, type MmdbMap, type MmdbValue } from './mmdb-data.js';

export { MmdbFormatError, type MmdbValue } from './mmdb-data.js';

export interface MmdbMetadata {
  nodeCount: number;
  recordSize: 24 | 28 | 32;
  ipVersion: 4 | 6;
  databaseType: string;
  languages: string[];
  binaryFormatMajorVersion: number;
  binaryFormatMinorVersion: number;
  buildEpoch: Date;
  description: Record<string, string>;
  /** Bytes of the search tree: § "Calculating the Search Tree Section Size". */
  searchTreeSize: number;
}

/** § "Database Metadata": the last occurrence of this marker starts the metadata, within the last 128 KiB. */
const METADATA_MARKER = Buffer.from('\xab\xcd\xefMaxMind.com', 'latin1');
const METADATA_MAX = 128 * 1024;
/** § "Data Section Separator": 16 zero bytes between the tree and the data. */
const SEPARATOR = 16;

export class MmdbFile {
  readonly metadata: MmdbMetadata;
  readonly #file: BlockFile;
  readonly #data: MmdbDecoder;
  readonly #nodeBytes: number;
  /** File offset of the data section and its end (the metadata marker). */
  readonly #dataStart: number;
  readonly #dataEnd: number;
  #ipv4Start: number | undefined;

  /** Reads the metadata; throws MmdbFormatError for a file that is not an MMDB 2.x database. */
  constructor(file: BlockFile) {
    this.#file = file;
    const markerAt = findMarker(file);
    const metadata = parseMetadata(file, markerAt + METADATA_MARKER.length);
    this.metadata = metadata;
    this.#nodeBytes = metadata.recordSize / 4;
    this.#dataStart = metadata.searchTreeSize + SEPARATOR;
    this.#dataEnd = markerAt;
    if (this.#dataStart > this.#dataEnd) {
      throw new MmdbFormatError(`search tree of ${metadata.nodeCount} nodes overruns the file`);
    }
    this.#data = new MmdbDecoder(file, this.#dataStart);
  }

  /** Opens `path` for on-demand reads; the caller closes it. */
  static open(path: string, opts?: BlockFileOptions): MmdbFile {
    const file = BlockFile.open(path, opts);
    try {
      return new MmdbFile(file);
    } catch (err) {
      file.close();
      throw err;
    }
  }

  /** Bytes of the file held in this process (the block cache). */
  get cachedBytes(): number {
    return this.#file.cachedBytes;
  }

  close(): void {
    this.#file.close();
  }

  /**
   * The record for `ip` (null when the tree has none) and the prefix length
   * of the network it is filed under. An IPv4 address in an IPv6 tree is
   * looked up under ::/96 and its prefix length counts IPv4 bits, as
   * mmdb-lib does. An IPv6 address has no place in an IPv4 tree: that throws.
   */
  getWithPrefixLength(ip: ParsedIp): [MmdbValue | null, number] {
    const { nodeCount } = this.metadata;
    let node: number;
    let depth = 0;
    if (ip.version === 4) {
      node = this.#ipv4StartNode();
      const v4 = ip.v4;
      for (; depth < 32 && node < nodeCount; depth++) node = this.#record(node, (v4 >>> (31 - depth)) & 1);
    } else {
      if (this.metadata.ipVersion === 4) throw new RangeError('an IPv6 address in an IPv4 database');
      node = 0;
      const w = ip.w;
      for (; depth < 128 && node < nodeCount; depth++) {
        node = this.#record(node, (w[depth >>> 5]! >>> (31 - (depth & 31))) & 1);
      }
    }
    if (node <= nodeCount) return [null, depth]; // equal: no data; smaller: the tree is deeper than an address
    return [this.#resolve(node), depth];
  }

  /** The left (bit 0) or right (bit 1) record of `node`: § "Node Layout". */
  #record(node: number, bit: number): number {
    const file = this.#file;
    const at = node * this.#nodeBytes;
    switch (this.metadata.recordSize) {
      case 24:
        return file.uint(at + bit * 3, 3);
      case 28: {
        // The middle byte holds the top four bits of both records: left in its high nibble, right in its low.
        const middle = file.byte(at + 3);
        return bit === 0
          ? (middle >>> 4) * 0x1000000 + file.uint(at, 3)
          : (middle & 0x0f) * 0x1000000 + file.uint(at + 4, 3);
      }
      default:
        return file.uint(at + bit * 4, 4);
    }
  }

  /** § "IPv4 addresses in an IPv6 tree": the node reached by 96 zero bits, found once. */
  #ipv4StartNode(): number {
    if (this.#ipv4Start !== undefined) return this.#ipv4Start;
    let node = 0;
    if (this.metadata.ipVersion === 6) {
      for (let i = 0; i < 96 && node < this.metadata.nodeCount; i++) node = this.#record(node, 0);
    }
    this.#ipv4Start = node;
    return node;
  }

  /** A record value above the node count points into the data section: § "Search Lookup Algorithm". */
  #resolve(record: number): MmdbValue {
    const offset = record - this.metadata.nodeCount + this.metadata.searchTreeSize;
    if (offset < this.#dataStart || offset >= this.#dataEnd) {
      throw new MmdbFormatError(`search tree record ${record} points outside the data section`);
    }
    return this.#data.decodeAt(offset);
  }
}

function findMarker(file: BlockFile): number {
  const from = Math.max(0, file.size - METADATA_MAX);
  const at = file.bytes(from, file.size - from).lastIndexOf(METADATA_MARKER);
  if (at < 0) throw new MmdbFormatError('no MaxMind DB metadata marker in the last 128 KiB');
  return from + at;
}

/** The metadata map at `at`; pointers inside it count from `at`, as libmaxminddb and mmdb-lib read them. */
function parseMetadata(file: BlockFile, at: number): MmdbMetadata {
  const raw = new MmdbDecoder(file, at).decodeAt(at);
  if (!isMap(raw)) throw new MmdbFormatError('metadata is not a map');
  const uint = (key: string): number => {
    const v = raw[key];
    if (typeof v === 'number' && Number.isInteger(v) && v >= 0) return v;
    throw new MmdbFormatError(`metadata ${key} missing or not an unsigned integer`);
  };
  const major = uint('binary_format_major_version');
  if (major !== 2) throw new MmdbFormatError(`MaxMind DB format ${major}.x, this reader knows 2.x`);
  const recordSize = uint('record_size');
  if (recordSize !== 24 && recordSize !== 28 && recordSize !== 32) {
    throw new MmdbFormatError(`unsupported record size ${recordSize}`);
  }
  const ipVersion = uint('ip_version');
  if (ipVersion !== 4 && ipVersion !== 6) throw new MmdbFormatError(`bad ip_version ${ipVersion}`);
  const nodeCount = uint('node_count');
  const { build_epoch: epoch, database_type: type, languages, description } = raw;
  if (typeof type !== 'string') throw new MmdbFormatError('metadata database_type missing');
  return {
    nodeCount,
    recordSize,
    ipVersion,
    databaseType: type,
    languages: Array.isArray(languages) ? languages.filter((l) => typeof l === 'string') : [],
    binaryFormatMajorVersion: major,
    binaryFormatMinorVersion: uint('binary_format_minor_version'),
    buildEpoch: new Date(Number(typeof epoch === 'bigint' || typeof epoch === 'number' ? epoch : 0) * 1000),
    description: isMap(description)
      ? Object.fromEntries(
          Object.entries(description).filter((e): e is [string, string] => typeof e[1] === 'string'),
        )
      : {},
    searchTreeSize: (nodeCount * recordSize) / 4,
  };
}

function isMap(v: MmdbValue | undefined): v is MmdbMap {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !Buffer.isBuffer(v);
}
