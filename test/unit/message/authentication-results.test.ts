/**
 * Authentication-Results (RFC 8601) as Gmail, Microsoft and others write
 * them, ARC-Authentication-Results, the trust rule of §5 (only those above
 * the receiving side's Received header), and where they disagree with
 * netdiag's own verdicts.
 */
import { describe, expect, it } from 'vitest';
import {
  disagreements,
  type OwnVerdicts,
  parseAuthenticationResults,
  trustAuthenticationResults,
} from '../../../src/message/authentication-results.js';
import { parseMessage } from '../../../src/message/headers.js';

describe('parseAuthenticationResults', () => {
  it('reads Gmail’s: authserv-id, dkim with header.i/s/b, spf with a comment, dmarc with a comment', () => {
    const ar = parseAuthenticationResults(
      'mx.google.com;\r\n       dkim=pass header.i=@example.com header.s=sel header.b=AbC+/8=;\r\n' +
        '       spf=pass (google.com: domain of bounce@example.com designates 93.184.215.14 as permitted sender) smtp.mailfrom=bounce@example.com;\r\n' +
        '       dmarc=pass (p=NONE sp=NONE dis=NONE) header.from=example.com',
    );
    expect(ar).toEqual({
      authserv_id: 'mx.google.com',
      version: null,
      instance: null,
      results: [
        {
          method: 'dkim',
          result: 'pass',
          properties: { 'header.i': '@example.com', 'header.s': 'sel', 'header.b': 'AbC+/8=' },
        },
        { method: 'spf', result: 'pass', properties: { 'smtp.mailfrom': 'bounce@example.com' } },
        { method: 'dmarc', result: 'pass', properties: { 'header.from': 'example.com' } },
      ],
    });
  });

  it('reads Microsoft’s: no authserv-id, properties without a ptype, stray words, compauth with reason', () => {
    const ar = parseAuthenticationResults(
      'spf=pass (sender IP is 93.184.215.14) smtp.mailfrom=example.com; dkim=fail (body hash did not verify) header.d=example.com;' +
        'dmarc=pass action=none header.from=example.com;compauth=pass reason=100; example.net; ',
    );
    expect(ar.authserv_id).toBe('');
    expect(ar.results).toEqual([
      { method: 'spf', result: 'pass', properties: { 'smtp.mailfrom': 'example.com' } },
      { method: 'dkim', result: 'fail', properties: { 'header.d': 'example.com' } },
      { method: 'dmarc', result: 'pass', properties: { action: 'none', 'header.from': 'example.com' } },
      { method: 'compauth', result: 'pass', properties: { reason: '100' } },
    ]);
  });

  it('reads a version, quoted values, a quoted authserv-id, comments everywhere, a method version, case', () => {
    const ar = parseAuthenticationResults(
      '"mx.example.net" 1; (c) DKIM/1 (x) = (y) Pass reason="signature ok; good" (z) header.d = "example.com" (w); auth=pass smtp.auth="user name"',
    );
    expect(ar).toMatchObject({ authserv_id: 'mx.example.net', version: 1 });
    expect(ar.results).toEqual([
      {
        method: 'dkim',
        result: 'pass',
        properties: { reason: 'signature ok; good', 'header.d': 'example.com' },
      },
      { method: 'auth', result: 'pass', properties: { 'smtp.auth': 'user name' } },
    ]);
  });

  it('reads "none" as no results, and never throws on garbage', () => {
    expect(parseAuthenticationResults('mx.example.net; none')).toMatchObject({
      authserv_id: 'mx.example.net',
      results: [],
    });
    for (const junk of ['', ';', '=', '"', '(', ')', 'a; =b', ';;;=;', 'x; dkim=', 'x; dkim="unterminated']) {
      expect(() => parseAuthenticationResults(junk)).not.toThrow();
    }
    expect(parseAuthenticationResults('x; dkim=').results).toEqual([]);
  });

  it('reads ARC-Authentication-Results’ instance first', () => {
    const ar = parseAuthenticationResults(
      'i=2; mx.example.net; arc=pass (i=1) smtp.remote-ip=93.184.215.14',
      true,
    );
    expect(ar).toMatchObject({ instance: 2, authserv_id: 'mx.example.net' });
    expect(ar.results).toEqual([
      { method: 'arc', result: 'pass', properties: { 'smtp.remote-ip': '93.184.215.14' } },
    ]);
  });
});

