import { describe, expect, it } from 'vitest';
import { AppError } from '../../../../src/errors.js';
import { parseGlobalDnsTarget } from '../../../../src/features/global-dns/global-dns-target.js';

function rejection(fn: () => unknown): AppError {
  try {
    fn();
  } catch (err) {
    if (err instanceof AppError) return err;
    throw err;
  }
  throw new Error('expected a 400');
}

describe('parseGlobalDnsTarget', () => {
  it('normalizes like /api/dns: lower case, trailing dot dropped, IDN to A-labels', () => {
    expect(parseGlobalDnsTarget('Example.COM.', 'A')).toBe('example.com');
    expect(parseGlobalDnsTarget('bücher.example', 'A')).toBe('xn--bcher-kva.example');
  });

  it('admits "_" labels for TXT and CNAME owner names only', () => {
    expect(parseGlobalDnsTarget('_dmarc.example.com', 'TXT')).toBe('_dmarc.example.com');
    expect(parseGlobalDnsTarget('s1._domainkey.example.com', 'CNAME')).toBe('s1._domainkey.example.com');
    expect(rejection(() => parseGlobalDnsTarget('_dmarc.example.com', 'A')).statusCode).toBe(400);
  });

  it.each(['192.0.2.1', '2001:db8::1', '[2001:db8::1]'])(
    'refuses the address %s, naming target',
    (target) => {
      const err = rejection(() => parseGlobalDnsTarget(target, 'A'));
      expect(err.statusCode).toBe(400);
      expect(err.code).toBe('bad_request');
      expect(err.message).toMatch(/^target /);
    },
  );

  it.each(['', '.', 'exa mple.com', 'a..b', `${'a'.repeat(64)}.com`])(
    'refuses %j as a domain name',
    (target) => {
      expect(rejection(() => parseGlobalDnsTarget(target, 'A')).message).toMatch(/^target /);
    },
  );
});
