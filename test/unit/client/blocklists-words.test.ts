/**
 * The words a blocklist answer is drawn in (client/blocklists.ts), which the site, the CLI and /mcp
 * share: each status's tone (a refusal never red), one line per list, listings first, an MX
 * address's line; on a judged answer written for these tests (test/fixtures/blocklists/judged.json:
 * a domain with one list of each status and an MX host with two addresses, held to the route's
 * schema here so it cannot drift from the contract), and the CLI's rendering and the MCP summary
 * of it.
 */
import { readFileSync } from 'node:fs';
import { stripVTControlCharacters } from 'node:util';
import { Value } from 'typebox/value';
import { describe, expect, it } from 'vitest';
import { blocklists } from '../../../src/cli/render/blocklists.js';
import { createStyle } from '../../../src/cli/style.js';
import {
  addressLine,
  blocklistsVerdict,
  countsText,
  LIST_STATUS,
  listsInOrder,
  listWhy,
} from '../../../src/client/blocklists.js';
import {
  type BlocklistsResponse,
  BlocklistsResponseSchema,
} from '../../../src/features/blocklists/blocklists.schema.js';
import { summaries } from '../../../src/features/tools/summaries.js';

const ESC = String.fromCharCode(27);
const judged = JSON.parse(
  readFileSync(new URL('../../fixtures/blocklists/judged.json', import.meta.url), 'utf8'),
) as BlocklistsResponse;
const entry = (status: string) => judged.lists.find((l) => l.status === status)!;

