/**
 * The consistency summary: answer sets compared ignoring TTL, record order and
 * the spellings DNS treats as equal; rcode kept; only answering countries count.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  answerValues,
  canonicalValue,
  type ResultLike,
  summarizeAnswers,
} from '../../../../src/features/global-dns/summary.js';

type Answer = { name: string; type: string; ttl: number; value: string };

const a = (value: string, ttl = 300, type = 'A'): Answer => ({ name: 'example.com', type, ttl, value });
const finished = (
  country: string,
  answers: Answer[],
  rcode = 'NOERROR',
): ResultLike & { answers: Answer[] } => ({
  country,
  status: 'finished',
  rcode,
  answers,
});
const other = (country: string, status: 'failed' | 'timeout' | 'no_probe'): ResultLike => ({
  country,
  status,
  rcode: null,
  answers: [],
});

describe('summarizeAnswers', () => {
  it('is consistent when every country sees the same records, whatever the TTLs and order', () => {
    const s = summarizeAnswers(
      [
        finished('US', [a('192.0.2.1', 300), a('192.0.2.2', 300)]),
        finished('DE', [a('192.0.2.2', 17), a('192.0.2.1', 17)]),
        finished('JP', [a('192.0.2.1', 1), a('192.0.2.2', 1), a('192.0.2.1', 1)]),
      ],
      'A',
    );
    expect(s).toEqual({
      measured: 3,
      answered: 3,
      unmeasured: [],
      distinct_answer_sets: 1,
      consistent: true,
      answer_sets: [{ rcode: 'NOERROR', values: ['192.0.2.1', '192.0.2.2'], countries: ['US', 'DE', 'JP'] }],
    });
  });

  it('splits countries that see a different record, the most widely seen set first', () => {
    const s = summarizeAnswers(
      [
        finished('US', [a('192.0.2.1')]),
        finished('IN', [a('198.51.100.7')]),
        finished('DE', [a('192.0.2.1')]),
        finished('SG', [a('198.51.100.7')]),
        finished('JP', [a('192.0.2.1')]),
      ],
      'A',
    );
    expect(s.consistent).toBe(false);
    expect(s.distinct_answer_sets).toBe(2);
    expect(s.answer_sets).toEqual([
      { rcode: 'NOERROR', values: ['192.0.2.1'], countries: ['US', 'DE', 'JP'] },
      { rcode: 'NOERROR', values: ['198.51.100.7'], countries: ['IN', 'SG'] },
    ]);
  });

  it('keeps equal-sized sets in the order their first country was requested', () => {
    const s = summarizeAnswers([finished('US', [a('192.0.2.9')]), finished('BR', [a('192.0.2.1')])], 'A');
    expect(s.answer_sets.map((set) => set.countries)).toEqual([['US'], ['BR']]);
  });

  it('compares only records of the asked type: a different CNAME hop to the same addresses agrees', () => {
    const viaFastly = [{ ...a('jsdelivr.map.fastly.net', 180, 'CNAME') }, a('192.0.2.1')];
    const viaOther = [{ ...a('other.cdn.example', 60, 'CNAME') }, a('192.0.2.1')];
    const s = summarizeAnswers([finished('US', viaFastly), finished('GB', viaOther)], 'A');
    expect(s.consistent).toBe(true);
  });

  it('tells NXDOMAIN apart from an empty NOERROR (a delegation still propagating)', () => {
    const s = summarizeAnswers([finished('US', [], 'NXDOMAIN'), finished('GB', [], 'NOERROR')], 'A');
    expect(s.distinct_answer_sets).toBe(2);
    expect(s.consistent).toBe(false);
    expect(s.answer_sets.map((set) => set.rcode).sort()).toEqual(['NOERROR', 'NXDOMAIN']);
  });

  it('leaves failed, timed-out and unmeasured countries out of the comparison, and counts them', () => {
    const s = summarizeAnswers(
      [
        finished('US', [a('192.0.2.1')]),
        other('ZA', 'no_probe'),
        other('AU', 'failed'),
        other('JP', 'timeout'),
        finished('GB', [a('192.0.2.1')]),
      ],
      'A',
    );
    expect(s).toMatchObject({
      measured: 4,
      answered: 2,
      unmeasured: ['ZA'],
      distinct_answer_sets: 1,
      consistent: true,
    });
    expect(s.answer_sets[0]?.countries).toEqual(['US', 'GB']);
  });

  it('claims no consistency when nobody answered', () => {
    const s = summarizeAnswers([other('US', 'no_probe'), other('GB', 'failed')], 'A');
    expect(s).toMatchObject({
      measured: 1,
      answered: 0,
      distinct_answer_sets: 0,
      consistent: false,
      answer_sets: [],
    });
  });

  it('property: shuffling records and changing TTLs never changes the summary', () => {
    const ip = fc.ipV4();
    const answers = fc.array(
      fc.record({ value: ip, ttl: fc.nat(86_400) }).map((r) => a(r.value, r.ttl)),
      { maxLength: 6 },
    );
    fc.assert(
      fc.property(
        answers,
        fc.array(fc.nat(86_400), { minLength: 6, maxLength: 6 }),
        fc.nat(),
        (records, ttls, seed) => {
          const shuffled = [...records]
            .map((r, i) => ({ ...r, ttl: ttls[i % ttls.length] ?? 0, k: (i * 7919 + seed) % 101 }))
            .sort((x, y) => x.k - y.k)
            .map(({ k: _k, ...r }) => r);
          const s = summarizeAnswers([finished('US', records), finished('DE', shuffled)], 'A');
          expect(s.consistent).toBe(true);
          expect(s.distinct_answer_sets).toBe(1);
        },
      ),
    );
  });
});

describe('canonicalValue', () => {
  it.each([
    ['CNAME', 'Jsdelivr.Map.Fastly.NET.', 'jsdelivr.map.fastly.net'],
    ['NS', 'NS1.Example.com.', 'ns1.example.com'],
    ['MX', '10   MX.Example.com.', '10 mx.example.com'],
    [
      'SOA',
      'NS.Example.com. Hostmaster.Example.com. 2024010101 7200 3600 1209600 300',
      'ns.example.com hostmaster.example.com 2024010101 7200 3600 1209600 300',
    ],
    ['AAAA', '2001:DB8:0:0:0:0:0:1', '2001:db8::1'],
    ['CAA', '0 ISSUE "letsencrypt.org"', '0 issue "letsencrypt.org"'],
    ['TXT', '"v=spf1 Include:_spf.Example.com ~all"', '"v=spf1 Include:_spf.Example.com ~all"'],
    ['A', ' 192.0.2.1 ', '192.0.2.1'],
  ])('%s %s → %s', (type, value, expected) => {
    expect(canonicalValue(type, value)).toBe(expected);
  });

  it('keeps a serial difference visible: SOA sets differ while a zone change propagates', () => {
    const old = answerValues([a('ns.example.com host.example.com 1 2 3 4 5', 60, 'SOA')], 'SOA');
    const fresh = answerValues([a('ns.example.com host.example.com 2 2 3 4 5', 60, 'SOA')], 'SOA');
    expect(old).not.toEqual(fresh);
  });

  it('keeps TXT case-sensitive: different tokens are different answers', () => {
    expect(canonicalValue('TXT', '"token=AbC"')).not.toBe(canonicalValue('TXT', '"token=abc"'));
  });
});
