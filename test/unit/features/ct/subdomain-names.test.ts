import { describe, expect, it } from 'vitest';
import { buildHistory } from '../../../../src/features/ct/history.js';
import { selectSubdomainNames } from '../../../../src/features/ct/subdomain-names.js';
import { parseCrtshRows } from '../../../../src/providers/ct/crtsh.js';
import type { CtIssuance } from '../../../../src/providers/ct/types.js';
import { fixture } from '../../../fakes/https-upstream.js';

function issuance(id: string, dns_names: string[], not_before: string, not_after: string): CtIssuance {
  return {
    id,
    source_id: 'crtsh',
    serial: id,
    issuer: { name: 'R3', organization: null },
    common_name: null,
    dns_names,
    not_before,
    not_after,
  };
}

describe('selectSubdomainNames', () => {
  it('on the example.com answer (the real capture plus scenario rows): in-scope, deduplicated, *. stripped', () => {
    const rows = parseCrtshRows(fixture('ct/crtsh-scenario-example.com.json'), 'crtsh');
    const names = selectSubdomainNames(
      'example.com',
      buildHistory('example.com', { issuances: rows, gaps: [] }).issuances,
    );
    expect(names.map((n) => n.name)).toEqual([
      'example.com',
      'api.example.com',
      'shop.example.com',
      'xn--bcher-kva.example.com',
      'www.example.com',
      'dev.example.com',
      'products.example.com',
      'support.example.com',
      'm.example.com',
    ]);
    const byName = Object.fromEntries(names.map((n) => [n.name, n]));
    // *.example.com marks the base name; *.api.example.com marks api.
    expect(byName['example.com']?.wildcard).toBe(true);
    expect(byName['api.example.com']).toEqual({
      name: 'api.example.com',
      wildcard: true,
      first_seen: '2025-05-20T08:00:00Z',
      last_seen: '2025-05-20T08:00:00Z',
      last_not_after: '2025-08-18T07:59:59Z',
      // The precertificate and certificate are one issuance; `x` and `*.x` on it count once.
      certificate_count: 1,
    });
    expect(byName['www.example.com']).toMatchObject({
      wildcard: false,
      first_seen: '2014-11-06T00:00:00Z',
      last_seen: '2023-01-13T00:00:00Z',
      last_not_after: '2024-02-13T23:59:59Z',
      certificate_count: 10,
    });
  });

  it('orders by the latest not_after, then the latest not_before, then name', () => {
    const names = selectSubdomainNames('example.com', [
      issuance('1', ['b.example.com', 'a.example.com'], '2025-01-01T00:00:00Z', '2025-06-01T00:00:00Z'),
      issuance('2', ['c.example.com'], '2025-02-01T00:00:00Z', '2025-06-01T00:00:00Z'),
      issuance('3', ['old.example.com'], '2020-01-01T00:00:00Z', '2020-06-01T00:00:00Z'),
      issuance('4', ['new.example.com'], '2025-03-01T00:00:00Z', '2026-01-01T00:00:00Z'),
    ]);
    expect(names.map((n) => n.name)).toEqual([
      'new.example.com',
      'c.example.com',
      'a.example.com',
      'b.example.com',
      'old.example.com',
    ]);
  });

  it('keeps nothing from out-of-scope names', () => {
    expect(
      selectSubdomainNames('example.com', [
        issuance(
          '1',
          ['example.com.evil.net', 'testexample.com', '*.example.org'],
          '2025-01-01T00:00:00Z',
          '2025-06-01T00:00:00Z',
        ),
      ]),
    ).toEqual([]);
  });
});
