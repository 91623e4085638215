/**
 * /api/dns lists MX records by preference (issue 31): a resolver's order is arbitrary, and the
 * site, the CLI and the MCP summaries all read the API's order, so it is made meaningful once.
 */
import { describe, expect, it } from 'vitest';
import { dns as renderDns } from '../../../../src/cli/render/dns.js';
import { createStyle } from '../../../../src/cli/style.js';
import { lookupDns } from '../../../../src/features/dns/dns.service.js';
import { toolForCommand } from '../../../../src/features/tools/catalog.js';
import type { DnsAnswer, DnsResolver, DnsRR } from '../../../../src/providers/dns/index.js';

const mx = (priority: number, exchange: string): DnsRR => ({
  name: 'mail.example',
  type: 'MX',
  ttl: 300,
  data: { priority, exchange },
});

function resolverAnswering(answers: DnsRR[]): Pick<DnsResolver, 'resolve'> {
  const value: DnsAnswer = {
    rcode: 'NOERROR',
    flags: { aa: false, tc: false, rd: true, ra: true, ad: false, cd: false },
    answers,
    authorities: [],
    ede: [],
  };
  return {
    resolve: async () => ({ value, source: 'Fake', source_id: 'fake', providers_tried: [], cache: 'miss' }),
  } as unknown as Pick<DnsResolver, 'resolve'>;
}

const chainThenMx: DnsRR[] = [
  { name: 'www.example', type: 'CNAME', ttl: 300, data: { target: 'mail.example' } },
  mx(30, 'c.mx.example'),
  mx(5, 'z.mx.example'),
  mx(10, 'b.mx.example'),
  mx(10, 'a.mx.example'),
];

describe('/api/dns: MX records in preference order', () => {
  it('sorts records and answer rows by preference, then name; the CNAME chain keeps its place', async () => {
    const { body } = await lookupDns(resolverAnswering(chainThenMx), 'www.example', 'MX');
    expect(body.records.map((r) => (r as { exchange?: string }).exchange)).toEqual([
      'z.mx.example',
      'a.mx.example',
      'b.mx.example',
      'c.mx.example',
    ]);
    expect(body.answers.map((a) => a.data)).toEqual([
      'mail.example',
      '5 z.mx.example',
      '10 a.mx.example',
      '10 b.mx.example',
      '30 c.mx.example',
    ]);
  });

  it('is the order the CLI summary and table show', async () => {
    const { body } = await lookupDns(resolverAnswering(chainThenMx), 'www.example', 'MX');
    const summary = toolForCommand('dns')?.summarize(body) ?? '';
    expect(summary.indexOf('5 z.mx.example')).toBeLessThan(summary.indexOf('30 c.mx.example'));
    const rows = renderDns(body, createStyle(false)).filter((l) => /^mail\.example\s+MX\s/.test(l));
    expect(rows.map((l) => l.replace(/.*\s(\d+ \S+)$/, '$1'))).toEqual([
      '5 z.mx.example',
      '10 a.mx.example',
      '10 b.mx.example',
      '30 c.mx.example',
    ]);
  });

  it('leaves other types in the resolver’s order', async () => {
    const a = (address: string): DnsRR => ({ name: 'www.example', type: 'A', ttl: 300, data: { address } });
    const { body } = await lookupDns(resolverAnswering([a('192.0.2.2'), a('192.0.2.1')]), 'www.example', 'A');
    expect(body.answers.map((r) => r.data)).toEqual(['192.0.2.2', '192.0.2.1']);
  });
});