const MESSAGE =
  'Authentication-Results: mx.example.net; dkim=pass header.d=example.com header.s=sel\r\n' + // 0: the receiver's
  'Received: from mail.sender.example (mail.sender.example [93.184.215.14]) by mx.example.net with ESMTPS id 1; Tue, 2 Jan 2024 10:00:00 +0000\r\n' +
  'Authentication-Results: mx.example.net; spf=pass smtp.mailfrom=example.com\r\n' + // 1: came with the message
  'Received: from [10.0.0.5] (unknown [10.0.0.5]) by mail.sender.example with ESMTPSA id 2; Tue, 2 Jan 2024 09:59:00 +0000\r\n' +
  'From: a@example.com\r\n\r\nx';

describe('trustAuthenticationResults', () => {
  const fields = parseMessage(MESSAGE).fields;

  it('trusts only those above the receiving side’s Received header', () => {
    const placed = trustAuthenticationResults(fields, 0);
    expect(placed.map((p) => [p.index, p.authserv_id, p.trusted])).toEqual([
      [0, 'mx.example.net', true],
      [1, 'mx.example.net', false],
    ]);
    expect(placed[0]!.why).toMatch(/above Received header 0/);
    expect(placed[1]!.why).toMatch(/^Below Received header 0,.*could have written it/);
    expect(placed[0]!.results[0]).toEqual({
      method: 'dkim',
      result: 'pass',
      properties: { 'header.d': 'example.com', 'header.s': 'sel' },
    });
  });

  it('moves the line with the receiving hop, and trusts none without one', () => {
    expect(trustAuthenticationResults(fields, 1).map((p) => p.trusted)).toEqual([true, true]);
    const none = trustAuthenticationResults(fields, null);
    expect(none.map((p) => p.trusted)).toEqual([false, false]);
    expect(none[0]!.why).toMatch(/No Received header shows where the message entered/);
    expect(trustAuthenticationResults(fields, 7).map((p) => p.trusted)).toEqual([false, false]);
  });
});

describe('disagreements', () => {
  const ours: OwnVerdicts = {
    dkim: [
      { domain: 'example.com', selector: 'sel', result: 'fail', reason: 'body hash mismatch' },
      { domain: 'esp.example', selector: 's1', result: 'pass' },
    ],
    spf: 'softfail',
    dmarc: 'fail',
    arc: null,
  };
  const header = (value: string) => parseAuthenticationResults(value);

  it('says where a dkim result differs for the same d= and s=', () => {
    expect(
      disagreements(header('mx; dkim=pass header.i=@example.com header.s=sel header.b=x'), ours),
    ).toEqual(['says dkim=pass for example.com (s=sel); netdiag: fail (body hash mismatch)']);
    expect(disagreements(header('mx; dkim=pass header.d=esp.example header.s=s1'), ours)).toEqual([]);
  });

  it('says when the header names a signature netdiag did not find, or says none when there are some', () => {
    expect(disagreements(header('mx; dkim=pass header.d=other.example'), ours)).toEqual([
      'says dkim=pass for other.example; netdiag: no such signature in the message',
    ]);
    expect(disagreements(header('mx; dkim=none'), ours)).toEqual([
      'says dkim=none; netdiag: 2 signature(s) found',
    ]);
    expect(disagreements(header('mx; dkim=none'), { ...ours, dkim: [] })).toEqual([]);
  });

  it('compares spf and dmarc, skips what netdiag did not judge, and reads old and Microsoft words', () => {
    expect(
      disagreements(
        header('mx; spf=pass smtp.mailfrom=example.com; dmarc=pass header.from=example.com; arc=fail'),
        ours,
      ),
    ).toEqual([
      'says spf=pass for example.com; netdiag: softfail',
      'says dmarc=pass for example.com; netdiag: fail',
    ]);
    expect(
      disagreements(header('mx; spf=hardfail; dmarc=bestguesspass'), { ...ours, spf: 'fail', dmarc: 'none' }),
    ).toEqual([]);
    expect(disagreements(header('mx; spf=softfail; dmarc=fail; compauth=fail'), ours)).toEqual([]);
  });
});
