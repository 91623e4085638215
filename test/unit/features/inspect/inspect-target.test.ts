/** The inspect inputs: `target` (name or IP literal, never a URL) and `ip` (public address only). */
import { describe, expect, it } from 'vitest';
import { AppError } from '../../../../src/errors.js';
import { parseInspectTarget, parseRoutingIp } from '../../../../src/features/inspect/inspect-target.js';
import { thrownBy } from '../../../expect-error.js';

describe('parseInspectTarget', () => {
  it.each([
    ['Example.COM.', { host: 'example.com', literal: false }],
    ['bücher.example', { host: 'xn--bcher-kva.example', literal: false }],
    ['192.0.2.1', { host: '192.0.2.1', literal: true }],
    ['[2001:db8::1]', { host: '2001:db8::1', literal: true }],
    ['2001:DB8:0::1', { host: '2001:db8::1', literal: true }],
    // Alternative IPv4 spellings become the address they are, so the safety check sees it.
    ['0x7f.1', { host: '127.0.0.1', literal: true }],
    ['2130706433', { host: '127.0.0.1', literal: true }],
    ['[::ffff:127.0.0.1]', { host: '::ffff:7f00:1', literal: true }],
  ])('%s', (input, expected) => {
    expect(parseInspectTarget(input)).toEqual(expected);
  });

  it.each([
    ['', /must not be empty/],
    ['https://example.com/', /not a URL/],
    ['example.com/path', /not a URL/],
    ['user@example.com', /not a URL/],
    ['example.com:8080', /must not carry a port/],
    ['[2001:db8::1]:443', /must not carry a port/],
    ['exa mple.com', /not a valid domain name/],
    ['-bad.example', /invalid label/],
    ['1.2.3.256', /not a valid IPv4 address/],
    ['fe80::1%eth0', /zone ids/],
  ])('rejects %j with a 400', (input, message) => {
    const caught = thrownBy(() => parseInspectTarget(input), AppError);
    expect(caught.statusCode).toBe(400);
    expect(caught.message).toMatch(message);
  });
});

describe('parseRoutingIp', () => {
  it.each([
    ['193.0.6.139', '193.0.6.139'],
    ['[2001:67C:2E8::2]', '2001:67c:2e8::2'],
  ])('%s → %s', (input, expected) => {
    expect(parseRoutingIp(input)).toBe(expected);
  });

  it.each([
    ['10.0.0.1', /not a public address \(private-use, RFC 1918\)/],
    ['127.0.0.1', /not a public address/],
    ['::ffff:10.0.0.1', /not a public address/],
    ['169.254.169.254', /not a public address/],
    ['0x7f.1', /must be an IPv4 or IPv6 address/],
    ['example.com', /must be an IPv4 or IPv6 address/],
    ['fe80::1%eth0', /zone id/],
  ])('rejects %s with a 400', (input, message) => {
    expect(() => parseRoutingIp(input)).toThrow(message);
    try {
      parseRoutingIp(input);
    } catch (err) {
      expect((err as AppError).statusCode).toBe(400);
    }
  });
});
