/**
 * The MaxMind DB data section decoder (MaxMind DB File Format Specification
 * 2.0, "Output Data Section": https://maxmind.github.io/MaxMind-DB/), reading
 * through a BlockFile. Values come out as mmdb-lib returns them, so the two
 * readers can be compared: uint64 and uint128 as BigInt, bytes as a Buffer,
 * maps as plain objects.
 *
 * Stricter than mmdb-lib where the spec fixes a size (double 8 bytes, float
 * 4, int32 at most 4, boolean 0 or 1) and where it forbids something (a
 * pointer to a pointer, a map key that is not a string): a bad file fails
 * with an error rather than an invented value.
 */
import type { BlockFile } from './block-file.js';

export type MmdbValue = string | number | bigint | boolean | Buffer | MmdbValue[] | MmdbMap;
export interface MmdbMap {
  [key: string]: MmdbValue;
}

/** Type numbers: spec § "Output Data Section". */
const POINTER = 1;
const UTF8_STRING = 2;
const DOUBLE = 3;
const BYTES = 4;
const UINT16 = 5;
const UINT32 = 6;
const MAP = 7;
const INT32 = 8;
const UINT64 = 9;
const UINT128 = 10;
const ARRAY = 11;
const CONTAINER = 12;
const END_MARKER = 13;
const BOOLEAN = 14;
const FLOAT = 15;

/** What a pointer of each size (the SS bits of 001SSVVV) adds to its value: spec § "Pointers". */
const POINTER_BASE = [0, 2048, 526_336, 0] as const;

/** Nesting beyond this is a corrupt (or hostile, self-referencing) file; libmaxminddb stops at 512 too. */
const MAX_DEPTH = 512;

export class MmdbFormatError extends Error {
  override readonly name = 'MmdbFormatError';
}

export class MmdbDecoder {
  readonly #file: BlockFile;
  /** File offset of the section pointers count from: the data section, or the metadata. */
  readonly #base: number;
  /** Where the next field starts (file offset). */
  #pos = 0;

  constructor(file: BlockFile, base: number) {
    this.#file = file;
    this.#base = base;
  }

  /** The value whose field starts at file offset `offset`. */
  decodeAt(offset: number): MmdbValue {
    this.#pos = offset;
    return this.#decode(0, false);
  }

  #decode(depth: number, pointedTo: boolean): MmdbValue {
    if (depth > MAX_DEPTH) throw new MmdbFormatError(`data nested deeper than ${MAX_DEPTH} at ${this.#pos}`);
    const file = this.#file;
    let pos = this.#pos;
    const ctrl = file.byte(pos++);
    let type = ctrl >>> 5;
    if (type === POINTER) {
      // § "pointer - 1": "It is illegal for a pointer to point to another pointer."
      if (pointedTo) throw new MmdbFormatError(`a pointer points to the pointer at ${pos - 1}`);
      const size = (ctrl >>> 3) & 3;
      const low = ctrl & 7;
      // Size 3 ignores the three V bits: the value is the next four bytes.
      const target =
        size === 3
          ? file.uint(pos, 4)
          : low * 256 ** (size + 1) + file.uint(pos, size + 1) + POINTER_BASE[size]!;
      const after = pos + size + 1;
      this.#pos = this.#base + target;
      const value = this.#decode(depth + 1, true);
      this.#pos = after;
      return value;
    }
    if (type === 0) {
      // Extended type: the next byte holds the type number minus 7.
      type = 7 + file.byte(pos++);
      if (type < 8 || type > 15) throw new MmdbFormatError(`unknown extended type ${type} at ${pos - 2}`);
    }
    let size = ctrl & 0x1f;
    // Payload sizes 29-31 continue in the next 1-3 bytes: spec § "Payload Size".
    if (size === 29) size = 29 + file.byte(pos++);
    else if (size === 30) {
      size = 285 + file.uint(pos, 2);
      pos += 2;
    } else if (size === 31) {
      size = 65_821 + file.uint(pos, 3);
      pos += 3;
    }
    this.#pos = pos + size;
    switch (type) {
      case UTF8_STRING:
        return file.utf8(pos, size);
      case MAP:
        this.#pos = pos;
        return this.#map(size, depth);
      case UINT16:
        return this.#uint(pos, size, 2, 'uint16');
      case UINT32:
        return this.#uint(pos, size, 4, 'uint32');
      case DOUBLE:
        if (size !== 8) throw new MmdbFormatError(`double of ${size} bytes at ${pos}`);
        return file.bytes(pos, 8).readDoubleBE(0);
      case FLOAT:
        if (size !== 4) throw new MmdbFormatError(`float of ${size} bytes at ${pos}`);
        return file.bytes(pos, 4).readFloatBE(0);
      case ARRAY:
        this.#pos = pos;
        return this.#array(size, depth);
      case BOOLEAN:
        // The size is the value; there is no payload.
        if (size > 1) throw new MmdbFormatError(`boolean of size ${size} at ${pos}`);
        this.#pos = pos;
        return size === 1;
      case BYTES:
        // A copy: a view would pin a whole cached block.
        return Buffer.from(file.bytes(pos, size));
      case INT32: {
        if (size > 4) throw new MmdbFormatError(`int32 of ${size} bytes at ${pos}`);
        const value = file.uint(pos, size);
        // Only a full-width field carries the sign bit (two's complement); a shorter one is positive.
        return size === 4 ? value | 0 : value;
      }
      case UINT64:
        return this.#bigUint(pos, size, 8);
      case UINT128:
        return this.#bigUint(pos, size, 16);
      case CONTAINER:
      case END_MARKER:
        // Neither is a value: nothing points at a container, the end marker ends the section.
        throw new MmdbFormatError(`${type === CONTAINER ? 'data cache container' : 'end marker'} at ${pos}`);
      default:
        throw new MmdbFormatError(`unknown type ${type} at ${pos}`);
    }
  }

  #map(size: number, depth: number): MmdbMap {
    const map: MmdbMap = {};
    for (let i = 0; i < size; i++) {
      const key = this.#decode(depth + 1, false);
      if (typeof key !== 'string') throw new MmdbFormatError(`map key of type ${typeof key}`);
      const value = this.#decode(depth + 1, false);
      // A key named __proto__ is data, not a prototype.
      if (key === '__proto__') Object.defineProperty(map, key, { value, enumerable: true, writable: true });
      else map[key] = value;
    }
    return map;
  }

  #array(size: number, depth: number): MmdbValue[] {
    const array = new Array<MmdbValue>(size);
    for (let i = 0; i < size; i++) array[i] = this.#decode(depth + 1, false);
    return array;
  }

  #uint(pos: number, size: number, max: number, name: string): number {
    if (size > max) throw new MmdbFormatError(`${name} of ${size} bytes at ${pos}`);
    return this.#file.uint(pos, size);
  }

  #bigUint(pos: number, size: number, max: number): bigint {
    if (size > max) throw new MmdbFormatError(`uint${max * 8} of ${size} bytes at ${pos}`);
    let value = 0n;
    for (let i = 0; i < size; i++) value = (value << 8n) | BigInt(this.#file.byte(pos + i));
    return value;
  }
}
