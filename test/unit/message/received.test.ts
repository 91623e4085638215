/**
 * Received headers as each MTA writes them (hand-made in each one's format,
 * with example names and addresses), malformed ones, the dates of RFC 5322
 * with its obsolete forms, and the delays between hops.
 */
import { describe, expect, it } from 'vitest';
import { parseMailDate } from '../../../src/message/date.js';
import { parseMessage } from '../../../src/message/headers.js';
import { parseReceived, receivedHops } from '../../../src/message/received.js';

/** A Received value as it stands in a message (folded), unfolded the way parseMessage does. */
function hop(value: string) {
  const field = parseMessage(`Received: ${value}\r\n\r\nx`).fields[0]!;
  return parseReceived(field.value, 0);
}

describe('parseReceived: MTA formats', () => {
  it('Postfix with TLS, reverse name and for', () => {
    expect(
      hop(
        'from mail.example.com (mail-out.example.com [192.0.2.1])\r\n' +
          '\t(using TLSv1.3 with cipher TLS_AES_256_GCM_SHA384 (256/256 bits)\r\n' +
          '\t key-exchange X25519 server-signature RSA-PSS (2048 bits) server-digest SHA256)\r\n' +
          '\t(No client certificate requested)\r\n' +
          '\tby mx.example.net (Postfix) with ESMTPS id 4T5XyZ0AbCz9sQ\r\n' +
          '\tfor <rcpt@example.net>; Tue,  2 Jan 2024 10:00:00 +0000 (UTC)',
      ),
    ).toEqual({
      index: 0,
      from: 'mail.example.com',
      from_address: '192.0.2.1',
      from_reverse: 'mail-out.example.com',
      by: 'mx.example.net',
      with: 'ESMTPS',
      tls: { version: 'TLSv1.3', cipher: 'TLS_AES_256_GCM_SHA384' },
      id: '4T5XyZ0AbCz9sQ',
      for: 'rcpt@example.net',
      envelope_from: null,
      time: '2024-01-02T10:00:00Z',
      delay_seconds: null,
    });
  });

  it('Postfix from an unresolved IPv6 client, and a literal HELO', () => {
    const h = hop(
      'from [IPv6:2001:db8::1] (unknown [2001:DB8:0:0::1]) by mx.example.net (Postfix) with ESMTP id 1; 2 Jan 2024 10:00:00 -0500',
    );
    expect(h).toMatchObject({
      from: '[IPv6:2001:db8::1]',
      from_address: '2001:db8::1',
      from_reverse: null,
      tls: null,
    });
    expect(h.time).toBe('2024-01-02T15:00:00Z');
  });

  it('Gmail: reverse with a trailing dot, TLS after for', () => {
    const h = hop(
      'from mail-sor-f41.example.com (mail-sor-f41.example.com. [209.85.220.41])\r\n' +
        '        by mx.google.com with SMTPS id a1-20020a170902e5c100b001d4b5a3b2c4sor1234567plf.12.2024.01.02.02.00.00\r\n' +
        '        for <rcpt@example.net>\r\n' +
        '        (Google Transport Security);\r\n        Tue, 02 Jan 2024 02:00:00 -0800 (PST)',
    );
    expect(h).toMatchObject({
      from: 'mail-sor-f41.example.com',
      from_address: '209.85.220.41',
      from_reverse: 'mail-sor-f41.example.com',
      by: 'mx.google.com',
      with: 'SMTPS',
      tls: { version: null, cipher: null },
      for: 'rcpt@example.net',
      time: '2024-01-02T10:00:00Z',
    });
    const esmtps = hop(
      'from mail.example.com (mail.example.com. [2001:db8::25]) by mx.google.com with ESMTPS id x1si123.45.2024.01.02 ' +
        'for <rcpt@example.net> (version=TLS1_3 cipher=TLS_AES_256_GCM_SHA384 bits=256/256); Tue, 02 Jan 2024 02:00:00 -0800 (PST)',
    );
    expect(esmtps.tls).toEqual({ version: 'TLSv1.3', cipher: 'TLS_AES_256_GCM_SHA384' });
    expect(esmtps.from_address).toBe('2001:db8::25');
  });

  it('Gmail internal hop: by an address, no from', () => {
    expect(
      hop(
        'by 2002:a05:6a10:a0d3:b0:5c4:5ac2:8ed6 with SMTP id x15csp123456pxu;        Tue, 2 Jan 2024 02:00:01 -0800 (PST)',
      ),
    ).toMatchObject({
      from: null,
      from_address: null,
      by: '2002:a05:6a10:a0d3:b0:5c4:5ac2:8ed6',
      with: 'SMTP',
      id: 'x15csp123456pxu',
      time: '2024-01-02T10:00:01Z',
    });
  });

  it('Microsoft Exchange / Outlook.com: bare address, multi-word with, TLS with a comma, via', () => {
    const h = hop(
      'from mail.example.com (192.0.2.7) by BN2PEPF000044A8.mail.protection.outlook.com\r\n (10.167.243.159) with Microsoft SMTP Server (version=TLS1_2,\r\n' +
        ' cipher=TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384) id 15.20.7135.24 via Frontend\r\n Transport; Tue, 2 Jan 2024 10:00:00 +0000',
    );
    expect(h).toMatchObject({
      from: 'mail.example.com',
      from_address: '192.0.2.7',
      from_reverse: null,
      by: 'BN2PEPF000044A8.mail.protection.outlook.com',
      with: 'Microsoft SMTP Server',
      tls: { version: 'TLSv1.2', cipher: 'TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384' },
      id: '15.20.7135.24',
      time: '2024-01-02T10:00:00Z',
    });
    expect(
      hop(
        'from SA1PR12MB5678.namprd12.prod.outlook.com (2603:10b6:806:22c::5) by CH3PR12MB1234.namprd12.prod.outlook.com with HTTPS; Tue, 2 Jan 2024 10:00:02 +0000',
      ),
    ).toMatchObject({
      from: 'SA1PR12MB5678.namprd12.prod.outlook.com',
      from_address: '2603:10b6:806:22c::5',
      with: 'HTTPS',
      tls: null,
    });
  });

  it('Exim 4.9x: verified host name first, helo= and port in the comment, TLS after the protocol, envelope-from', () => {
    const h = hop(
      'from host.example.com ([192.0.2.9]:41234 helo=smtp.example.com)\r\n\tby mx.example.net with esmtps  (TLS1.3) tls TLS_AES_256_GCM_SHA384\r\n' +
        '\t(Exim 4.96)\r\n\t(envelope-from <bounce+abc@example.com>)\r\n\tid 1rKlMn-0001Ab-2c\r\n\tfor rcpt@example.net;\r\n\tTue, 02 Jan 2024 10:00:00 +0000',
    );
    expect(h).toMatchObject({
      from: 'smtp.example.com',
      from_address: '192.0.2.9',
      from_reverse: 'host.example.com',
      by: 'mx.example.net',
      with: 'ESMTPS',
      tls: { version: 'TLSv1.3', cipher: 'TLS_AES_256_GCM_SHA384' },
      id: '1rKlMn-0001Ab-2c',
      for: 'rcpt@example.net',
      envelope_from: 'bounce+abc@example.com',
    });
  });

  it('Exim: HELO equal to the host name, an unresolved client, older TLS, a bounce', () => {
    expect(
      hop(
        'from mail.example.com ([192.0.2.9]) by mx.example.net with esmtp (Exim 4.92) (envelope-from <>) id 1a; 2 Jan 2024 10:00:00 +0000',
      ),
    ).toMatchObject({
      from: 'mail.example.com',
      from_reverse: 'mail.example.com',
      from_address: '192.0.2.9',
      envelope_from: '',
      tls: null,
    });
    expect(
      hop(
        'from [192.0.2.9] (port=50412 helo=client.example) by mx.example.net with esmtps (TLS1.2:ECDHE-RSA-AES256-GCM-SHA384:256) (Exim 4.89) id 1b; 2 Jan 2024 10:00:00 +0000',
      ),
    ).toMatchObject({
      from: 'client.example',
      from_address: '192.0.2.9',
      from_reverse: null,
      tls: { version: 'TLSv1.2', cipher: 'ECDHE-RSA-AES256-GCM-SHA384' },
    });
    expect(
      hop(
        'from user by host.example.net with local (Exim 4.96) (envelope-from <user@host.example.net>) id 1c; 2 Jan 2024 10:00:00 +0000',
      ),
    ).toMatchObject({
      from: 'user',
      from_address: null,
      with: 'local',
      envelope_from: 'user@host.example.net',
    });
  });

  it('Sendmail: version, TLS, may be forged', () => {
    expect(
      hop(
        'from helo.example.com (host.example.com [192.0.2.3] (may be forged))\r\n\tby mx.example.net (8.17.1/8.17.1) with ESMTPS id 40AA0x1a012345\r\n' +
          '\t(version=TLSv1.3 cipher=TLS_AES_256_GCM_SHA384 bits=256 verify=NOT)\r\n\tfor <rcpt@example.net>; Tue, 2 Jan 2024 05:00:00 -0500',
      ),
    ).toMatchObject({
      from: 'helo.example.com',
      from_reverse: 'host.example.com',
      from_address: '192.0.2.3',
      by: 'mx.example.net',
      tls: { version: 'TLSv1.3', cipher: 'TLS_AES_256_GCM_SHA384' },
      id: '40AA0x1a012345',
      time: '2024-01-02T10:00:00Z',
    });
  });

  it('RFC 5321 TCP-info with the address alone: the from clause is HELO, no reverse name', () => {
    expect(
      hop(
        'from client.example ([192.0.2.4]) by mx.example.net with ESMTPSA id 7; Tue, 2 Jan 2024 10:00:00 +0000',
      ),
    ).toMatchObject({
      from: 'client.example',
      from_address: '192.0.2.4',
      from_reverse: null,
      with: 'ESMTPSA',
      tls: { version: null, cipher: null },
    });
  });

  it('qmail and OpenSMTPD', () => {
    expect(
      hop(
        'from unknown (HELO mail.example.com) (192.0.2.5) by mx.example.net with SMTP; 2 Jan 2024 10:00:00 -0000',
      ),
    ).toMatchObject({
      from: 'mail.example.com',
      from_address: '192.0.2.5',
      from_reverse: null,
    });
    expect(hop('(qmail 12345 invoked by uid 89); 2 Jan 2024 10:00:00 -0000')).toMatchObject({
      from: null,
      by: null,
      time: '2024-01-02T10:00:00Z',
    });
    expect(
      hop(
        'from mail.example.com (mail.example.com [192.0.2.6]) by mx.example.net (OpenSMTPD) with ESMTPS id 1a2b3c4d (TLSv1.3:TLS_AES_256_GCM_SHA384:256:NO) for <rcpt@example.net>; Tue, 2 Jan 2024 10:00:00 +0000 (UTC)',
      ),
    ).toMatchObject({
      from_reverse: 'mail.example.com',
      tls: { version: 'TLSv1.3', cipher: 'TLS_AES_256_GCM_SHA384' },
    });
  });

  it('never throws on malformed values; what it cannot read is null', () => {
    for (const junk of [
      '',
      ';',
      '((((',
      'from',
      'from (unclosed [192.0.2.1',
      'by ; ;;',
      'from x (y [999.1.1.1]) by z; not a date',
      ')))(',
    ]) {
      expect(() => hop(junk)).not.toThrow();
    }
    expect(hop('from x (y [999.1.1.1]) by z; not a date')).toMatchObject({
      from: 'x',
      from_address: null,
      by: 'z',
      time: null,
    });
    expect(hop('from x (y [192.0.2.1]) by z')).toMatchObject({ from_address: '192.0.2.1', time: null });
  });
});

