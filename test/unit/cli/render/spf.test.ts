/**
 * The CLI's SPF view of a bounded answer (issue 29 F1): the `omitted` step of
 * a long record and the note on an explanation that was cut or not used.
 */
import { describe, expect, it } from 'vitest';
import { spf } from '../../../../src/cli/render/spf.js';
import { createStyle } from '../../../../src/cli/style.js';
import type { SpfResponse } from '../../../../src/features/spf/spf.schema.js';

const body: SpfResponse = {
  domain: 'terms.example',
  ip: '192.0.2.1',
  sender: 'x@terms.example',
  helo: null,
  identity: 'mailfrom',
  result: 'fail',
  explanation_note: 'The exp= text at why.terms.example is not used: it is 60000 characters long.',
  matched: { mechanism: '-all', record_domain: 'terms.example', depth: 0 },
  lookups: 0,
  lookup_limit: 10,
  void_lookups: 0,
  void_lookup_limit: 2,
  trace: [
    { step: 'record', depth: 0, domain: 'terms.example', via: 'check', record: 'v=spf1 …', detail: 'TXT' },
    {
      step: 'term',
      depth: 0,
      domain: 'terms.example',
      term: 'ip4:10.0.0.0/24',
      outcome: 'no_match',
      detail: 'no',
    },
    {
      step: 'omitted',
      depth: 0,
      domain: 'terms.example',
      count: 2550,
      detail: '2550 more terms of this record',
    },
    { step: 'term', depth: 0, domain: 'terms.example', term: '-all', outcome: 'match', detail: 'matches' },
  ],
  received_spf: 'fail',
  authentication_results: 'spf=fail',
  dns_queries: 1,
  checked_at: '2026-11-28T00:00:00.000Z',
  source: 'DNS',
  source_id: 'dns',
  providers_tried: [],
};

describe('netdiag spf: a bounded answer', () => {
  it('prints the omitted step in its place and the explanation note', () => {
    const lines = spf(body, createStyle(false));
    const text = lines.join('\n');
    expect(text).toContain('The exp= text at why.terms.example is not used');
    const at = lines.findIndex((l) => l.includes('2550 more terms of this record'));
    expect(at).toBeGreaterThan(lines.findIndex((l) => l.includes('ip4:10.0.0.0/24')));
    expect(at).toBeLessThan(lines.findIndex((l) => l.includes('-all') && l.includes('match')));
    expect(lines[at]).toMatch(/^ {2}… 2550 more/);
  });
});
