/**
 * parseMessage and headerFrom: header fields and body of a message as people
 * give it (bare LF, headers alone, folded fields, an mbox line), and the
 * RFC5322.From address DMARC protects, through display names, comments,
 * groups and encoded-words.
 */
import { describe, expect, it } from 'vitest';
import { decodeEncodedWords, parseAddressList } from '../../../src/message/address-list.js';
import { headerFrom, parseMessage, unfold } from '../../../src/message/headers.js';

const CRLF_MESSAGE =
  'Received: from a.example (a.example [192.0.2.1])\r\n' +
  '\tby b.example with ESMTP id 1; Tue, 2 Jan 2024 10:00:00 +0000\r\n' +
  'Subject: a folded\r\n' +
  '  subject line\r\n' +
  'From: Alice <alice@example.com>\r\n' +
  '\r\n' +
  'Hello.\r\n';

describe('parseMessage', () => {
  it('splits fields (name, raw value with folding, unfolded value, index) and the body', () => {
    const m = parseMessage(Buffer.from(CRLF_MESSAGE));
    expect(m.fields.map((f) => [f.index, f.name, f.key])).toEqual([
      [0, 'Received', 'received'],
      [1, 'Subject', 'subject'],
      [2, 'From', 'from'],
    ]);
    const subject = m.fields[1]!;
    expect(subject.rawValue).toBe(' a folded\r\n  subject line');
    expect(subject.raw).toBe('Subject: a folded\r\n  subject line');
    expect(subject.value).toBe('a folded  subject line');
    expect(m.fields[0]!.value).toBe(
      'from a.example (a.example [192.0.2.1])\tby b.example with ESMTP id 1; Tue, 2 Jan 2024 10:00:00 +0000',
    );
    expect(m.body?.toString()).toBe('Hello.\r\n');
    expect(m.normalized.equals(Buffer.from(CRLF_MESSAGE))).toBe(true);
    expect(m.notes).toEqual([]);
  });

  it('reads bare LF line ends as CRLF, in the fields, the body and the normalized message', () => {
    const m = parseMessage(CRLF_MESSAGE.replaceAll('\r\n', '\n'));
    expect(m.normalized.toString()).toBe(CRLF_MESSAGE);
    expect(m.fields[1]!.rawValue).toBe(' a folded\r\n  subject line');
    expect(m.body?.toString()).toBe('Hello.\r\n');
    expect(m.notes.join(' ')).toMatch(/Bare LF/);
  });

  it('keeps a CRLF message byte for byte, 8-bit octets included', () => {
    const raw = Buffer.concat([
      Buffer.from('Subject: caf'),
      Buffer.from([0xc3, 0xa9]),
      Buffer.from('\r\n\r\nb\xff\r\n', 'latin1'),
    ]);
    const m = parseMessage(raw);
    expect(m.normalized.equals(raw)).toBe(true);
    expect(m.fields[0]!.value).toBe('café');
    expect(Buffer.from(m.fields[0]!.raw, 'latin1').equals(raw.subarray(0, raw.indexOf('\r\n')))).toBe(true);
    expect(m.body!.equals(Buffer.from('b\xff\r\n', 'latin1'))).toBe(true);
  });

  it('takes headers without a blank line as headers only', () => {
    const m = parseMessage('From: a@example.com\nTo: b@example.org');
    expect(m.fields.map((f) => f.name)).toEqual(['From', 'To']);
    expect(m.body).toBeNull();
    expect(m.notes.join(' ')).toMatch(/No blank line/);
  });

  it('takes a blank line followed only by line ends and white space as headers only', () => {
    const m = parseMessage('From: a@example.com\n\n\n  \n');
    expect(m.body).toBeNull();
    expect(m.notes.join(' ')).toMatch(/Nothing follows the headers/);
    expect(parseMessage('From: a@example.com\n\n.\n').body?.toString()).toBe('.\r\n');
  });

  it('leaves out leading blank lines and an mbox "From " line', () => {
    const m = parseMessage('\n\nFrom alice@example.com Tue Jan  2 10:00:00 2024\nFrom: a@example.com\n\nx\n');
    expect(m.fields.map((f) => f.value)).toEqual(['a@example.com']);
    expect(m.normalized.toString()).toBe('From: a@example.com\r\n\r\nx\r\n');
    expect(m.notes).toHaveLength(3);
  });

  it('ends the header section at a line that is no header field, as an MTA does', () => {
    const m = parseMessage('From: a@example.com\r\nthis is body text\r\nmore\r\n');
    expect(m.fields).toHaveLength(1);
    expect(m.body?.toString()).toBe('this is body text\r\nmore\r\n');
    expect(m.notes.join(' ')).toMatch(/Line 2 is not a header field/);
  });

  it('accepts white space before the colon (obs-optional) and never throws on garbage', () => {
    expect(parseMessage('Subject : hi\r\n\r\n').fields[0]).toMatchObject({ name: 'Subject', value: 'hi' });
    for (const junk of ['', '\r\n', ':', ' leading', '\0\0\0', 'a:b\r\n\tc\r\n\r\n']) {
      expect(() => parseMessage(junk)).not.toThrow();
    }
  });

  it('unfolds only a CRLF followed by white space', () => {
    expect(unfold('a\r\n b\r\nc')).toBe('a b\r\nc');
  });
});