describe('receivedHops: order and delays', () => {
  it('gives each hop its delay from the hop below, null without both times, negative skew as is', () => {
    const m = parseMessage(
      'Received: by c.example; Tue, 2 Jan 2024 10:00:30 +0000\r\n' +
        'Received: from a.example by b.example; Tue, 2 Jan 2024 10:00:40 +0000\r\n' + // clock ahead of the hop above
        'Received: from z.example by a.example; Tue, 2 Jan 2024 09:59:00 +0000\r\n' +
        'Received: from y.example by z.example; garbage\r\n' +
        'Subject: s\r\n\r\nx',
    );
    const hops = receivedHops(m.fields);
    expect(hops.map((h) => [h.index, h.by, h.delay_seconds])).toEqual([
      [0, 'c.example', -10],
      [1, 'b.example', 100],
      [2, 'a.example', null],
      [3, 'z.example', null],
    ]);
  });
});

describe('parseMailDate', () => {
  it.each([
    ['Tue, 2 Jan 2024 10:00:00 +0000', '2024-01-02T10:00:00Z'],
    ['Tue,  02 Jan 2024 11:30:00 +0130 (CET)', '2024-01-02T10:00:00Z'],
    ['2 Jan 2024 10:00 GMT', '2024-01-02T10:00:00Z'],
    ['Tue, 2 Jan 24 05:00:00 EST', '2024-01-02T10:00:00Z'],
    ['Sat, 1 Jan 99 10:00:00 UT', '1999-01-01T10:00:00Z'],
    ['1 Jan 103 10:00:00 +0000', '2003-01-01T10:00:00Z'],
    ['Tue, 2 Jan 2024 10:00:00 A', '2024-01-02T10:00:00Z'],
    ['Tue, 2 Jan 2024 10:00:00.123 +0000', '2024-01-02T10:00:00Z'],
    ['Tue Jan  2 10:00:00 2024', '2024-01-02T10:00:00Z'],
    ['31 Feb 2024 10:00:00 +0000', null],
    ['2 Foo 2024 10:00:00 +0000', null],
    ['2 Jan 2024 25:00:00 +0000', null],
    ['yesterday', null],
  ])('%s → %s', (text, iso) => {
    expect(parseMailDate(text)).toBe(iso);
  });
});

describe('parsers on arbitrary text', () => {
  it('end and never throw', async () => {
    const fc = (await import('fast-check')).default;
    const { parseAuthenticationResults } = await import('../../../src/message/authentication-results.js');
    const { headerFrom } = await import('../../../src/message/headers.js');
    const pieces = fc.constantFrom(
      '(',
      ')',
      '[',
      ']',
      '<',
      '>',
      ';',
      '=',
      '"',
      '\\',
      ':',
      ',',
      '@',
      ' ',
      '\r\n',
      '\n',
      'from',
      'by',
      'with',
      'id',
      'for',
      'i=1',
      'a',
      '192.0.2.1',
      '=?utf-8?B?w6k=?=',
      'TLS1_2',
    );
    fc.assert(
      fc.property(
        fc.array(pieces, { maxLength: 40 }).map((a) => a.join('')),
        (text) => {
          parseReceived(text, 0);
          parseMailDate(text);
          parseAuthenticationResults(text, true);
          const m = parseMessage(`From: ${text}\r\nReceived: ${text}\r\n\r\n`);
          headerFrom(m.fields);
          receivedHops(m.fields);
        },
      ),
      { numRuns: 2000 },
    );
  });
});
