import {
  appendFileSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
  unlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { AsnIndex, AsnIndexError, encodeAsnIndex } from '../../../../src/providers/ip/asn-index.js';
import {
  asnIndexFileName,
  openAsnIndex,
  runAsnIndexWorker,
} from '../../../../src/providers/ip/asn-index-build.js';
import { type AsnTable, AsnTableBuilder } from '../../../../src/providers/ip/asn-table.js';
import { BlockFile } from '../../../../src/providers/ip/block-file.js';
import { formatIpNumber, type ParsedIp, parseIpNumber } from '../../../../src/providers/ip/ip-number.js';
import { fixtureText } from '../../../fakes/https-upstream.js';
import { MAX128, toBig, toWords } from '../../../samples.js';

const dir = mkdtempSync(join(tmpdir(), 'netdiag-asn-index-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let dirs = 0;
const freshDir = () => join(dir, `cache-${dirs++}`);

const V4_CSV = fixtureText('ip/asn-ipv4.csv');
const V6_CSV = fixtureText('ip/asn-ipv6.csv');

function tableOf(...files: string[]): AsnTable {
  const builder = new AsnTableBuilder();
  for (const [i, text] of files.entries()) builder.add(text, `file-${i}.csv`);
  return builder.build();
}

const indexOf = (table: AsnTable) => new AsnIndex(BlockFile.fromBuffer(encodeAsnIndex(table)));

// --- addresses -----------------------------------------------------------------------------

/** Every range edge in the CSV and its neighbours: where a wrong search or overlap rule shows. */
function edges(csv: string): ParsedIp[] {
  const out: ParsedIp[] = [];
  for (const line of csv.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    for (const text of line.split(',').slice(0, 2)) {
      const ip = parseIpNumber(text);
      if (!ip) continue;
      if (ip.version === 4) {
        for (const d of [-1, 0, 1])
          if (ip.v4 + d >= 0 && ip.v4 + d <= 0xffffffff) out.push({ version: 4, v4: ip.v4 + d });
      } else {
        const n = toBig(ip.w);
        for (const d of [-1n, 0n, 1n])
          if (n + d >= 0n && n + d <= MAX128) out.push({ version: 6, w: toWords(n + d) });
      }
    }
  }
  return out;
}

function expectSameAnswers(table: AsnTable, index: AsnIndex, ips: ParsedIp[]): void {
  for (const ip of ips) expect(index.lookup(ip), formatIpNumber(ip)).toStrictEqual(table.lookup(ip));
}

describe('the ASN index format', () => {
  it('answers as the in-memory table, the overlap in the real IPv4 file included', () => {
    const table = tableOf(V4_CSV, V6_CSV);
    const index = indexOf(table);
    expect(index.report).toStrictEqual(table.report);
    expect(index.report.overlaps).toBe(1);
    expectSameAnswers(table, index, [...edges(V4_CSV), ...edges(V6_CSV)]);
    // Spot checks with the answers written out, so the comparison cannot be vacuous.
    expect(index.lookup(parseIpNumber('1.0.0.1')!)).toEqual({ asn: 13335, org: 'Cloudflare, Inc.' });
    expect(index.lookup(parseIpNumber('2.26.200.7')!)).toEqual({ asn: 201907, org: 'LLC "SPUTNIK"' });
    expect(index.lookup(parseIpNumber('214.255.255.255')!)?.asn).toBe(749);
    expect(index.lookup(parseIpNumber('215.0.0.0')!)?.asn).toBe(721);
    expect(index.lookup(parseIpNumber('2001:200:1ba::1')!)?.asn).toBe(24047);
    expect(index.lookup(parseIpNumber('1.0.1.0')!)).toBeUndefined();
    expect(index.lookup(parseIpNumber('::1')!)).toBeUndefined();
  });

  it('answers as the in-memory table for any ranges, overlapping, nested, unsorted or empty-named', () => {
    const v4 = fc.integer({ min: 0, max: 0xffffffff });
    const v6 = fc.bigInt({ min: 0n, max: MAX128 });
    const name = fc.constantFrom('', 'Org A', '"Org, B"', 'Örg Ç ✓', '"Say ""hi"""');
    const asn = fc.integer({ min: 0, max: 0xffffffff });
    const row4 = fc.tuple(v4, v4, asn, name).map(([a, b, n, o]) => {
      const [s, e] = a <= b ? [a, b] : [b, a];
      return `${formatIpNumber({ version: 4, v4: s })},${formatIpNumber({ version: 4, v4: e })},${n},${o}`;
    });
    const row6 = fc.tuple(v6, v6, asn, name).map(([a, b, n, o]) => {
      const [s, e] = a <= b ? [a, b] : [b, a];
      return `${formatIpNumber({ version: 6, w: toWords(s) })},${formatIpNumber({ version: 6, w: toWords(e) })},${n},${o}`;
    });
    fc.assert(
      fc.property(fc.array(row4, { maxLength: 25 }), fc.array(row6, { maxLength: 25 }), (rows4, rows6) => {
        fc.pre(rows4.length + rows6.length > 0);
        const csv4 = rows4.join('\n');
        const csv6 = rows6.join('\n');
        const files = [csv4, csv6].filter((f) => f !== '');
        const table = tableOf(...files);
        expectSameAnswers(table, indexOf(table), files.flatMap(edges));
      }),
      { numRuns: 150 },
    );
  });

  it('refuses a file that is not a whole index', () => {
    const bytes = encodeAsnIndex(tableOf(V4_CSV));
    expect(() => new AsnIndex(BlockFile.fromBuffer(bytes.subarray(0, bytes.length - 1)))).toThrow(
      AsnIndexError,
    );
    expect(() => new AsnIndex(BlockFile.fromBuffer(Buffer.concat([bytes, Buffer.alloc(1)])))).toThrow(
      AsnIndexError,
    );
    expect(() => new AsnIndex(BlockFile.fromBuffer(Buffer.from('NDASNIX0'.padEnd(64, '\0'))))).toThrow(
      /not an ASN index/,
    );
    expect(() => new AsnIndex(BlockFile.fromBuffer(Buffer.alloc(0)))).toThrow(AsnIndexError);
  });
});

describe('openAsnIndex', () => {
  function sources(name = 'src'): string[] {
    const at = join(dir, `${name}-${dirs++}`);
    const paths = [join(`${at}-asn-ipv4.csv`), join(`${at}-asn-ipv6.csv`)];
    writeFileSync(paths[0]!, V4_CSV);
    writeFileSync(paths[1]!, V6_CSV);
    return paths;
  }
  const table = tableOf(V4_CSV, V6_CSV);
  const probes = [...edges(V4_CSV), ...edges(V6_CSV)];

  it('builds the index into the cache directory once, then reuses it', async () => {
    const paths = sources();
    const cacheDir = freshDir();
    const first = await openAsnIndex({ sources: paths, cacheDir });
    expect(first).toMatchObject({ origin: 'built', writeError: undefined });
    expect(first.path).toMatch(/asn-index-[0-9a-f]{16}\.bin$/);
    expectSameAnswers(table, first.index, probes);
    expect(first.index.report).toStrictEqual(table.report);
    const built = statSync(first.path!);

    const second = await openAsnIndex({ sources: paths, cacheDir });
    expect(second).toMatchObject({ origin: 'reused', path: first.path });
    expect(statSync(first.path!).mtimeMs).toBe(built.mtimeMs);
    expect(statSync(first.path!).ino).toBe(built.ino);
    expectSameAnswers(table, second.index, probes);
    expect(second.index.report).toStrictEqual(table.report);
    expect(readdirSync(cacheDir)).toEqual([first.path!.split('/').pop()]);
    first.index.close();
    second.index.close();
  });

  it('builds a new index when a source changes', async () => {
    const paths = sources();
    const cacheDir = freshDir();
    const before = await openAsnIndex({ sources: paths, cacheDir });
    expect(before.index.lookup(parseIpNumber('9.9.9.9')!)).toBeUndefined();
    appendFileSync(paths[0]!, '9.9.9.0,9.9.9.255,19281,Quad9\n');
    const after = await openAsnIndex({ sources: paths, cacheDir });
    expect(after.origin).toBe('built');
    expect(after.path).not.toBe(before.path);
    expect(after.index.lookup(parseIpNumber('9.9.9.9')!)).toEqual({ asn: 19281, org: 'Quad9' });
    before.index.close();
    after.index.close();
  });

  it('rebuilds over an index file that is not whole', async () => {
    const paths = sources();
    const cacheDir = freshDir();
    const { path, index } = await openAsnIndex({ sources: paths, cacheDir });
    index.close();
    writeFileSync(path!, 'NDASNIX1 but cut short');
    const again = await openAsnIndex({ sources: paths, cacheDir });
    expect(again.origin).toBe('built');
    expectSameAnswers(table, again.index, probes);
    again.index.close();
  });

  it('serves the index from memory when the directory cannot be written', async () => {
    const blocker = join(dir, `a-file-${dirs++}`);
    writeFileSync(blocker, 'a file where the cache directory would go');
    const opened = await openAsnIndex({ sources: sources(), cacheDir: join(blocker, 'cache') });
    expect(opened.origin).toBe('memory');
    expect(opened.writeError).toMatch(/ENOTDIR|EEXIST/);
    expectSameAnswers(table, opened.index, probes);
    expect(opened.index.lookup(parseIpNumber('1.0.0.1')!)).toEqual({ asn: 13335, org: 'Cloudflare, Inc.' });

    const nowhere = await openAsnIndex({ sources: sources(), cacheDir: undefined });
    expect(nowhere).toMatchObject({ origin: 'memory', path: undefined, writeError: undefined });
    expectSameAnswers(table, nowhere.index, probes);
  });

  it('has one builder at a time: the others wait for its index and reuse it', async () => {
    const paths = sources();
    const cacheDir = freshDir();
    const opened = await Promise.all([1, 2, 3, 4].map(() => openAsnIndex({ sources: paths, cacheDir })));
    expect(opened.map((o) => o.origin).sort()).toEqual(['built', 'reused', 'reused', 'reused']);
    for (const o of opened) expectSameAnswers(table, o.index, probes);
    // One whole index left; no lock, no temporary file.
    expect(readdirSync(cacheDir)).toEqual([opened[0]!.path!.split('/').pop()]);
    for (const o of opened) o.index.close();
  });

  it("waits for another process's build rather than building too", async () => {
    const paths = sources();
    const cacheDir = freshDir();
    const path = join(cacheDir, await asnIndexFileName(paths));
    mkdirSync(cacheDir, { recursive: true });
    writeFileSync(`${path}.lock`, '12345\n'); // another process is building
    const waiting = openAsnIndex({ sources: paths, cacheDir });
    // The other process finishes: its index appears, its lock goes.
    const elsewhere = await openAsnIndex({ sources: paths, cacheDir: freshDir() });
    await new Promise((r) => setTimeout(r, 250));
    // As a builder writes it: whole, then renamed into place (a reader never sees half a file).
    copyFileSync(elsewhere.path!, `${path}.copy`);
    renameSync(`${path}.copy`, path);
    unlinkSync(`${path}.lock`);
    const opened = await waiting;
    expect(opened.origin).toBe('reused');
    expectSameAnswers(table, opened.index, probes);
    elsewhere.index.close();
    opened.index.close();
  });

  it('takes over the lock of a builder that died', async () => {
    const paths = sources();
    const cacheDir = freshDir();
    const path = join(cacheDir, await asnIndexFileName(paths));
    mkdirSync(cacheDir, { recursive: true });
    writeFileSync(`${path}.lock`, '12345\n');
    const longAgo = new Date(Date.now() - 10 * 60_000);
    utimesSync(`${path}.lock`, longAgo, longAgo);
    const opened = await openAsnIndex({ sources: paths, cacheDir });
    expect(opened.origin).toBe('built');
    expect(existsSync(`${path}.lock`)).toBe(false);
    expectSameAnswers(table, opened.index, probes);
    opened.index.close();
  });

  it('lets builders that do race (no lock) rename whole files over each other harmlessly', async () => {
    const paths = sources();
    const cacheDir = freshDir();
    const output = join(cacheDir, await asnIndexFileName(paths));
    const replies = await Promise.all(
      [1, 2, 3].map(() => runAsnIndexWorker({ sources: paths, output }, undefined)),
    );
    expect(replies.map((r) => r.written)).toEqual([true, true, true]);
    expect(readdirSync(cacheDir)).toEqual([output.split('/').pop()]);
    const reused = await openAsnIndex({ sources: paths, cacheDir });
    expect(reused.origin).toBe('reused');
    expectSameAnswers(table, reused.index, probes);
    reused.index.close();
  });

  it('fails as the table always has for missing or unusable sources', async () => {
    const missing = join(dir, 'nope.csv');
    await expect(openAsnIndex({ sources: [missing], cacheDir: freshDir() })).rejects.toMatchObject({
      code: 'ENOENT',
    });
    const junk = join(dir, `junk-${dirs++}.csv`);
    writeFileSync(junk, '<html>nope</html>\n');
    await expect(openAsnIndex({ sources: [junk], cacheDir: freshDir() })).rejects.toThrow(
      /junk-\d+\.csv: 1 of 1 lines unusable/,
    );
  });

  it('stops a build when asked, before or while the worker runs', async () => {
    const before = new AbortController();
    before.abort(new Error('closed before'));
    await expect(
      openAsnIndex({ sources: sources(), cacheDir: freshDir(), signal: before.signal }),
    ).rejects.toThrow('closed before');
    const during = new AbortController();
    const cacheDir = freshDir();
    const pending = openAsnIndex({ sources: sources(), cacheDir, signal: during.signal });
    // Starting a worker thread (and, from source, compiling its modules) takes far longer than this.
    setTimeout(() => during.abort(new Error('closing')), 5);
    await expect(pending).rejects.toThrow('closing');
  });
});
