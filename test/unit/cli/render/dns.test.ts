/**
 * `netdiag dns NAME MX` lists the mail servers by preference (issue 31), the summary and the
 * table alike, whatever order the resolver sent; --json keeps the API's body as it came.
 */
import { describe, expect, it } from 'vitest';
import { dns, inPreferenceOrder } from '../../../../src/cli/render/dns.js';
import { FOR_PEOPLE } from '../../../../src/cli/render/index.js';
import { createStyle } from '../../../../src/cli/style.js';
import type { DnsResponse } from '../../../../src/features/dns/dns.schema.js';
import { toolForCommand } from '../../../../src/features/tools/catalog.js';

const mx = (priority: number, exchange: string) => ({ priority, exchange, ttl: 300 });
const row = (type: string, data: string, name = 'mail.example') => ({ name, type, ttl: 300, data });

const body: DnsResponse = {
  target: 'www.example',
  query_name: 'www.example',
  type: 'MX',
  rcode: 'NOERROR',
  authenticated_data: false,
  flags: { aa: false, tc: false, rd: true, ra: true, ad: false, cd: false },
  answers: [
    row('CNAME', 'mail.example', 'www.example'),
    row('MX', '30 c.mx.example'),
    row('MX', '5 z.mx.example'),
    row('MX', '10 b.mx.example'),
    row('MX', '10 a.mx.example'),
  ],
  records: [mx(30, 'c.mx.example'), mx(5, 'z.mx.example'), mx(10, 'b.mx.example'), mx(10, 'a.mx.example')],
  source: 'DNS',
  source_id: 'dns',
  providers_tried: [],
};

describe('netdiag dns: MX records in preference order', () => {
  it('sorts records and the answer rows by preference, then name; the CNAME chain keeps its place', () => {
    const sorted = inPreferenceOrder(body) as DnsResponse;
    expect(sorted.records.map((r) => (r as { exchange?: string }).exchange)).toEqual([
      'z.mx.example',
      'a.mx.example',
      'b.mx.example',
      'c.mx.example',
    ]);
    expect(sorted.answers.map((a) => a.data)).toEqual([
      'mail.example',
      '5 z.mx.example',
      '10 a.mx.example',
      '10 b.mx.example',
      '30 c.mx.example',
    ]);
    // The API's body itself is left as it came (--json prints it).
    expect(body.records[0]).toMatchObject({ priority: 30 });
  });

  it('is what the command shows: the summary and the table both in preference order', () => {
    const shown = FOR_PEOPLE.dns?.(body) ?? body;
    const summary = toolForCommand('dns')?.summarize(shown) ?? '';
    expect(summary.indexOf('5 z.mx.example')).toBeLessThan(summary.indexOf('30 c.mx.example'));
    const table = dns(shown, createStyle(false)).filter((l) => /^mail\.example\s+MX\s/.test(l));
    expect(table.map((l) => l.replace(/.*\s(\d+ \S+)$/, '$1'))).toEqual([
      '5 z.mx.example',
      '10 a.mx.example',
      '10 b.mx.example',
      '30 c.mx.example',
    ]);
  });

  it('leaves other types in the resolver’s order', () => {
    const a = { ...body, type: 'A', answers: [row('A', '192.0.2.2'), row('A', '192.0.2.1')] };
    expect(inPreferenceOrder(a)).toBe(a);
  });
});
