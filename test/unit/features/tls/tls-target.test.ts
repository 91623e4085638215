import { describe, expect, it } from 'vitest';
import { AppError } from '../../../../src/errors.js';
import { parseTlsTarget } from '../../../../src/features/tls/tls-target.js';
import { thrownBy } from '../../../expect-error.js';

describe('parseTlsTarget', () => {
  it.each([
    ['example.com', 'example.com', false],
    ['  Example.COM.  ', 'example.com', false],
    ['example.com:443', 'example.com', false],
    ['https://example.com/some/path?q=1#x', 'example.com', false],
    ['https://example.com:443/', 'example.com', false],
    ['http://example.com/', 'example.com', false],
    ['bücher.example', 'xn--bcher-kva.example', false],
    ['_acme.example.com', '_acme.example.com', false],
    ['192.0.2.1', '192.0.2.1', true],
    ['192.0.2.1:443', '192.0.2.1', true],
    ['3221225985', '192.0.2.1', true], // the integer spelling, read the way inet_aton reads it
    ['2001:db8::1', '2001:db8::1', true],
    ['[2001:DB8::1]', '2001:db8::1', true],
    ['[2001:db8::1]:443', '2001:db8::1', true],
    ['https://[2001:db8::1]/', '2001:db8::1', true],
  ])('%j → %s', (input, host, literal) => {
    expect(parseTlsTarget(input)).toEqual({ host, literal });
  });

  it.each([
    ['', 'must not be empty'],
    ['example.com:8443', 'port 8443'],
    ['example.com:80', 'port 80'],
    ['example.com:', 'invalid port'],
    ['[2001:db8::1]:22', 'port 22'],
    ['https://example.com:8443/', 'port 8443'],
    ['ftp://example.com/', 'scheme ftp'],
    ['https://u:p@example.com/', 'user:password'],
    ['example.com/path', 'must be a host name'],
    ['exa mple.com', 'must be a host name'],
    ['user@example.com', 'must be a host name'],
    ['-bad-.example', 'invalid label'],
    ['1.2.3.256', 'not a valid IPv4'],
    ['fe80::1%eth0', 'zone'],
  ])('%j is a 400 naming target (%s)', (input, why) => {
    const error = thrownBy(() => parseTlsTarget(input), AppError);
    expect(error).toMatchObject({ statusCode: 400, code: 'bad_request' });
    expect(error.message).toMatch(/^target /);
    expect(error.message).toContain(why);
  });
});
