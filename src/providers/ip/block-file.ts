/**
 * Random reads from a large read-only file through a small bounded cache of
 * fixed-size blocks, so that a process holds a few MiB of a 100 MB database
 * and the OS page cache holds the one copy every process on the machine
 * shares. The same class serves from a Buffer, for fallbacks and tests, so
 * readers above it have one interface.
 *
 * Reads are synchronous on purpose: they are what a page fault on an mmap'd
 * file is in libmaxminddb or the Go reader. A page-cache hit costs a couple
 * of microseconds; an async hop per tree node (a lookup walks up to 128)
 * would cost more than the read, and a lookup would interleave with other
 * requests for no gain. Only a cold page reaches the disk, once per machine.
 *
 * The cached blocks live in slots of one preallocated slab (the LRU maps a
 * block number to its slot), so the bound is the memory: no Buffer object,
 * backing store or allocation per block, and a miss refills the slot of the
 * block it evicts.
 */
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { LRUCache } from 'lru-cache';

export interface BlockFileOptions {
  /**
   * Bytes per block: one pread each. Default 1 KiB: an MMDB lookup touches
   * two or three blocks wherever they are, so small blocks let a cache of
   * a given size hold the blocks of four times as many lookups as 4 KiB
   * pages would, at the same cost per read.
   */
  blockSize?: number;
  /** Bound on the cached blocks' bytes, rounded down to whole blocks (at least one). Default 4 MiB. */
  maxBytes?: number;
}

const EMPTY = Buffer.alloc(0);

export class BlockFile {
  /** Bytes in the file (or buffer). */
  readonly size: number;
  readonly blockSize: number;
  #fd: number | undefined;
  /** The cached blocks (slot i at i · blockSize), or the whole buffer. */
  #slab: Buffer;
  readonly #blocks: LRUCache<number, number> | undefined;
  #slotsUsed = 0;
  /*
   * The block read last, tried before the LRU (a record decodes from one
   * block in dozens of reads): file positions [#lo, #hi) are at slab index
   * position - #base.
   */
  #lo = 0;
  #hi = 0;
  #base = 0;
  #diskReads = 0;

  private constructor(size: number, blockSize: number, slab: Buffer, fd: number | undefined) {
    this.size = size;
    this.blockSize = blockSize;
    this.#slab = slab;
    this.#fd = fd;
    if (fd === undefined) {
      // A buffer is its one block, always current: no read goes past the range check.
      this.#hi = size;
    } else {
      this.#blocks = new LRUCache<number, number>({ max: slab.length / blockSize });
    }
  }

  /** Opens `path` for positional reads. Throws what openSync throws (ENOENT, EACCES…). */
  static open(path: string, opts: BlockFileOptions = {}): BlockFile {
    const blockSize = opts.blockSize ?? 1024;
    if (!Number.isInteger(blockSize) || blockSize < 16) throw new RangeError(`bad block size ${blockSize}`);
    const slots = Math.max(1, Math.floor((opts.maxBytes ?? 4 * 1024 * 1024) / blockSize));
    const fd = openSync(path, 'r');
    try {
      // Uninitialized and untouched: pages count towards RSS only once a block is read into them.
      return new BlockFile(fstatSync(fd).size, blockSize, Buffer.allocUnsafeSlow(slots * blockSize), fd);
    } catch (err) {
      closeSync(fd);
      throw err;
    }
  }

  /** Serves `buffer` itself (no copy, no cache). */
  static fromBuffer(buffer: Buffer): BlockFile {
    return new BlockFile(buffer.length, buffer.length, buffer, undefined);
  }

  /** Bytes of the file this reader holds in memory: the cached blocks, or the whole buffer. */
  get cachedBytes(): number {
    return this.#blocks ? this.#blocks.size * this.blockSize : this.#slab.length;
  }

  /** Blocks read from the file so far (cache misses). */
  get diskReads(): number {
    return this.#diskReads;
  }

  get closed(): boolean {
    return this.#slab === EMPTY;
  }

