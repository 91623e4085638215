/**
 * Who pays for a measurement (cache/cached.ts): the request whose lookup finds nothing
 * cached, before anything is measured; never a cached answer, never a request that joins a
 * measurement already under way; a payer's refusal fails its own request alone.
 */
import { describe, expect, it } from 'vitest';
import { CachedLoader, measurementPayer } from '../../../src/cache/cached.js';
import { MemoryCache } from '../../../src/cache/memory.js';

function payer(log: string[], name: string, refuse = false) {
  return () => {
    log.push(name);
    if (refuse) throw new Error(`${name} refused`);
  };
}

describe('measurementPayer', () => {
  it('charges a miss once, before the measurement, and never a hit', async () => {
    const loader = new CachedLoader(new MemoryCache());
    const log: string[] = [];
    const measure = async () => {
      log.push('measured');
      return { value: 1, ttl: 60 };
    };
    await measurementPayer.run(payer(log, 'a'), () => loader.load('k', measure));
    await measurementPayer.run(payer(log, 'b'), () => loader.load('k', measure));
    expect(log).toEqual(['a', 'measured']);
  });

  it('does not charge a request that joins a measurement under way', async () => {
    const loader = new CachedLoader(new MemoryCache());
    const log: string[] = [];
    let finish: (v: { value: number; ttl: number }) => void = () => {};
    const slow = () => {
      log.push('measured');
      return new Promise<{ value: number; ttl: number }>((resolve) => {
        finish = resolve;
      });
    };
    const first = measurementPayer.run(payer(log, 'a'), () => loader.load('k', slow));
    await new Promise((r) => setImmediate(r));
    const joined = measurementPayer.run(payer(log, 'b'), () => loader.load('k', slow));
    finish({ value: 7, ttl: 60 });
    expect((await first).value).toBe(7);
    expect((await joined).value).toBe(7);
    expect(log).toEqual(['a', 'measured']);
  });

  it('fails only the refused request, with nothing measured; the next payer measures', async () => {
    const loader = new CachedLoader(new MemoryCache());
    const log: string[] = [];
    const measure = async () => {
      log.push('measured');
      return { value: 2, ttl: 60 };
    };
    await expect(
      measurementPayer.run(payer(log, 'a', true), () => loader.load('k', measure)),
    ).rejects.toThrow('a refused');
    expect(log).toEqual(['a']);
    const ok = await measurementPayer.run(payer(log, 'b'), () => loader.load('k', measure));
    expect(ok).toMatchObject({ value: 2, hit: false });
    expect(log).toEqual(['a', 'b', 'measured']);
  });

  it("measures for a caller with no payer (the server's own lookups) as before", async () => {
    const loader = new CachedLoader(new MemoryCache());
    await expect(loader.load('k', async () => ({ value: 3, ttl: 0 }))).resolves.toMatchObject({ value: 3 });
  });
});
