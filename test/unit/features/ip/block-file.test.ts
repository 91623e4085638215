import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { BlockFile } from '../../../../src/providers/ip/block-file.js';

const dir = mkdtempSync(join(tmpdir(), 'netdiag-blocks-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** 1000 bytes where byte i is i mod 251 (a prime: no two nearby blocks look alike). */
const CONTENT = Buffer.from(Array.from({ length: 1000 }, (_, i) => i % 251));
const PATH = join(dir, 'content.bin');
writeFileSync(PATH, CONTENT);

const open = (blockSize: number, maxBytes = 1 << 20) => BlockFile.open(PATH, { blockSize, maxBytes });

describe('BlockFile', () => {
  it('reads bytes and integers at and across block boundaries', () => {
    const file = open(64);
    expect(file.size).toBe(1000);
    expect(file.byte(0)).toBe(0);
    expect(file.byte(63)).toBe(63); // last byte of block 0
    expect(file.byte(64)).toBe(64); // first of block 1
    expect(file.byte(999)).toBe(999 % 251); // in the last, short block
    expect(file.uint(60, 4)).toBe(CONTENT.readUInt32BE(60)); // inside one block
    expect(file.uint(62, 4)).toBe(CONTENT.readUInt32BE(62)); // two bytes in each block
    expect(file.uint(61, 6)).toBe(CONTENT.readUIntBE(61, 6));
    expect(file.uint(996, 4)).toBe(CONTENT.readUInt32BE(996));
    expect(file.uint(10, 0)).toBe(0);
    file.close();
  });

  it('copies a read that spans several blocks, and views one that does not', () => {
    const file = open(64);
    expect(file.bytes(30, 200)).toEqual(CONTENT.subarray(30, 230)); // four blocks
    expect(file.bytes(64, 64)).toEqual(CONTENT.subarray(64, 128)); // exactly one block
    expect(file.bytes(900, 100)).toEqual(CONTENT.subarray(900, 1000)); // up to the end
    expect(file.bytes(5, 0).length).toBe(0);
    const text = Buffer.from('héllo wörld, a string across a block boundary', 'utf8');
    const textPath = join(dir, 'text.bin');
    writeFileSync(textPath, Buffer.concat([Buffer.alloc(60), text]));
    const t = BlockFile.open(textPath, { blockSize: 64 });
    expect(t.utf8(60, text.length)).toBe(text.toString('utf8'));
    expect(t.utf8(60, 3)).toBe('hé');
    file.close();
    t.close();
  });

  it('refuses reads outside the file', () => {
    const file = open(64);
    expect(() => file.byte(1000)).toThrow(RangeError);
    expect(() => file.byte(-1)).toThrow(RangeError);
    expect(() => file.uint(998, 4)).toThrow(RangeError);
    expect(() => file.bytes(990, 20)).toThrow(RangeError);
    expect(() => file.byte(Number.NaN)).toThrow(RangeError);
    file.close();
  });

  it('keeps at most maxBytes of blocks, evicting the least recently used', () => {
    const file = open(100, 300); // three blocks
    for (const block of [0, 1, 2]) file.byte(block * 100);
    expect(file.diskReads).toBe(3);
    expect(file.cachedBytes).toBe(300);
    file.byte(50); // block 0 again: cached, and now the most recent
    expect(file.diskReads).toBe(3);
    file.byte(350); // block 3 evicts block 1, the least recently used
    expect(file.diskReads).toBe(4);
    expect(file.cachedBytes).toBe(300);
    file.byte(250); // block 2: still cached
    file.byte(10); // block 0: still cached
    expect(file.diskReads).toBe(4);
    file.byte(150); // block 1 was evicted: read again
    expect(file.diskReads).toBe(5);
    for (let p = 0; p < 1000; p += 7) expect(file.byte(p)).toBe(CONTENT[p]);
    expect(file.cachedBytes).toBeLessThanOrEqual(300);
    file.close();
  });

  it('answers right when the slot of the block just read is reused (one-block cache)', () => {
    const file = open(64, 64);
    expect(file.bytes(0, 200)).toEqual(CONTENT.subarray(0, 200));
    expect(file.uint(126, 4)).toBe(CONTENT.readUInt32BE(126));
    expect(file.byte(3)).toBe(3);
    expect(file.cachedBytes).toBe(64);
    file.close();
  });

  it('closes its file descriptor; later reads throw', () => {
    const fds = () => (existsSync('/proc/self/fd') ? readdirSync('/proc/self/fd').length : 0);
    const before = fds();
    const file = open(64);
    file.byte(0);
    if (before > 0) expect(fds()).toBe(before + 1);
    file.close();
    if (before > 0) expect(fds()).toBe(before);
    expect(file.closed).toBe(true);
    expect(file.cachedBytes).toBe(0);
    expect(() => file.byte(0)).toThrow(/closed/);
    file.close(); // idempotent
  });

  it('serves a Buffer through the same interface', () => {
    const file = BlockFile.fromBuffer(CONTENT);
    expect(file.size).toBe(1000);
    expect(file.uint(62, 4)).toBe(CONTENT.readUInt32BE(62));
    expect(file.bytes(30, 200)).toEqual(CONTENT.subarray(30, 230));
    expect(file.cachedBytes).toBe(1000);
    expect(() => file.byte(1000)).toThrow(RangeError);
    file.close();
    expect(() => file.byte(0)).toThrow(/closed/);
  });

  it('reads what the file holds for any block size, cache bound and read', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 16, max: 300 }),
        fc.integer({ min: 1, max: 5 }),
        fc.array(fc.tuple(fc.integer({ min: 0, max: 999 }), fc.integer({ min: 0, max: 400 })), {
          minLength: 1,
          maxLength: 30,
        }),
        (blockSize, blocks, reads) => {
          const file = open(blockSize, blockSize * blocks);
          try {
            for (const [at, wanted] of reads) {
              const length = Math.min(wanted, 1000 - at);
              expect(file.bytes(at, length)).toEqual(CONTENT.subarray(at, at + length));
              if (length >= 1)
                expect(file.uint(at, Math.min(length, 6))).toBe(CONTENT.readUIntBE(at, Math.min(length, 6)));
              expect(file.cachedBytes).toBeLessThanOrEqual(blockSize * blocks);
            }
          } finally {
            file.close();
          }
        },
      ),
      { numRuns: 200 },
    );
  });
});
