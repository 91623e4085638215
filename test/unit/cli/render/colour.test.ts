/**
 * Colour is applied last (issue 31): every escape code a renderer writes is a whole SGR sequence
 * (`ESC[<digits;>m`), and the coloured page is the plain page with codes added. Upper-casing a
 * styled badge once turned `ESC[31m` into `ESC[31M` (CSI Delete Line), and the mail servers'
 * FAIL headline vanished on a terminal.
 */
import { stripVTControlCharacters } from 'node:util';
import { describe, expect, it } from 'vitest';
import { mailTls } from '../../../../src/cli/render/mail-tls.js';
import { spf } from '../../../../src/cli/render/spf.js';
import { createStyle } from '../../../../src/cli/style.js';
import type { MailTlsResponse } from '../../../../src/features/mail-tls/mail-tls.schema.js';
import type { SpfResponse } from '../../../../src/features/spf/spf.schema.js';

const ESC = '\u001b';
/** Every CSI sequence: parameters, intermediates, one final byte. */
const CSI = new RegExp(`${ESC}\\[[0-?]*[ -/]*[@-~]`, 'g');

const mail: MailTlsResponse = {
  domain: 'harbourpost.example',
  status: 'fail',
  summary: 'mx1.harbourpost.example offers no STARTTLS.',
  mx: { state: 'present', hosts: 1 },
  mta_sts: { mode: null, mx: [], state: 'none' },
  hosts: [
    {
      host: 'mx1.harbourpost.example',
      preference: 10,
      status: 'fail',
      addresses: [],
      dane: null,
      mta_sts: { mode: null, matches_policy: null, deliverable: null },
      findings: [{ severity: 'error', message: 'No STARTTLS.', rfc: 'RFC 3207' }],
    },
  ],
  findings: [],
  helo_name: 'netdiag.example',
  checked_at: '2026-11-28T00:00:00.000Z',
  source: 'SMTP',
  source_id: 'smtp',
  providers_tried: [],
};

const spfFail = {
  domain: 'sender.example',
  ip: '192.0.2.1',
  sender: 'a@sender.example',
  helo: null,
  identity: 'mailfrom',
  result: 'softfail',
  lookups: 0,
  lookup_limit: 10,
  void_lookups: 0,
  void_lookup_limit: 2,
  trace: [],
  received_spf: 'softfail',
  authentication_results: 'spf=softfail',
  dns_queries: 1,
  checked_at: '2026-11-28T00:00:00.000Z',
  source: 'DNS',
  source_id: 'dns',
  providers_tried: [],
} satisfies SpfResponse;

function page(lines: string[]): string {
  return lines.join('\n');
}

describe('netdiag colour: styled last', () => {
  it.each([
    ['mail-tls', () => page(mailTls(mail, createStyle(true))), () => page(mailTls(mail, createStyle(false)))],
    ['spf', () => page(spf(spfFail, createStyle(true))), () => page(spf(spfFail, createStyle(false)))],
  ])('%s: only whole SGR sequences, and the plain page beneath them', (_name, coloured, plain) => {
    const text = coloured();
    const sequences = text.match(CSI) ?? [];
    expect(sequences.length).toBeGreaterThan(0);
    for (const s of sequences) expect(s).toMatch(new RegExp(`^${ESC}\\[[0-9;]*m$`));
    expect(text.replace(CSI, '')).not.toContain(ESC);
    expect(stripVTControlCharacters(text)).toBe(plain());
  });

  it('mail-tls: the FAIL headline bold and red, in capitals', () => {
    const first = mailTls(mail, createStyle(true))[0] ?? '';
    expect(first).toBe(`${ESC}[1m${ESC}[31mFAIL${ESC}[39m${ESC}[22m  ${mail.summary}`);
    expect(first).not.toMatch(new RegExp(`${ESC}\\[\\d+M`));
  });
});
