import { describe, expect, it } from 'vitest';
import { buildHistory, mergeIssuances, newestFirst } from '../../../../src/features/ct/history.js';
import { parseCrtshRows } from '../../../../src/providers/ct/crtsh.js';
import type { CtIssuance, CtRecords } from '../../../../src/providers/ct/types.js';
import { hasShared, sharedFixture } from '../../../shared-data.js';

const records = (issuances: CtIssuance[], more: Partial<CtRecords> = {}): CtRecords => ({
  issuances,
  gaps: [],
  ...more,
});

/** The real capture (../shared); the tests that read it are skipped without it. */
const EXAMPLE = hasShared ? parseCrtshRows(sharedFixture('ct/crtsh-example.com.json'), 'crtsh') : [];

function issuance(over: Partial<CtIssuance>): CtIssuance {
  return {
    id: '1',
    source_id: 'crtsh',
    serial: '01',
    issuer: { name: 'R3', organization: "Let's Encrypt" },
    common_name: null,
    dns_names: ['example.com'],
    not_before: '2025-01-01T00:00:00Z',
    not_after: '2025-04-01T00:00:00Z',
    ...over,
  };
}

describe.skipIf(!hasShared)('buildHistory on the real crt.sh example.com capture', () => {
  const history = buildHistory('example.com', records(EXAMPLE));

  it('merges precertificate/certificate records: 23 rows are 12 issuances for example.com', () => {
    expect(history.total).toBe(12);
    expect(history.issuances).toHaveLength(12);
    expect(history.gaps).toEqual([]);
    // Five log entries of serial 0fd078dd… (same issuer) are one issuance, under the first id logged.
    const group = history.issuances.filter((i) => i.serial === '0fd078dd48f1a2bd4d0f2ba96b6038fe');
    expect(group).toHaveLength(1);
    expect(group[0]?.id).toBe('984858191');
    expect(group[0]?.entry_timestamp).toBe('2018-11-28T21:20:12.606Z');
  });

  it('drops issuances naming nothing in scope (an email-only row, a CA certificate)', () => {
    const ids = history.issuances.map((i) => i.id);
    expect(ids).not.toContain('34083306');
    expect(ids).not.toContain('34001389');
    expect(ids).not.toContain('10570508844');
  });

  it('sorts newest not_before first, then the later not_after, then id', () => {
    expect(history.issuances.map((i) => i.id)).toEqual([
      '8506962125',
      '8396709327',
      '6342480680',
      '5771467708',
      '3692510597',
      '984858191',
      '24558997',
      '24560643',
      '24560621',
      '24564717',
      '10557607',
      '5857507',
    ]);
  });
});

describe('buildHistory', () => {
  it('caps the list, newest kept, and says so', () => {
    const many = Array.from({ length: 5 }, (_, i) =>
      issuance({ id: String(i), serial: `0${i}`, not_before: `2025-01-0${i + 1}T00:00:00Z` }),
    );
    const history = buildHistory('example.com', records(many), 3);
    expect(history.total).toBe(5);
    expect(history.gaps).toEqual([
      { reason: 'issuance_cap', detail: 'Only the 3 newest of 5 issuances are listed.' },
    ]);
    expect(history.issuances.map((i) => i.id)).toEqual(['4', '3', '2']);
  });

  it("keeps the provider's gaps, before its own", () => {
    const gaps = [
      { reason: 'result_cap' as const, detail: 'crt.sh stopped.' },
      { reason: 'expired_excluded' as const, detail: 'Expired left out.' },
    ];
    const many = [issuance({ id: '1', serial: '01' }), issuance({ id: '2', serial: '02' })];
    expect(buildHistory('example.com', records(many, { gaps }), 1).gaps.map((g) => g.reason)).toEqual([
      'result_cap',
      'expired_excluded',
      'issuance_cap',
    ]);
  });

  it('keeps only names on a label boundary: not example.com.evil.net, not testexample.com', () => {
    const history = buildHistory(
      'example.com',
      records([
        issuance({ id: '1', serial: '01', dns_names: ['example.com.evil.net'] }),
        issuance({ id: '2', serial: '02', dns_names: ['m.testexample.com'] }),
        issuance({ id: '3', serial: '03', dns_names: ['*.example.com'] }),
        issuance({ id: '4', serial: '04', dns_names: ['deep.sub.example.com'] }),
      ]),
    );
    expect(history.issuances.map((i) => i.id).sort()).toEqual(['3', '4']);
  });

  it.skipIf(!hasShared)(
    'merges legacy-schema rows (no serial) on issuer, validity and names: 300 rows, 152 issuances',
    () => {
      const legacy = parseCrtshRows(
        sharedFixture('ct/crtsh-python.org-legacy-schema.first300.json'),
        'crtsh',
      );
      expect(buildHistory('python.org', records(legacy)).total).toBe(152);
    },
  );
});

describe('mergeIssuances', () => {
  it('same serial from different issuers are different issuances', () => {
    expect(
      mergeIssuances([
        issuance({ id: '1', issuer: { name: 'A', organization: null } }),
        issuance({ id: '2', issuer: { name: 'B', organization: null } }),
      ]),
    ).toHaveLength(2);
  });

  it('unites names, keeps the lowest id, the earliest entry and any revocation', () => {
    const [merged] = mergeIssuances([
      issuance({
        id: '20',
        dns_names: ['b.example.com'],
        entry_timestamp: '2025-01-02T00:00:00Z',
        revoked: true,
      }),
      issuance({
        id: '3',
        dns_names: ['a.example.com'],
        entry_timestamp: '2025-01-01T00:00:00.5Z',
        common_name: 'a',
      }),
    ]);
    expect(merged).toMatchObject({
      id: '3',
      dns_names: ['a.example.com', 'b.example.com'],
      entry_timestamp: '2025-01-01T00:00:00.5Z',
      common_name: 'a',
      revoked: true,
    });
  });

  it('compares numeric ids as numbers (9 before 10)', () => {
    const [merged] = mergeIssuances([issuance({ id: '10' }), issuance({ id: '9' })]);
    expect(merged?.id).toBe('9');
  });
});

describe('newestFirst', () => {
  it('compares instants, not strings (".5Z" is later than "Z")', () => {
    const a = issuance({ id: 'a', not_before: '2025-01-01T00:00:00Z' });
    const b = issuance({ id: 'b', not_before: '2025-01-01T00:00:00.500Z' });
    expect([a, b].sort(newestFirst).map((i) => i.id)).toEqual(['b', 'a']);
  });
});