  /** Closes the file descriptor and lets the cache (or buffer) go; later reads throw. Idempotent. */
  close(): void {
    const fd = this.#fd;
    this.#fd = undefined;
    this.#slab = EMPTY;
    this.#blocks?.clear();
    this.#lo = this.#hi = this.#base = 0;
    if (fd !== undefined) closeSync(fd);
  }

  byte(position: number): number {
    if (!(position >= this.#lo && position < this.#hi)) this.#load(position);
    return this.#slab[position - this.#base]!;
  }

  /** Big-endian unsigned integer of `length` (≤ 6) bytes. */
  uint(position: number, length: number): number {
    if (!(position >= this.#lo && position < this.#hi)) this.#load(position);
    let value = 0;
    if (position + length <= this.#hi) {
      const slab = this.#slab;
      const from = position - this.#base;
      for (let i = 0; i < length; i++) value = value * 256 + slab[from + i]!;
    } else {
      for (let i = 0; i < length; i++) value = value * 256 + this.byte(position + i);
    }
    return value;
  }

  /**
   * `length` bytes at `position`: a view into the cache when they lie in one
   * block, else a copy. Use it before the next read (which may refill that
   * block's slot) and never write to it.
   */
  bytes(position: number, length: number): Buffer {
    if (length === 0) return EMPTY;
    if (!(position >= this.#lo && position < this.#hi)) this.#load(position);
    if (position + length <= this.#hi) {
      const from = position - this.#base;
      return this.#slab.subarray(from, from + length);
    }
    this.#check(position, length);
    const out = Buffer.allocUnsafe(length);
    for (let done = 0; done < length; ) {
      const at = position + done;
      if (!(at >= this.#lo && at < this.#hi)) this.#load(at);
      const end = Math.min(this.#hi, position + length);
      done += this.#slab.copy(out, done, at - this.#base, end - this.#base);
    }
    return out;
  }

  /** The UTF-8 text of `length` bytes at `position`, decoded in place when they lie in one block. */
  utf8(position: number, length: number): string {
    if (length === 0) return '';
    if (!(position >= this.#lo && position < this.#hi)) this.#load(position);
    if (position + length <= this.#hi) {
      const from = position - this.#base;
      return this.#slab.toString('utf8', from, from + length);
    }
    return this.bytes(position, length).toString('utf8');
  }

  /** Makes the block holding `position` the current one, reading it into a slot on a miss. */
  #load(position: number): void {
    this.#check(position, 1);
    const blocks = this.#blocks;
    if (!blocks) throw new RangeError(`read at ${position} outside the buffer`); // unreachable after #check
    const index = Math.floor(position / this.blockSize);
    let slot = blocks.get(index);
    if (slot === undefined) {
      // A free slot while the slab fills, then the least recently used block's.
      slot = this.#slotsUsed < blocks.max ? this.#slotsUsed++ : blocks.pop();
      if (slot === undefined) throw new Error('block cache has no slot'); // max ≥ 1: pop() on a full cache
      this.#read(index, slot);
      blocks.set(index, slot);
    }
    const start = index * this.blockSize;
    this.#lo = start;
    this.#hi = Math.min(start + this.blockSize, this.size);
    this.#base = start - slot * this.blockSize;
  }

  #read(index: number, slot: number): void {
    const fd = this.#fd;
    if (fd === undefined) throw new Error('BlockFile is closed');
    const start = index * this.blockSize;
    const length = Math.min(this.blockSize, this.size - start);
    const into = slot * this.blockSize;
    // #lo/#hi may name the block whose slot this is: forget it until the read has filled the slot.
    this.#lo = this.#hi = 0;
    for (let done = 0; done < length; ) {
      const n = readSync(fd, this.#slab, into + done, length - done, start + done);
      if (n === 0) throw new Error(`file shrank under the reader: ${start + done} of ${this.size} bytes`);
      done += n;
    }
    this.#diskReads++;
  }

  #check(position: number, length: number): void {
    if (this.closed) throw new Error('BlockFile is closed');
    if (!(position >= 0 && position + length <= this.size)) {
      throw new RangeError(`read of ${length} bytes at ${position} outside the ${this.size}-byte file`);
    }
  }
}