describe('a blocklist answer in words', () => {
  it('the fixture is an answer the route could give, with one list of each status and an MX host', () => {
    expect([...Value.Errors(BlocklistsResponseSchema, judged)]).toEqual([]);
    expect(judged.lists.map((l) => l.status).sort()).toEqual(
      ['broken', 'error', 'listed', 'not_listed', 'refused'].sort(),
    );
    expect(judged.mx?.[0]?.addresses.length).toBe(2);
  });

  it('listed is red, refused amber and never red, error and broken grey, not listed green', () => {
    expect(Object.fromEntries(Object.entries(LIST_STATUS).map(([s, v]) => [s, v.tone]))).toEqual({
      listed: 'bad',
      refused: 'warn',
      error: 'muted',
      broken: 'muted',
      not_listed: 'ok',
    });
  });

  it('one line per list: the code’s meaning, the list declining, no answer, why a broken list is not counted', () => {
    expect(listWhy(entry('listed'))).toBe('127.0.1.2: low-reputation (spam) domain');
    expect(listWhy(entry('refused'))).toBe(
      'The list declined to answer (not a listing), 127.0.0.1: query refused: the list answers 127.0.0.1 to resolvers it refuses, public ones and heavy users.',
    );
    expect(listWhy(entry('error'))).toBe(
      "No answer, not counted: the list's servers did not answer (timeout).",
    );
    expect(listWhy(entry('broken'))).toBe(
      "Not counted: it lists 127.0.0.1's test point INVALID, which must never be listed (RFC 5782 §5): it lists everything.",
    );
    expect(listWhy(entry('not_listed'))).toBe('Not listed.');
    // Several codes at once (a bitmask list): all of them.
    expect(listWhy({ ...entry('listed'), code: '127.0.0.8', codes: ['127.0.0.8', '127.0.0.16'] })).toMatch(
      /^127\.0\.0\.8, 127\.0\.0\.16: /,
    );
  });

  it('listings first, then refusals, errors, broken lists and the lists that do not list it', () => {
    const shuffled = [...judged.lists].reverse();
    expect(listsInOrder(shuffled).map((l) => l.status)).toEqual([
      'listed',
      'refused',
      'error',
      'broken',
      'not_listed',
    ]);
    expect(countsText(judged.lists)).toBe('1 listed, 1 refused, 1 no answer, 1 broken, 1 not listed');
  });

  it('the verdict: the API’s summary, red when listed here or at an MX address, grey when no list answered', () => {
    expect(blocklistsVerdict(judged)).toEqual({ tone: 'bad', label: 'Listed', text: judged.summary });
    const clean = { ...judged, listed_count: 0, lists: judged.lists.filter((l) => l.status !== 'listed') };
    expect(blocklistsVerdict(clean).label).toBe('MX listed');
    const none = { ...clean, mx: null };
    expect(blocklistsVerdict(none)).toMatchObject({ tone: 'ok', label: 'Not listed' });
    const silent = { ...none, lists: none.lists.filter((l) => l.status !== 'not_listed') };
    expect(blocklistsVerdict(silent)).toMatchObject({ tone: 'muted', label: 'No usable answer' });
  });

  it('an MX address in one line: its listed count and the lists that list it', () => {
    const [listed, clean] = judged.mx![0]!.addresses;
    expect(addressLine(listed!)).toBe('listed on 1 of 2 usable lists: Example SpamCop');
    expect(addressLine(clean!)).toBe('listed on none of 1 usable list');
    expect(addressLine({ ...clean!, lists: [...clean!.lists, { ...entry('refused'), kind: 'ip6' }] })).toBe(
      'listed on none of 1 usable list (1 without a usable answer)',
    );
  });

  it('the CLI: aligned rows, listings first, the reason and delisting page under a listing, the MX addresses', () => {
    const plain = blocklists(judged, createStyle(false));
    const text = plain.join('\n');
    expect(text).not.toContain(ESC);
    expect(plain[0]).toBe('LISTED  shop.example');
    const header = plain.findIndex((l) => l.startsWith('STATUS'));
    expect(plain[header - 1]).toBe(
      'Domain lists (5: 1 listed, 1 refused, 1 no answer, 1 broken, 1 not listed)',
    );
    const rows = plain.slice(header + 1, header + 8);
    expect(rows[0]).toMatch(/^listed {6}Example DBL {10}dbl\.example\.org {6}127\.0\.1\.2: low-reputation/);
    expect(rows[1]).toBe('    Reason    https://dbl.example.org/query/shop.example spam domain');
    expect(rows[2]).toBe('    Delisting https://check.example.org/');
    expect(rows[3]).toMatch(/^refused .*The list declined to answer \(not a listing\)/);
    expect(rows[4]).toMatch(/^no answer .*No answer, not counted/);
    expect(rows[5]).toMatch(/^broken .*Not counted: it lists/);
    expect(rows[6]).toMatch(/^not listed .*Not listed\.$/);
    // Columns line up: every row's zone starts where the header's ZONE does.
    const zoneAt = plain[header]!.indexOf('ZONE');
    for (const row of [rows[0], rows[3], rows[4], rows[5], rows[6]])
      expect(row!.slice(zoneAt)).toMatch(/^[a-z0-9.]+\.(org|example) /);
    expect(text).toContain('MX hosts\nmx1.shop.example');
    expect(text).toContain('  192.0.2.25  listed on 1 of 2 usable lists: Example SpamCop');
    expect(text).toContain('  2001:db8::25  listed on none of 1 usable list');
    expect(text).toContain('        Delisting https://www.spamcop.example/bl.shtml');
    // In colour, a refusal is amber (33), never red (31).
    const coloured = blocklists(judged, createStyle(true));
    const refused = coloured.find((l) => stripVTControlCharacters(l).startsWith('refused'))!;
    expect(refused.startsWith(`${ESC}[33mrefused`)).toBe(true);
    expect(coloured.find((l) => stripVTControlCharacters(l).startsWith('listed'))!).toContain(
      `${ESC}[31mlisted`,
    );
  });

  it('the MCP summary leads with the answer’s summary', () => {
    const text = summaries.blocklists_check(judged);
    expect(text.startsWith(judged.summary)).toBe(true);
    expect(text).toContain('Lists: 1 listed, 1 refused, 1 no answer, 1 broken, 1 not listed.');
    expect(text).toContain(
      'MX addresses: mx1.shop.example 192.0.2.25 listed on 1 of 2 usable lists: Example SpamCop, mx1.shop.example 2001:db8::25 listed on none of 1 usable list.',
    );
  });
});
