/**
 * The fake crt.sh answers as crt.sh does (certwatch_db fnc/web_apis.fnc,
 * crtsh/crtsh-web), so a test passing against it means something: one
 * search for either spelling of `q`, its refusal of other `%`s, its
 * `exclude=expired`, its error page, and fixtures in its JSON shape.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpClient } from '../../../src/providers/http-client.js';
import {
  CRTSH_RECOVERY_CONFLICT,
  crtshDatabaseError,
  crtshSearchValue,
  type FakeCrtsh,
  startCrtsh,
} from '../../fakes/crtsh.js';
import { fixture, fixtureText } from '../../fakes/https-upstream.js';
import { getTestPki } from '../../fakes/test-ca.js';

const NOW = Date.parse('2025-06-01T00:00:00Z');
type Row = { name_value: string; not_after: string; result_count: number; id: number };
const EXAMPLE = fixture('ct/crtsh-scenario-example.com.json') as Row[];
const AT_CAP = fixture('ct/crtsh-scenario-big.test-at-cap.json') as Row[];

let crtsh: FakeCrtsh;
let http: HttpClient;

beforeAll(async () => {
  http = new HttpClient({ ca: (await getTestPki()).caPem });
  crtsh = await startCrtsh({ answers: { 'example.com': EXAMPLE }, clock: () => NOW });
});
afterAll(async () => {
  await http.close();
  await crtsh.close();
});

async function get(query: string): Promise<{ status: number; text: string }> {
  const res = await http.send(`${crtsh.url}/?${query}`, {
    signal: AbortSignal.timeout(5000),
    passStatuses: [503],
  });
  return { status: res.status, text: res.body.toString('utf8') };
}

describe('the fake crt.sh', () => {
  it('strips a leading `%.` (or a `%…%` pair) as web_apis.fnc does, and matches case-insensitively', () => {
    expect(crtshSearchValue('%.example.com')).toBe('example.com');
    expect(crtshSearchValue(' Example.COM ')).toBe('example.com');
    expect(crtshSearchValue('%example.com%')).toBe('example.com');
    expect(crtshSearchValue('a%b.example.com')).toBeUndefined();
  });

  it('answers either spelling of the search with the same rows', async () => {
    const both = await Promise.all([get('q=%25.example.com&output=json'), get('q=example.com&output=json')]);
    expect(both[0]).toEqual(both[1]);
    expect(JSON.parse(both[0].text)).toEqual(EXAMPLE);
    expect(crtsh.searches('example.com')).toHaveLength(2);
  });

  it("refuses any other `%` with crt.sh's database error page", async () => {
    const res = await get('q=a%25b.example.com&output=json');
    expect(res.status).toBe(503);
    expect(res.text).toContain('terminated by the crt.sh database server');
    expect(res.text).toContain('Unsupported use of &#39;%&#39; (SQLSTATE P0002)');
  });

  it('with exclude=expired, leaves out what has expired by its clock', async () => {
    const rows = JSON.parse((await get('q=example.com&output=json&exclude=expired')).text) as Row[];
    expect(rows.length).toBeGreaterThan(0);
    expect(rows.length).toBeLessThan(EXAMPLE.length);
    expect(rows.every((r) => Date.parse(`${r.not_after}Z`) >= NOW)).toBe(true);
  });

  it('renders every database error on the one page, the message escaped', () => {
    const page = String(crtshDatabaseError('ERROR: a < b & "c"', 1).body);
    expect(page).toContain('after <B>1</B> second with the following messages');
    expect(page).toContain('ERROR: a &lt; b &amp; &quot;c&quot;</TEXTAREA>');
    expect(CRTSH_RECOVERY_CONFLICT.status).toBe(503);
    expect(fixtureText('ct/crtsh-503-statement-timeout.html')).toContain(
      'canceling statement due to statement timeout',
    );
  });
});

describe('the crt.sh fixtures', () => {
  const names = (r: Row) => r.name_value.split('\n');

  it("carry today's columns, in row_to_json's order", () => {
    for (const rows of [EXAMPLE, AT_CAP]) {
      for (const row of rows) {
        expect(Object.keys(row)).toEqual([
          'issuer_ca_id',
          'issuer_name',
          'common_name',
          'name_value',
          'id',
          'entry_timestamp',
          'not_before',
          'not_after',
          'serial_number',
          'result_count',
        ]);
      }
    }
  });

  it('count every matched name at least once (result_count counts name rows, name_value distinct names)', () => {
    for (const row of [...EXAMPLE, ...AT_CAP]) {
      expect(row.result_count).toBeGreaterThanOrEqual(names(row).length);
      expect(new Set(names(row)).size).toBe(names(row).length);
    }
  });

  it('the one at the limit sums to exactly 10 000, with one certificate cut short', () => {
    expect(AT_CAP.reduce((sum, r) => sum + r.result_count, 0)).toBe(10_000);
    expect(AT_CAP.filter((r) => r.result_count !== 41)).toEqual([
      expect.objectContaining({ id: 16000000120, result_count: 37 }),
    ]);
    expect(EXAMPLE.reduce((sum, r) => sum + r.result_count, 0)).toBeLessThan(10_000);
  });
});