function from(value: string) {
  return headerFrom(parseMessage(`From: ${value}\r\n\r\nx`).fields);
}

describe('headerFrom', () => {
  it.each([
    ['alice@example.com', 'alice@example.com', null],
    ['<alice@example.com>', 'alice@example.com', null],
    ['Alice Example <alice@example.com>', 'alice@example.com', 'Alice Example'],
    ['"Example, Alice" <alice@example.com>', 'alice@example.com', 'Example, Alice'],
    ['alice@example.com (Alice, in a comment)', 'alice@example.com', null],
    ['Alice (the <real> one) <alice@Example.COM.>', 'alice@Example.COM.', 'Alice'],
    ['John Q. Public <jqp@example.com>', 'jqp@example.com', 'John Q. Public'],
    ['"john doe"@example.com', '"john doe"@example.com', null],
    ['<@relay.example:alice@example.com>', 'alice@example.com', null],
    ['Friends: alice@example.com;', 'alice@example.com', null],
  ])('%s → %s', (value, address, name) => {
    const f = from(value);
    expect(f.address).toBe(address);
    expect(f.name).toBe(name);
    expect(f.domain).toBe('example.com');
  });

  it('decodes encoded-words in the display name only, never taking an address from it', () => {
    const f = from('=?utf-8?Q?ceo=40bank.example?= <x@evil.example>');
    expect(f.address).toBe('x@evil.example');
    expect(f.domain).toBe('evil.example');
    expect(f.name).toBe('ceo@bank.example');
    expect(from('=?ISO-8859-1?B?SvZyZw==?= =?UTF-8?Q?_M=C3=BCller?= <j@example.com>').name).toBe(
      'Jörg Müller',
    );
  });

  it('notes several addresses and says when their domains differ', () => {
    const f = from('a@example.com, b@example.org');
    expect(f.address).toBe('a@example.com');
    expect(f.addresses).toEqual(['a@example.com', 'b@example.org']);
    expect(f.notes.join(' ')).toMatch(/2 addresses .* different domains/);
    expect(from('a@example.com, b@example.com').notes.join(' ')).not.toMatch(/different domains/);
  });

  it('notes several From fields and reads the first', () => {
    const f = headerFrom(parseMessage('From: a@example.com\r\nFrom: b@example.org\r\n\r\nx').fields);
    expect(f.address).toBe('a@example.com');
    expect(f.notes.join(' ')).toMatch(/2 From fields/);
  });

  it('has no address for an empty group, no From, or an address literal domain', () => {
    expect(from('undisclosed-recipients:;')).toMatchObject({ address: null, domain: null });
    expect(headerFrom([]).notes).toEqual(['The message has no From field.']);
    expect(from('a@[192.0.2.1]')).toMatchObject({ address: 'a@[192.0.2.1]', domain: null });
    expect(from('Just A Name')).toMatchObject({ address: null });
  });
});

describe('address list and encoded-words', () => {
  it('reads groups among mailboxes', () => {
    expect(
      parseAddressList('A <a@example.com>, Team: b@example.org, "C" <c@example.net>;, d@example.com').map(
        (m) => m.address,
      ),
    ).toEqual(['a@example.com', 'b@example.org', 'c@example.net', 'd@example.com']);
  });

  it('leaves an unknown charset or ordinary text alone', () => {
    expect(decodeEncodedWords('=?x-unknown?Q?a?= plain =?')).toBe('=?x-unknown?Q?a?= plain =?');
    expect(decodeEncodedWords('=?utf-8?B?w6k=?= and =?utf-8?q?=C3=A9?=')).toBe('é and é');
  });
});
