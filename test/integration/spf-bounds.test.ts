/**
 * Issue 29 F1: what a hostile domain publishes cannot make one GET /api/spf
 * expensive. The zone is the attack as it was run: a fail with exp= pointing at
 * a 60 KB TXT record (over TCP) of `%{S}` repeated 15 000 times, asked with a
 * 512-character sender, which built a 22.6 MB explanation; and a 51 KB record
 * of ip4 terms whose trace was a 550 KB answer. Each must answer with a bounded
 * body and say what it left out. Sizes and counts are asserted, not times (a
 * bounded answer here takes tens of milliseconds; the unbounded one took 5 s).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeDnsServer, startFakeDnsServer } from '../fakes/dns-server.js';
import { characterStrings, type FakeRecord, testZone } from '../fakes/dns-zones.js';
import { buildTestApp } from '../helper.js';

/** One TXT record, split into character-strings of 255 octets as a zone file would. */
const txt = (name: string, text: string): FakeRecord => ({ name, type: 'TXT', data: characterStrings(text) });

const range = (n: number, term: (i: number) => string) =>
  Array.from({ length: n }, (_, i) => term(i)).join(' ');

/** 51 KB of ip4 terms, none matching 192.0.2.1, then -all. */
const manyTerms = Array.from({ length: 2600 }, (_, i) => `ip4:10.${i >> 8}.${i & 255}.0/24`).join(' ');

const ZONE = testZone('hostile.test', [
  txt('huge.hostile.test', 'v=spf1 -all exp=huge-exp.hostile.test'),
  txt('huge-exp.hostile.test', '%{S}'.repeat(15_000)),
  txt('long.hostile.test', 'v=spf1 -all exp=long-exp.hostile.test'),
  txt('long-exp.hostile.test', `Mail from %{s} is refused: ${'%{d} '.repeat(30)}`),
  txt('fine.hostile.test', 'v=spf1 -all exp=fine-exp.hostile.test'),
  txt('fine-exp.hostile.test', '%{i} is not allowed to send mail for %{d}.'),
  txt('terms.hostile.test', `v=spf1 ${manyTerms} -all`),
  txt('domainspec.hostile.test', `v=spf1 exists:${'%{s}'.repeat(3000)}.hostile.test -all`),
  // Forty records of 51 KB for GET /api/email-security's walk, which follows up to 40.
  txt('tree.hostile.test', `v=spf1 ${range(10, (i) => `include:i${i}.hostile.test`)} -all`),
  ...Array.from({ length: 10 }, (_, i) =>
    txt(
      `i${i}.hostile.test`,
      `v=spf1 ${manyTerms} ${range(3, (j) => `include:${'jkl'[j]}${i}.hostile.test`)} -all`,
    ),
  ),
  ...Array.from({ length: 30 }, (_, n) =>
    txt(`${'jkl'[n % 3]}${Math.floor(n / 3)}.hostile.test`, `v=spf1 ${manyTerms} -all`),
  ),
]);

const SENDER = `${'a'.repeat(490)}@huge.hostile.test`;

let dns: FakeDnsServer;
beforeAll(async () => {
  dns = await startFakeDnsServer({ zones: [ZONE] });
});
afterAll(async () => dns?.close());

async function spf(query: Record<string, string>, url = '/api/spf') {
  const app = await buildTestApp({
    config: {
      dnsResolvers: [dns.udp],
      rateLimitGeneral: { points: 1000, seconds: 60 },
      rateLimitExpensive: { points: 1000, seconds: 60 },
    },
  });
  const res = await app.inject({ url, query });
  expect(res.statusCode, res.body.slice(0, 300)).toBe(200);
  return { body: res.json(), bytes: res.rawPayload.length };
}

