/**
 * The TLS scan's one sentence (client/verdicts.ts tlsScanVerdict), said alike by the site, the
 * CLI and /mcp, and the per-protocol overview both draw; on a judged answer written for these
 * tests (test/fixtures/tls-scan/judged-legacy.json, held to the route's schema here so it
 * cannot drift from the contract), and the CLI's rendering of it, findings and ratings included.
 */
import { readFileSync } from 'node:fs';
import { Value } from 'typebox/value';
import { describe, expect, it } from 'vitest';
import { tlsScan } from '../../../src/cli/render/tls-scan.js';
import { createStyle } from '../../../src/cli/style.js';
import { scanProtocols, tlsScanVerdict } from '../../../src/client/verdicts.js';
import { preferenceText, protocolText, scanFeatureRows } from '../../../src/client/words.js';
import {
  type TlsScanResponse,
  TlsScanResponseSchema,
} from '../../../src/features/tls-scan/tls-scan.schema.js';
import { summaries } from '../../../src/features/tools/summaries.js';

const ESC = String.fromCharCode(27);
const judged = JSON.parse(
  readFileSync(new URL('../../fixtures/tls-scan/judged-legacy.json', import.meta.url), 'utf8'),
) as TlsScanResponse;
type Ok = Extract<TlsScanResponse['scan'], { status: 'ok' }>;
const scan = judged.scan as Ok;
const withScan = (fields: Partial<Ok>): Ok => ({ ...scan, ...fields });

describe('the TLS scan verdict', () => {
  it('the fixture is an answer the route could give', () => {
    expect([...Value.Errors(TlsScanResponseSchema, judged)]).toEqual([]);
  });

  it('says the grade, the Mozilla level met and the NCSC-NL class in one sentence, in the grade’s tone', () => {
    expect(tlsScanVerdict(withScan({ complete: true }))).toEqual({
      tone: 'warn',
      text: "legacy.example (HTTPS) is graded C: it meets Mozilla's old configuration, and the NCSC-NL guidelines rate it insufficient.",
    });
    const best = withScan({
      grade: 'A+',
      complete: true,
      ratings: {
        mozilla: { version: '5.7', meets: 'modern', gaps: [] },
        ncsc: { version: '2025-05', overall: 'good', protocols: [], reasons: [] },
      },
    });
    expect(tlsScanVerdict(best)).toEqual({
      tone: 'ok',
      text: "legacy.example (HTTPS) is graded A+: it meets Mozilla's modern configuration, and the NCSC-NL guidelines rate it good.",
    });
  });

  it('says when no Mozilla configuration is met, when the certificate is not trusted, and when the scan ended early', () => {
    const text = tlsScanVerdict(
      withScan({
        grade: 'T',
        service: 'smtp',
        ratings: { ...scan.ratings, mozilla: { version: '5.7', meets: null, gaps: [] } },
      }),
    );
    expect(text.tone).toBe('bad');
    expect(text.text).toBe(
      'legacy.example (SMTP with STARTTLS) is graded T (the certificate is not trusted): it meets no Mozilla configuration, ' +
        'and the NCSC-NL guidelines rate it insufficient. The scan ended early: see the notes.',
    );
    expect(tlsScanVerdict(withScan({ grade: 'F' })).tone).toBe('bad');
  });

  it('says why there is no scan, naming the stage', () => {
    expect(
      tlsScanVerdict({
        status: 'error',
        target: 'mx.example',
        service: 'smtp',
        error: 'mx.example (192.0.2.25) port 25: connection refused',
        stage: 'connect',
        handshakes: 1,
        elapsed_ms: 12,
      }),
    ).toEqual({
      tone: 'bad',
      text: 'mx.example (SMTP with STARTTLS) could not be scanned: mx.example (192.0.2.25) port 25: connection refused (at connect).',
    });
  });

  it('draws each protocol newest first in its NCSC class’s tone, with whose order picks its suites', () => {
    const views = scanProtocols(scan);
    expect(views.map((p) => [p.text, p.offered, p.tone, p.preference, p.suites.length])).toEqual([
      ['TLS 1.3', true, 'ok', "the client's order", 2],
      ['TLS 1.2', true, 'ok', "the server's order, ChaCha20 for clients that prefer it", 4],
      ['TLS 1.1', false, 'muted', null, 0],
      ['TLS 1.0', true, 'warn', 'cannot tell (one suite)', 1],
      ['SSL 3.0', false, 'muted', null, 0],
      ['SSL 2.0', false, 'muted', null, 0],
    ]);
    // The suites keep the answer's order (the server's) within their protocol.
    expect(views[1]?.suites.map((s) => s.name).at(-1)).toBe('TLS_RSA_WITH_3DES_EDE_CBC_SHA');
    expect(protocolText('SSLv3')).toBe('SSL 3.0');
    expect(preferenceText(true, false)).toBe("the server's order");
  });

  it('says each feature in words and tone; what could not be told is a dash', () => {
    const rows = scanFeatureRows({ ...scan.features, heartbeat: null });
    expect(rows.find((r) => r.name === 'TLS_FALLBACK_SCSV')).toEqual({
      name: 'TLS_FALLBACK_SCSV',
      text: 'not honoured',
      tone: 'warn',
    });
    expect(rows.find((r) => r.name === 'ALPN')?.text).toBe('h2, http/1.1');
    expect(rows.find((r) => r.name === 'Heartbeat extension')).toMatchObject({ text: '—', tone: 'muted' });
  });

  it('opens the MCP summary and the CLI page with the same sentence', () => {
    const sentence = tlsScanVerdict(scan).text;
    expect(
      summaries
        .tls_scan(judged)
        .startsWith(`${sentence} Protocols: TLSv1.3, TLSv1.2, TLSv1; 7 cipher suites`),
    ).toBe(true);
    expect(summaries.tls_scan(judged)).toContain('3 findings, first: high: TLS 1.0 is offered');
    const out = tlsScan(judged, createStyle(false));
    expect(out[0]).toBe(`C  ${sentence}`);
  });
});

