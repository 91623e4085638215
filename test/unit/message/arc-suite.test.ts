/**
 * The ARC validation suite (ValiMail/arc_test_suite, MIT; read from ../shared/suites/, never
 * copied here): every entry's expected chain validation (`cv`) must come out of
 * authenticateMessage, with a resolver answering from the scenario's `txt-records`.
 *
 * Where the suite and RFC 8617 disagree, the RFC wins:
 * - the three entries with an empty `cv` (their newest seal already says cv=fail) are `fail`
 *   (RFC 8617 §5.2 step 2: a chain whose newest seal says cv=fail has failed);
 * - `ams_fields_c_na` relies on an old draft's default canonicalization (relaxed/relaxed; RFC
 *   6376 §3.5's default is simple/simple) and `ams_fields_h_empty` on an empty h=, which RFC
 *   6376 §3.5 forbids: either result is accepted for them.
 * The suite is read by test/fixtures/arc/suite.ts (the conformance test through the API reads it too).
 */

import { describe, expect, it } from 'vitest';
import { authenticateMessage, type KeyResolver } from '../../../src/message/authenticate.js';
import { loadArcSuite } from '../../fixtures/arc/suite.js';
import { hasShared, SHARED_ABSENT } from '../../shared-data.js';

interface Entry {
  scenario: string;
  name: string;
  message: string;
  cv: string;
  txt: Record<string, string>;
}

function loadEntries(): Entry[] {
  return loadArcSuite().flatMap((scenario) =>
    scenario.tests.map((t) => ({
      scenario: scenario.description,
      name: t.name,
      message: t.message,
      cv: t.cv,
      txt: scenario.txt,
    })),
  );
}

const RFC_OVERRIDES = new Map<string, string[]>([
  ['ams_fields_c_na', ['pass', 'fail']],
  ['ams_fields_h_empty', ['pass', 'fail']],
]);

function expected(e: Entry): string[] {
  return RFC_OVERRIDES.get(e.name) ?? [e.cv === '' ? 'fail' : e.cv.toLowerCase()];
}

function suiteResolver(txt: Record<string, string>): KeyResolver {
  const records = new Map(Object.entries(txt).map(([k, v]) => [k.toLowerCase(), v]));
  return async (name) => {
    const v = records.get(name.toLowerCase());
    if (v === undefined) throw Object.assign(new Error(`${name}: NXDOMAIN`), { code: 'ENOTFOUND' });
    return [[v]];
  };
}

if (!hasShared) console.warn(`${SHARED_ABSENT}: the ARC suite test is skipped`);
const entries = hasShared ? loadEntries() : [];

describe.skipIf(!hasShared)('ARC suite (arc-draft-validation-tests.yml) through authenticateMessage', () => {
  it('has the 175 entries of 10 scenarios', () => {
    expect(entries).toHaveLength(175);
    expect(new Set(entries.map((e) => e.scenario)).size).toBe(10);
    expect(entries.filter((e) => e.cv === '')).toHaveLength(3);
  });

  it('gives every entry its expected cv (RFC 8617 where the suite disagrees)', async () => {
    const wrong: string[] = [];
    for (const e of entries) {
      const raw = Buffer.from(e.message.replace(/\r?\n/g, '\r\n'), 'latin1');
      const { arc } = await authenticateMessage(raw, {
        resolver: suiteResolver(e.txt),
        now: new Date('2024-06-01T00:00:00Z'), // t=12345 is 1970: an old seal is not a failure
        headersOnly: false,
      });
      if (!expected(e).includes(arc.result))
        wrong.push(`${e.scenario} / ${e.name}: ${arc.result} (${arc.reason})`);
      // What the report says is consistent with the verdict.
      if (arc.result === 'pass') {
        expect(arc.broken_at, e.name).toBeNull();
        expect(
          arc.chain.every((c) => c.seal.result === 'pass'),
          e.name,
        ).toBe(true);
      }
      if (arc.result === 'fail') expect(arc.reason, e.name).toBeTruthy();
    }
    expect(wrong).toEqual([]);
  }, 120_000);

  it('passes the passing chains on their headers alone (the newest AMS judged without its body)', async () => {
    const passing = entries.filter((e) => e.cv.toLowerCase() === 'pass' && !RFC_OVERRIDES.has(e.name));
    expect(passing.length).toBeGreaterThan(20);
    for (const e of passing) {
      const text = e.message.replace(/\r?\n/g, '\r\n');
      const blank = text.indexOf('\r\n\r\n');
      const headers = blank >= 0 ? text.slice(0, blank + 2) : text;
      const opts = { resolver: suiteResolver(e.txt), now: new Date('2024-06-01T00:00:00Z') };
      const only = await authenticateMessage(Buffer.from(headers, 'latin1'), { ...opts, headersOnly: true });
      expect(only.arc.result, e.name).toBe('pass');
      // The same headers read as a whole message (an empty body) fail wherever the body was signed.
      if (blank >= 0 && text.slice(blank + 4).trim() !== '') {
        const whole = await authenticateMessage(Buffer.from(headers, 'latin1'), {
          ...opts,
          headersOnly: false,
        });
        expect(whole.arc.result, e.name).toBe('fail');
      }
    }
  }, 120_000);
});