describe('F1: a hostile exp= explanation is bounded', () => {
  it('a 60 KB TXT of %{S} with a 512-character sender: no explanation, a note saying why, a small body', async () => {
    expect(SENDER.length).toBeGreaterThan(500);
    const { body, bytes } = await spf({ ip: '192.0.2.1', sender: SENDER });
    expect(body.result).toBe('fail');
    expect(body.explanation).toBeUndefined();
    expect(body.explanation_note).toMatch(/exp-?.*huge-exp\.hostile\.test.*60000 characters/);
    // Unbounded, this body was 22.6 MB and took seconds.
    expect(bytes).toBeLessThan(20_000);
  });

  it('an explanation that expands past the cap is cut at it, and the note says so', async () => {
    const { body, bytes } = await spf({ ip: '192.0.2.1', sender: 'x@long.hostile.test' });
    expect(body.result).toBe('fail');
    expect(body.explanation).toMatch(/^Mail from x@long\.hostile\.test is refused: long\.hostile\.test /);
    expect(body.explanation.length).toBeLessThanOrEqual(512);
    expect(body.explanation.endsWith('…')).toBe(true);
    expect(body.explanation_note).toMatch(/shortened to 512 characters/);
    expect(bytes).toBeLessThan(20_000);
  });

  it('an ordinary explanation is expanded whole, with no note', async () => {
    const { body } = await spf({ ip: '192.0.2.1', sender: 'x@fine.hostile.test' });
    expect(body.explanation).toBe('192.0.2.1 is not allowed to send mail for fine.hostile.test.');
    expect(body.explanation_note).toBeUndefined();
  });
});

describe('F1: a hostile record cannot make the trace or a target grow without bound', () => {
  it('a 51 KB record of 2 600 terms: the trace lists the first terms and counts the rest', async () => {
    const { body, bytes } = await spf({ ip: '192.0.2.1', sender: 'x@terms.hostile.test' });
    expect(body.result).toBe('fail');
    expect(body.matched).toEqual({ mechanism: '-all', record_domain: 'terms.hostile.test', depth: 0 });
    // Unbounded, this answer was 550 KB.
    expect(bytes).toBeLessThan(40_000);
    const terms = body.trace.filter((s: { step: string }) => s.step === 'term');
    expect(terms.length).toBeLessThanOrEqual(60);
    // The term that decided is always shown.
    expect(terms.at(-1)).toMatchObject({ term: '-all', outcome: 'match' });
    const omitted = body.trace.find((s: { step: string }) => s.step === 'omitted');
    expect(omitted).toMatchObject({ depth: 0, domain: 'terms.hostile.test', count: 2600 - 50 });
    const record = body.trace.find((s: { step: string }) => s.step === 'record');
    expect(record.record.length).toBeLessThanOrEqual(2_048);
    expect(record.detail.length).toBeLessThanOrEqual(600);
  });

  it('a domain-spec of 3 000 %{s} macros expands only what the 253-character name keeps', async () => {
    const { body, bytes } = await spf({
      ip: '192.0.2.1',
      sender: `${'b'.repeat(400)}@domainspec.hostile.test`,
    });
    expect(body.result).toBe('fail');
    const exists = body.trace.find((s: { term?: string }) => s.term?.startsWith('exists:'));
    expect(exists.target.length).toBeLessThanOrEqual(253);
    expect(exists.target.endsWith('.hostile.test')).toBe(true);
    expect(exists.term.length).toBeLessThanOrEqual(300);
    expect(bytes).toBeLessThan(20_000);
  });
});

describe('F1: GET /api/email-security shows a bounded SPF tree', () => {
  it('forty records of 51 KB: each record cut, its terms listed up to 50 and counted, the stop point bounded', async () => {
    const { body, bytes } = await spf({ domain: 'tree.hostile.test' }, '/api/email-security');
    const { tree, permerror_at: stop, lookup_count: lookups } = body.details.spf;
    // The root, its 10 includes and the 30 below them.
    expect(tree).toHaveLength(41);
    // The verdict is decided on the whole tree.
    expect(lookups).toBe(40);
    expect(stop).toMatchObject({ reason: 'lookup_limit', lookups: 11 });
    for (const node of tree.slice(1)) {
      expect(node.record.length).toBeLessThanOrEqual(2_048);
      expect(node.terms).toHaveLength(50);
      expect(node.terms_omitted).toBeGreaterThan(2_500);
    }
    expect(stop.evaluated_before).toHaveLength(50);
    expect(stop.evaluated_before_omitted).toBeGreaterThan(2_500);
    // Unbounded, this answer was 9.2 MB (and 12 s: the replay searched its list once per term).
    expect(bytes).toBeLessThan(400_000);
  });
});