describe('netdiag tls-scan on a judged answer', () => {
  const out = tlsScan(judged, createStyle(false)).join('\n');

  it('lists the findings with their severity and references, and the ratings with their reasons', () => {
    expect(out).toContain('\nFindings\nhigh TLS 1.0 is offered: it is deprecated. (RFC 8996)\n');
    expect(out).toContain(
      'medium 3DES (TLS_RSA_WITH_3DES_EDE_CBC_SHA) is accepted: Sweet32. (CVE-2016-2183, NCSC-NL TLS guidelines 2025-05)',
    );
    expect(out).toContain(
      '\nRatings\nMozilla (5.7): meets old\n  not intermediate: TLS 1.0 is offered; TLS_RSA_WITH_3DES_EDE_CBC_SHA is not in the intermediate list\n  not modern: TLS 1.2 is offered\nNCSC-NL (2025-05): insufficient\n  TLS_RSA_WITH_3DES_EDE_CBC_SHA is insufficient\n',
    );
  });

  it('marks the hybrid group, the DHE size, the staple and the server without SNI; dates as the site writes them', () => {
    expect(out).toContain(
      '\nKey exchange\nX25519MLKEM768 (post-quantum hybrid)  x25519  ffdhe2048\nDHE: 2048 bits (ffdhe2048)\n',
    );
    expect(out).toContain('Without SNI: no certificate (the server closed the connection without SNI)');
    expect(out).toMatch(
      /\nOCSP stapling\nStaple {2}good\nValid {3}2026-11-28 10:00 UTC → 2026-12-05 10:00 UTC\n/,
    );
    expect(out).toContain('\nNotes\nThe scan ended early: the handshake budget was spent');
    expect(out).toContain('150 handshakes of at most 150, 4.3 s to 192.0.2.80 port 443 (ended early).');
    expect(out).not.toMatch(/\d{4}-\d\d-\d\dT\d\d:/);
  });

  it('colours a suite by its NCSC class: insufficient red, phase out amber', () => {
    const coloured = tlsScan(judged, createStyle(true)).join('\n');
    // SGR 31 red, 33 yellow (built from text: biome refuses control characters in literals).
    expect(coloured).toMatch(new RegExp(`TLS_RSA_WITH_3DES_EDE_CBC_SHA .*${ESC}\\[31minsufficient`));
    expect(coloured).toMatch(new RegExp(`TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA .*${ESC}\\[33mphase out`));
  });
});
