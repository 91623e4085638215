/**
 * The words a message analysis is drawn in (client/message.ts), which the site, the CLI and /mcp
 * share: the four method cards with one line of why, the hops with their delays and which stand
 * out, the Authentication-Results overview; on a judged answer written for these tests
 * (test/fixtures/message/judged.json, held to the route's schema here so it cannot drift from the
 * contract), and the CLI's rendering and the MCP summary of it.
 */
import { readFileSync } from 'node:fs';
import { Value } from 'typebox/value';
import { describe, expect, it } from 'vitest';
import { message } from '../../../src/cli/render/message.js';
import { createStyle } from '../../../src/cli/style.js';
import {
  authResultsOverview,
  delayText,
  hopTlsText,
  hopViews,
  messageVerdict,
  methodCards,
} from '../../../src/client/message.js';
import { type MessageAnalysis, MessageAnalysisSchema } from '../../../src/features/message/message.schema.js';
import { summaries } from '../../../src/features/tools/summaries.js';

const ESC = String.fromCharCode(27);
const judged = JSON.parse(
  readFileSync(new URL('../../fixtures/message/judged.json', import.meta.url), 'utf8'),
) as MessageAnalysis;
const hop = judged.received[1]!;

describe('the message analysis in words', () => {
  it('the fixture is an answer the route could give', () => {
    expect([...Value.Errors(MessageAnalysisSchema, judged)]).toEqual([]);
  });

  it('the verdict is the API’s sentence in its status’s tone', () => {
    expect(messageVerdict(judged)).toEqual({ tone: 'bad', text: judged.verdict.summary });
    expect(messageVerdict({ verdict: { status: 'authenticated', summary: 'x' } }).tone).toBe('ok');
    expect(messageVerdict({ verdict: { status: 'unknown', summary: 'x' } }).tone).toBe('warn');
  });

  it('four cards, DKIM, ARC, SPF, DMARC, each result in its tone with one line of why', () => {
    expect(methodCards(judged)).toEqual([
      {
        method: 'DKIM',
        result: 'pass',
        tone: 'ok',
        why: 'Signed by list.example (s=lists), not aligned with From (1 other signature too).',
      },
      { method: 'ARC', result: 'pass', tone: 'ok', why: '1 instance, the chain validates.' },
      {
        method: 'SPF',
        result: 'pass',
        tone: 'ok',
        why: '192.0.2.25 is authorized to send mail as bounces@list.example.',
      },
      { method: 'DMARC', result: 'fail', tone: 'bad', why: judged.dmarc.summary },
    ]);
  });

  it('DKIM without a passing signature is the first one’s result and reason; none without any', () => {
    const failing = { ...judged, dkim: [judged.dkim[1]!] };
    expect(methodCards(failing)[0]).toEqual({
      method: 'DKIM',
      result: 'fail',
      tone: 'bad',
      why: `sender.example (s=s2026): ${judged.dkim[1]!.reason}.`,
    });
    expect(methodCards({ ...judged, dkim: [] })[0]).toMatchObject({ result: 'none', tone: 'muted' });
  });

  it('SPF not checked says why (the envelope’s own words); a broken ARC chain says where', () => {
    const noSpf = { ...judged, spf: null, envelope: { ...judged.envelope, why: 'No address.' } };
    expect(methodCards(noSpf)[2]).toEqual({
      method: 'SPF',
      result: 'not checked',
      tone: 'muted',
      why: 'No address.',
    });
    const broken = {
      ...judged,
      arc: { ...judged.arc, result: 'fail' as const, broken_at: 2, reason: 'seal 2 fails' },
    };
    expect(methodCards(broken)[1]).toEqual({
      method: 'ARC',
      result: 'fail',
      tone: 'bad',
      why: 'Broken at instance 2: seal 2 fails.',
    });
  });

  it('hops: delays in words, the largest (a minute or more) and any within half of it stand out', () => {
    const views = hopViews(judged.received);
    expect(views.map((v) => [v.delay, v.slow])).toEqual([
      ['4 s', false],
      ['6 min', true],
      ['6 s', false],
      [null, false],
    ]);
    // A path of seconds has no delay worth pointing at.
    const quick = judged.received.map((h) => ({ ...h, delay_seconds: h.delay_seconds === null ? null : 5 }));
    expect(hopViews(quick).some((v) => v.slow)).toBe(false);
    expect(delayText(-120)).toBe('2 min earlier (clocks disagree)');
    expect(hopTlsText(hop)).toBe('TLSv1.3 TLS_AES_256_GCM_SHA384');
    expect(hopTlsText(judged.received[0]!)).toBeNull();
  });

  it('Authentication-Results: how many are trusted, and that a trusted one disagrees', () => {
    expect(authResultsOverview(judged.authentication_results)).toBe(
      '2 headers: 1 trusted, 1 not (they may be forged). 1 trusted header disagrees with netdiag’s own verdicts.',
    );
    expect(authResultsOverview([])).toBe('The message carries no Authentication-Results header.');
  });

  it('the CLI: the verdict, the cards, the signatures, the path with its slow hop, no colour without a terminal', () => {
    const text = message(judged, createStyle(false)).join('\n');
    expect(text).not.toContain(ESC);
    expect(text.split('\n')[0]).toBe(`NOT AUTHENTICATED  ${judged.verdict.summary}`);
    expect(text).toMatch(/\nDKIM {3}pass {8}Signed by list\.example/);
    expect(text).toMatch(/\nDMARC {2}fail {8}DMARC fails for sender\.example/);
    expect(text).toMatch(
      /\n1\s+sender\.example\s+s2026\s+ed25519-sha256\s+fail\s+mismatch\s+yes\s+ed25519 256 bits/,
    );
    expect(text).toContain('1: the body hash does not match');
    expect(text).toMatch(/\nTaken from\s+Received header 1\n/);
    expect(text).toMatch(
      /\n1\s+mail\.list\.example \[192\.0\.2\.25\]\s+mx\.receiver\.example\s+ESMTPS\s+TLSv1\.3 TLS_AES_256_GCM_SHA384\s+2026-11-28 10:04 UTC\s+6 min\n/,
    );
    expect(text).toMatch(/not trusted {2}mx\.receiver\.example: dmarc=pass/);
    expect(text).toContain('disagrees dkim=pass for sender.example');
    expect(text).toContain('DNS lookups (5)');
    // With colour, the slow delay is bold and amber.
    const coloured = message(judged, createStyle(true)).join('\n');
    expect(coloured).toMatch(new RegExp(`${ESC}\\[1m${ESC}\\[\\d+m6 min`));
  });

  it('the MCP summary leads with the verdict sentence, then the methods and who connected', () => {
    const summary = summaries.message_analyze(judged);
    expect(summary.startsWith(judged.verdict.summary)).toBe(true);
    expect(summary).toContain('DKIM pass, ARC pass, SPF pass, DMARC fail.');
    expect(summary).toContain(
      'connecting: 192.0.2.25 (HELO mail.list.example), MAIL FROM <bounces@list.example> from Received header 1',
    );
    expect(summary).toContain('4 findings, first: high: DKIM fails');
  });
});
